"""Packaging hook: the wheel carries the top-level templates/ and locales/ folders.

They live at the repository top level (DESIGN.md), outside the `certgen` package, so
build_py copies them into `certgen/_data/` of the build; certgen/support/paths.py prefers that copy
when it exists. Editable installs skip the copy and read the checkout's folders directly.
All metadata stays in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA_FOLDERS = ("templates", "locales")


class BuildPyWithData(build_py):  # type: ignore[misc]
    """build_py, then copy templates/ and locales/ into certgen/_data/ of the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in DATA_FOLDERS:
            source = ROOT / name
            target = Path(self.build_lib) / "certgen" / "_data" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(
                source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
            )


setup(cmdclass={"build_py": BuildPyWithData})
