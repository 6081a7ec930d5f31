"""bench/run.py runs end to end (a smoke test: no timing is asserted, speed lives in bench/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_quick_runs_and_prints_the_table(tmp_path: Path) -> None:
    done = subprocess.run(
        # 2,000 frames (10x fewer than --quick's): the table's rows are the same, and the
        # processes the script starts, not the frames, are what it costs.
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--repeats", "1",
         "--frames", "2000", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    header = "benchmark  median  peer  peer median  ratio  target  result"
    assert any(" ".join(line.split()) == " ".join(header.split()) for line in done.stdout.splitlines())


def test_bench_build_runs_end_to_end_on_two_bundles() -> None:
    """bench/bench_build.py still builds (a merge once left it without the lab profile that
    every issued certificate needs): two bundles, every figure printed, nothing timed here."""
    done = subprocess.run(
        # One timed render per side instead of three: the same figures are printed.
        [sys.executable, str(ROOT / "bench" / "bench_build.py"), "--bundles", "2",
         "--repeats", "1"],
        capture_output=True, text=True, check=False, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    for name in ("render_vs_weasyprint", "no_change_rebuild"):
        assert name in done.stdout, done.stdout


def test_spawn_reports_the_child_s_own_peak_not_the_benchmark_s() -> None:
    """bench/spawn.py exists because Linux carries a process's peak resident memory across fork
    and exec: a child forked from a process holding 300 MB reports at least that much. Started
    through the launcher, the same child reports its own few MB."""
    import json
    import os

    held = bytearray(300 << 20)
    held[:: 4096] = b"x" * len(held[:: 4096])  # touch every page: resident, not just reserved
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(child.pid, 0)
    assert usage.ru_maxrss * 1024 >= 250 << 20  # the inherited peak the launcher avoids
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "spawn.py"), os.devnull, os.devnull,
         sys.executable, "-c", "pass"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    report = json.loads(done.stdout)
    assert report["returncode"] == 0
    assert report["max_rss_bytes"] < 100 << 20
    del held
