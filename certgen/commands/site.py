"""`certgen site --out DIR`: the publishable static site (index, explainers, samples, reports).

Shows progress on a terminal (stderr), prints where to open the site when done. Library log
lines (WeasyPrint's notes on CSS it skips, font tools) never reach the terminal: they are
collected, counted, and written to `--log FILE` when asked.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from certgen.builders.site import REPORT_SAMPLES, build_site, repo_examples_dir
from certgen.distribution import load_wheel
from certgen.registry import parse_as_of
from certgen.render.explainers import LANGS, PAGES
from certgen.writer import write_file


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def library_logs(log_file: str | None = None) -> Iterator[list[logging.LogRecord]]:
    """Route every log record raised while building away from the terminal.

    The root logger gets one collecting handler for the duration (its presence also stops a
    library's bare `logging.debug()` from installing a stderr handler behind our back); the
    handlers it had come back afterwards. With `log_file`, the warnings are written there.
    """
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    handler = _Collect()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    try:
        yield handler.records
    finally:
        root.handlers = saved_handlers
        root.setLevel(saved_level)
        if log_file is not None:
            lines = [f"{r.levelname} {r.name}: {r.getMessage()}\n" for r in handler.records]
            write_file(Path(log_file), "".join(lines).encode("utf-8"))


def report_library_logs(records: list[logging.LogRecord], log_file: str | None) -> None:
    """One line on stderr when libraries said anything (nothing at all when they did not)."""
    if not records:
        return
    where = f"written to {log_file}" if log_file else "rerun with --log FILE to read them"
    click.echo(f"{len(records)} rendering notes from libraries were kept off the terminal "
               f"({where}).", err=True)


def run_site(out: str, *, examples: str | None = None, pdf: bool = True,
             log_file: str | None = None, as_of: str | None = None,
             wheel: str | None = None) -> list[str]:
    """Build the site with a progress display when stderr is a terminal; return files written.
    `wheel`: the certgen wheel to publish on the registry (checked first)."""

    day = None if as_of is None else parse_as_of(as_of)
    software = None
    if wheel is not None:
        software = load_wheel(wheel)
    ex = Path(examples) if examples else repo_examples_dir()
    samples = sum(1 for p in ex.iterdir() if (p / "card.yaml").is_file()) if ex.is_dir() else 0
    # samples, reports, the calibration review, the registry, the explainers
    total = samples + len(REPORT_SAMPLES) + 1 + 1 + len(LANGS) * len(PAGES)
    with library_logs(log_file) as records:
        if sys.stderr.isatty():
            with click.progressbar(length=total, label="certgen site", file=sys.stderr,
                                   item_show_func=lambda s: s) as bar:
                def progress(label: str) -> None:
                    bar.current_item = label
                    bar.update(1)

                files = build_site(out, examples=ex, progress=progress, pdf=pdf, as_of=day,
                                   software=software)
        else:
            files = build_site(out, examples=ex, pdf=pdf, as_of=day, software=software)
    report_library_logs(records, log_file)
    return files


WHEEL_OPTION = click.option(
    "--wheel", "wheel", default=None, type=click.Path(dir_okay=False), metavar="FILE",
    help="Publish this certgen wheel on the registry (software/, with its SHA-256) for "
         "customers to verify with; it must be this certgen, file for file (make dist).",
)

LOG_OPTION = click.option(
    "--log", "log_file", default=None, type=click.Path(),
    help="Write the rendering libraries' log lines to this file (they never reach the terminal).",
)


@click.command("site")
@click.option("--out", "out", required=True, type=click.Path(),
              help="Folder to write the site into.")
@click.option("--examples", default=None, type=click.Path(exists=True, file_okay=False),
              help="Folder of sample bundles, fleet.jsonl and compare/ (default: examples/).")
@click.option("--as-of", "as_of", default=None, metavar="YYYY-MM-DD",
              help="The registry's date for the samples' status (default: SOURCE_DATE_EPOCH, "
              "else the samples' issue date; never the clock).")
@WHEEL_OPTION
@LOG_OPTION
def command(out: str, examples: str | None, log_file: str | None, as_of: str | None,
            wheel: str | None) -> None:
    """Build the publishable static site: samples, reports, explainers in EN/RU/PT, an index."""
    files = run_site(out, examples=examples, log_file=log_file, as_of=as_of, wheel=wheel)
    click.echo(f"{len(files)} files written to {out}")
    click.echo(f"Open {Path(out) / 'index.html'} in a browser.")
