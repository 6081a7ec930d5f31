"""The suite's render cache (issue 43): each distinct PDF render once per test run.

WeasyPrint is deterministic (tests/test_render_pdf.py proves it, uncached), and a run rendered
the same inputs again and again: the same certificate from many tests, the same report from
each language's test. So within one run the PDFs that certgen's renderers (certificate,
report, calibration, the site's explainers) make through `html_to_pdf` are kept by the SHA-256
of everything that goes into the render, in the session's folder the xdist workers share, and
made by the first worker that asks (the others wait for it under a lock on that key).

What stays a real render:
- `certgen.render.pdf.html_to_pdf` itself, called directly (the renderer's own tests);
- a render given its own URL fetcher (what it serves and refuses is the point);
- the tests marked `render_uncached` (the determinism tests: a second render, compared);
- every render in a subprocess (`certgen` run as a command), which this process cannot see,
  unless the test starts it with `prelude(folder)` first (`subprocess_render_cache`, the
  kill -9 rebuilds and the read-once builds do); certgen's own pool workers (`--jobs 2`) and
  the tests' Dask workers (`dask_preload`) render through it too (tests/poolcache.py);
- the whole run with CERTGEN_TEST_RENDER_CACHE=0.

What a render logs (WeasyPrint's warnings, which `certgen site` writes to its log) is kept with
the PDF and logged again on a hit; the loggers' levels are part of the key.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from filelock import FileLock

from certgen.render import pdf

RENDERERS = ("certgen.render.certificate", "certgen.render.report", "certgen.render.calibration",
             "certgen.builders.site")
"""The modules that render through `html_to_pdf` (each imported it by name)."""

LOGGERS = ("weasyprint", "fontTools")
"""Whose levels decide what a render logs."""

Render = Callable[..., bytes]


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def on_for_the_run() -> bool:
    """Whether the run renders through the cache at all (CERTGEN_TEST_RENDER_CACHE=0: no)."""
    return os.environ.get("CERTGEN_TEST_RENDER_CACHE", "1") != "0"


class RenderCache:
    """A stand-in for `html_to_pdf` that renders each distinct input once per `folder`."""

    def __init__(self, folder: Path, render: Render = pdf.html_to_pdf,
                 off_switch: Path | None = None) -> None:
        self.folder = folder
        self.render = render
        self.enabled = on_for_the_run()
        self.off_switch = off_switch
        """A file whose presence makes every render real (a pool worker's cache, which cannot
        see the test's `enabled`: `uncached_switch`)."""
        self.hits = 0
        self.renders = 0

    def for_subprocess(self) -> Path | None:
        """The folder a process the test starts renders through (`prelude`), or None while
        this cache is off (a `render_uncached` test, CERTGEN_TEST_RENDER_CACHE=0)."""
        return self.folder if self.enabled else None

    def key(self, html: str, *, lang: str, title: str, author: str,
            attachments: Sequence[tuple[str, bytes, str]] = (), created: dt.datetime | None,
            generator: str | None = None) -> str:
        """SHA-256 of every input of the render, and of what else it reads: the build date
        (SOURCE_DATE_EPOCH), where templates and fonts are, the loggers' levels."""
        digest = hashlib.sha256()
        parts: list[object] = [
            html, lang, title, author, None if created is None else created.isoformat(),
            generator, [(name, hashlib.sha256(data).hexdigest(), description)
                        for name, data, description in attachments],
            os.environ.get("SOURCE_DATE_EPOCH"), str(pdf.templates_dir()), str(pdf.fonts_conf()),
            [logging.getLogger(name).getEffectiveLevel() for name in LOGGERS],
        ]
        digest.update(json.dumps(parts, ensure_ascii=False).encode("utf-8"))
        return digest.hexdigest()

    def __call__(self, html: str, **options: object) -> bytes:
        if not self.enabled or options.get("fetcher") is not None or (
                self.off_switch is not None and self.off_switch.exists()):
            self.renders += 1
            return self.render(html, **options)
        key = self.key(html, **{k: v for k, v in options.items() if k != "fetcher"})  # type: ignore[arg-type]
        made, kept = self.folder / f"{key}.pdf", self.folder / f"{key}.log.json"
        with FileLock(str(self.folder / f"{key}.lock")):
            if made.exists():
                self.hits += 1
                for name, level, message in json.loads(kept.read_text("utf-8")):
                    logging.getLogger(name).log(level, "%s", message)
                return made.read_bytes()
            handler = _Kept()
            loggers = [logging.getLogger(name) for name in LOGGERS]
            for logger in loggers:
                logger.addHandler(handler)
            try:
                out = self.render(html, **options)
            finally:
                for logger in loggers:
                    logger.removeHandler(handler)
            self.renders += 1
            kept.write_text(json.dumps(handler.records), "utf-8")
            partial = made.with_suffix(".partial")
            partial.write_bytes(out)
            partial.replace(made)  # whole or absent, for a worker that reads it next
            return out

    def install(self) -> list[tuple[ModuleType, Render]]:
        """Put this cache in place of `html_to_pdf` in each renderer; returns what to restore."""
        replaced = []
        for name in RENDERERS:
            module = importlib.import_module(name)
            replaced.append((module, module.html_to_pdf))
            module.html_to_pdf = self  # type: ignore[attr-defined]
        return replaced


def restore(replaced: list[tuple[ModuleType, Render]]) -> None:
    for module, render in replaced:
        module.html_to_pdf = render  # type: ignore[attr-defined]


def prelude(folder: Path | None) -> str:
    """Python source that a test's own `python -c` or script runs first, so that the command it
    then runs renders through the run's cache in `folder` ("" for None: real renders)."""
    if folder is None:
        return ""
    return (f"import sys as _sys, pathlib as _pathlib\n"
            f"_sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            f"from rendercache import RenderCache as _RenderCache\n"
            f"_RenderCache(_pathlib.Path({str(folder)!r})).install()\n")


POOL_FOLDER = "CERTGEN_TEST_POOL_RENDER_CACHE"
"""The render cache's folder, for tests/poolcache.py in certgen's pool workers."""


def dask_preload(cache: RenderCache) -> dict[str, object]:
    """LocalCluster keyword arguments that make its worker processes render through the run's
    `cache` (tests/poolcache.py at their start, told the folder), as certgen's own pool
    workers do; none when the cache is off for the whole run. A `render_uncached` test's
    switch file reaches them too (they inherit PYTEST_XDIST_WORKER)."""
    if not on_for_the_run():
        return {}
    return {"preload": [str(Path(__file__).with_name("poolcache.py"))],
            "env": {POOL_FOLDER: str(cache.folder)}}


def uncached_switch(folder: Path) -> Path:
    """The file that turns this xdist worker's pool workers' cache off while it exists."""
    return folder / f"uncached-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
