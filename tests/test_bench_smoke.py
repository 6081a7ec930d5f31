"""bench/run.py runs end to end (a smoke test: no timing is asserted, speed lives in bench/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_quick_runs_and_prints_the_table(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--out", str(tmp_path)],
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
        [sys.executable, str(ROOT / "bench" / "bench_build.py"), "--bundles", "2"],
        capture_output=True, text=True, check=False, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    for name in ("render_vs_weasyprint", "no_change_rebuild"):
        assert name in done.stdout, done.stdout
