"""`certgen build --scheduler`: the same build on a Dask cluster (a LocalCluster of 2 worker
processes on loopback): byte-identical outputs, the same progress lines and failure reports."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bundlekit import card, frames_for, run_cli, run_entry, write_card, write_presentmon
from rendercache import RenderCache, dask_preload

from certgen.fleet import Cohort, FleetRun, FleetStore

distributed = pytest.importorskip("distributed", reason="the dask extra is part of the test extra")


@pytest.fixture(autouse=True)
def _sample_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build here is issued by the examples' sample lab ($CERTGEN_LAB, inherited by the
    scheduler's workers and by child processes)."""
    monkeypatch.setenv("CERTGEN_LAB", str(Path(__file__).resolve().parent.parent / "examples"
                                          / "lab.yaml"))



@pytest.fixture(scope="module")
def scheduler(render_cache: RenderCache) -> Iterator[str]:
    # The workers render through the run's cache: what is compared is what they compute.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0",
                                  **dask_preload(render_cache)) as cluster:
        yield str(cluster.scheduler_address)


def _bundles(root: Path, figures: list[tuple[str, tuple[float, float, float]]]) -> list[str]:
    out = []
    for cert_id, fig in figures:
        b = root / cert_id
        write_presentmon(b / "captures/r.csv", frames_for(*fig))
        data = card([run_entry("Game", capture="captures/r.csv")])
        data["certificate"]["id"] = cert_id
        data["certificate"]["languages"] = ["en", "ru"]
        out.append(str(write_card(b, data)))
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_cluster_build_equals_a_local_build_byte_for_byte(
        scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundles = _bundles(tmp_path / "in", [(f"DASK-{i}", (120.0 - 5 * i, 108.0 - 5 * i, 90.0))
                                         for i in range(4)])
    fleet = tmp_path / "fleet.sqlite"
    cohort = Cohort("Game", "2560x1440", "Ultra", False, "none", None, False)
    with FleetStore.open(fleet) as store:
        store.add_runs([FleetRun(f"F-{i}", 0, "2026-01-01", "Card", f"S{i}", cohort,
                                 100.0 + i, 90.0, 80.0, 0.1, 0.11, 90.0 - i, "test")
                        for i in range(40)])
    outputs = {}
    for name, extra in [("local", ["--jobs", "1"]), ("cluster", ["--scheduler", scheduler])]:
        out = tmp_path / name
        code, stdout, stderr = run_cli(["build", *bundles, "--out", str(out), "--fleet",
                                        str(fleet), *extra], capsys)
        assert (code, stderr) == (0, "")
        outputs[name] = (stdout.replace(str(out.resolve()), "OUT"), _files(out))
    assert outputs["cluster"][0] == outputs["local"][0]
    assert [line.split()[:2] for line in outputs["cluster"][0].splitlines()] == [
        ["built", f"DASK-{i}"] for i in range(4)]
    assert outputs["cluster"][1] == outputs["local"][1]
    assert len(outputs["cluster"][1]) == 4 * 6  # record, 2 HTML, 2 PDF, manifest each


def test_the_workers_render_through_the_runs_cache(scheduler: str,
                                                  render_cache: RenderCache) -> None:
    """The suite's own arrangement (tests/poolcache.py, rendercache.dask_preload): the cluster's
    worker processes have the run's render cache in place of certgen's renderer, unless the
    whole run renders for real (CERTGEN_TEST_RENDER_CACHE=0)."""
    with distributed.Client(scheduler) as client:
        seen = client.run(lambda: type(
            __import__("certgen.render.certificate", fromlist=["_"]).html_to_pdf).__name__)
    assert len(seen) == 2
    expected = "RenderCache" if dask_preload(render_cache) else "function"
    assert set(seen.values()) == {expected}, seen


def test_a_failing_bundle_on_a_worker_is_named_and_the_others_built(
        scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # DASK-NO: stutter above 0.60 without a soft_limit block: refused by the rules.
    bundles = _bundles(tmp_path / "in", [("DASK-OK", (120.0, 110.0, 100.0)),
                                         ("DASK-NO", (100.0, 82.0, 31.9)),
                                         ("DASK-OK2", (110.0, 100.0, 90.0))])
    outputs = {}
    for name in ("local", "cluster"):
        out = tmp_path / name
        if name == "cluster":
            monkeypatch.setenv("CERTGEN_SCHEDULER", scheduler)  # the environment variable form
        code, stdout, stderr = run_cli(["build", *bundles, "--out", str(out), "--lang", "en",
                                        "--jobs", "1"], capsys)
        outputs[name] = (code, stdout.replace(str(out.resolve()), "OUT"), stderr)
        assert (out / "DASK-OK" / "manifest.json").is_file()
        assert (out / "DASK-OK2" / "manifest.json").is_file()
        assert not (out / "DASK-NO" / "manifest.json").exists()
    assert outputs["cluster"] == outputs["local"]
    code, _, stderr = outputs["cluster"]
    assert code == 1
    lines = stderr.splitlines()
    assert lines[0].startswith(f"certgen: {bundles[1]}: card.yaml: runs[0].first_capture:")
    assert lines[-1] == "certgen: 1 of 3 bundles were not built"


def test_workers_with_several_threads_are_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bundles = _bundles(tmp_path / "in", [("DASK-T", (120.0, 110.0, 100.0))])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster:
        code, _, stderr = run_cli(["build", *bundles, "--out", str(tmp_path / "out"),
                                   "--scheduler", cluster.scheduler_address], capsys)
    assert code == 1
    assert stderr.startswith("certgen: Dask workers must run one thread each "
                             "(dask worker --nthreads 1): tcp://127.0.0.1:")


def test_without_a_scheduler_dask_is_not_imported(tmp_path: Path) -> None:
    bundles = _bundles(tmp_path / "in", [("NODASK", (120.0, 110.0, 100.0))])
    code = ("import sys\nfrom certgen.cli import main\n"
            f"rc = main(['build', {bundles[0]!r}, '--out', {str(tmp_path / 'out')!r}, "
            "'--lang', 'en'])\n"
            "assert 'distributed' not in sys.modules and 'dask' not in sys.modules, 'imported'\n"
            "assert 'psycopg' not in sys.modules, 'psycopg imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "CERTGEN_SCHEDULER": ""})
    assert done.returncode == 0, done.stderr
