"""docs/api.md's example runs as written (from the repository root), so the page stays true."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "api.md"


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_the_api_page_has_an_example() -> None:
    assert len(_examples()) >= 1


def test_the_api_example_runs() -> None:
    """In a fresh interpreter at the repository root, as a reader would run it."""
    for code in _examples():
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                              text=True, env={"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH":
                                              "1764374400", **_python_env()})
        assert done.returncode == 0, done.stderr
        assert "issuable:" in done.stdout and "record.json" in done.stdout


def test_every_public_name_is_documented() -> None:
    from certgen import api

    text = PAGE.read_text(encoding="utf-8")
    missing = [name for name in api.__all__ if name not in text]
    assert missing == []


def _python_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "HOME", "LANG", "TMPDIR")}
