"""The suite's render cache (tests/rendercache.py): one real render per distinct input, the
same bytes and the same library log lines on a hit, and real renders wherever the render
itself is the point."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from rendercache import RENDERERS, RenderCache

from certgen.render import pdf

PAGE = "<html><body><p style='overflow-x: auto'>One page.</p></body></html>"
"""A small page WeasyPrint warns about (it ignores overflow-x)."""


def test_each_distinct_input_is_rendered_once_and_given_back_with_its_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = RenderCache(tmp_path)
    caplog.set_level(logging.WARNING, logger="weasyprint")
    first = cache(PAGE, lang="en", title="t", author="a", created=None, fetcher=None)
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("weasyprint")]
    assert first.startswith(b"%PDF-") and any("overflow-x" in m for m in logged), logged
    caplog.clear()
    again = cache(PAGE, lang="en", title="t", author="a", created=None)
    assert again == first and (cache.renders, cache.hits) == (1, 1)
    assert [r.getMessage() for r in caplog.records if r.name.startswith("weasyprint")] == logged
    other = cache(PAGE, lang="en", title="another title", author="a", created=None)
    assert other != first and (cache.renders, cache.hits) == (2, 1)


def test_a_render_with_its_own_fetcher_or_with_the_cache_off_is_real(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path)
    cache(PAGE, lang="en", title="t", author="a", created=None)
    cache(PAGE, lang="en", title="t", author="a", created=None, fetcher=pdf.ConfinedURLFetcher())
    cache.enabled = False
    cache(PAGE, lang="en", title="t", author="a", created=None)
    assert (cache.renders, cache.hits) == (3, 0)


def test_the_key_holds_every_input_and_the_build_date(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as dt

    key = RenderCache(tmp_path).key
    base = {"lang": "en", "title": "t", "author": "a", "created": None}
    keys = {key(PAGE, **base), key(PAGE + " ", **base), key(PAGE, **{**base, "lang": "ru"}),
            key(PAGE, **{**base, "created": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)}),
            key(PAGE, **base, attachments=[("record.json", b"{}", "the record")]),
            key(PAGE, **base, generator="certgen 0.0")}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    keys.add(key(PAGE, **base))
    assert len(keys) == 7


def test_the_renderers_render_through_the_runs_cache(render_cache: RenderCache) -> None:
    import importlib

    assert all(importlib.import_module(name).html_to_pdf is render_cache for name in RENDERERS)
    assert pdf.html_to_pdf is not render_cache  # the renderer's own tests render for real
    assert render_cache.enabled == (os.environ.get("CERTGEN_TEST_RENDER_CACHE", "1") != "0")


@pytest.mark.render_uncached
def test_a_test_marked_render_uncached_renders_for_real(render_cache: RenderCache) -> None:
    assert not render_cache.enabled


def _pool_build(tmp_path: Path, folder: Path, figures: tuple[float, float, float]) -> bool:
    """Build two one-run bundles of these figures with two pool workers (`--jobs 2`); whether
    the render cache holds the PDF they made (this process renders nothing: it waits for its
    workers). Compared by bytes, so what other xdist workers add meanwhile cannot answer."""
    import multiprocessing

    from bundlekit import card, frames_for, run_entry, write_card, write_presentmon

    from certgen.builders.batch import build_many
    from certgen.inputs.lab import load_lab

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server here: certgen's pool spawns, and its workers render for real")
    bundles = []
    for cert_id in ("POOL-1", "POOL-2"):
        write_presentmon(tmp_path / cert_id / "captures" / "r.csv", frames_for(*figures))
        data = card([run_entry("Game", capture="captures/r.csv")])
        data["certificate"]["id"] = cert_id
        bundles.append(str(write_card(tmp_path / cert_id, data)))
    built = build_many(bundles, str(tmp_path / "out"), languages=["en"], fleet=None, draft=False,
                       verify_base=None, jobs=2,
                       lab=load_lab(Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"))
    assert all(not isinstance(result, Exception) for _, result in built), built
    made = (tmp_path / "out" / "POOL-1" / "certificate.en.pdf").read_bytes()
    return any(kept.read_bytes() == made for kept in folder.glob("*.pdf"))


def test_certgens_pool_workers_render_through_the_runs_cache(
        tmp_path: Path, render_cache: RenderCache) -> None:
    """tests/poolcache.py: `--jobs 2` workers (forked by the fork server) keep what they render
    in the run's cache."""
    if not render_cache.enabled:
        pytest.skip("the run's render cache is off (CERTGEN_TEST_RENDER_CACHE=0)")
    assert _pool_build(tmp_path, render_cache.folder, (121.25, 97.5, 83.75))


@pytest.mark.render_uncached
def test_a_test_marked_render_uncached_has_its_pool_workers_render_for_real(
        tmp_path: Path, render_cache: RenderCache) -> None:
    """Figures no other test uses: a PDF of them in the cache would be this test's."""
    assert not _pool_build(tmp_path, render_cache.folder, (119.75, 96.25, 82.5))
