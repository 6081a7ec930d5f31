"""The measurement interval covers the truth where certgen prints it, and only there
(bench/coverage.py; `make coverage` runs the full study of docs/spec/uncertainty.md).

This is the smaller run: 200 simulated captures per length and 1,000 resamples each (the full
study: 500 and 10,000). The limits leave room for the smaller run's binomial spread (about
±1.5 points at 95 %) and are far from the figures the rule withholds.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import types
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _coverage_module() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_study", ROOT / "bench" / "coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows() -> list[Any]:
    study = _coverage_module()
    true = study.truth(frames_total=2_000_000)
    return study.study((2_000, 20_000), captures=200, resamples=1_000, true=true)


def test_where_certgen_prints_an_interval_it_covers_the_truth(rows: list[Any]) -> None:
    printed = [row for row in rows if row.printed]
    assert printed, "the rule prints no interval at all"
    for row in printed:
        assert 0.89 <= row.share <= 0.99, row


def test_where_it_withholds_one_the_interval_would_not_cover(rows: list[Any]) -> None:
    """The rule is not a blanket refusal: what it withholds does under-cover (the borderline
    average at 20,000 frames, 87 % in the full study, is left to the full study)."""
    for row in rows:
        if not row.printed and not (row.length == 20_000 and row.figure == "avg_fps"):
            assert row.share < 0.88, row
