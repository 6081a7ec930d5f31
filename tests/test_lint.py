"""House rule 10: ruff (with the justified ignore list in pyproject) and mypy --strict on certgen/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)


def test_ruff_is_clean():
    result = _run("ruff", "check", "certgen", "bench", "tests", "examples")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean(tmp_path):
    result = _run("mypy", "--cache-dir", str(tmp_path / "mypy"), "certgen")
    assert result.returncode == 0, result.stdout + result.stderr
