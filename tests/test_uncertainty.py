"""The measurement-interval engine (certgen.metrics.uncertainty): its block length is Politis–White's,
its fast resample arithmetic equals building every resample frame by frame, it is
deterministic, and on the real captures it gives the intervals the issue measured."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from pydantic import ValidationError
from realdata import REAL
from scipy.signal import lfilter

from certgen.captures import read_capture_file
from certgen.metrics import uncertainty
from certgen.metrics.figures import positive_frames
from certgen.metrics.uncertainty import (
    block_length,
    block_starts,
    bootstrap_pairs,
    figure_intervals,
    interval_seed,
    percentile_intervals,
    politis_white_circular,
    resample_totals,
    studentized_pairs,
    sustained_stability,
)
from certgen.model.thresholds import Weights
from certgen.model.uncertainty import FIGURES, FigureIntervals

WEIGHTS = Weights(consistency_gap=0.7, stutter=0.3)


def real_frames(name: str) -> np.ndarray:
    [capture] = read_capture_file(REAL / name, name=name)
    frames, _ = positive_frames(capture.frame_times_ms)
    return frames


def ar1(seed: int, n: int, phi: float = 0.9) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.asarray(8.0 + lfilter([1.0], [1.0, -phi], rng.normal(0.0, 0.5, n)))


# Values printed by arch 8.0.0's `optimal_block_length(x)["circular"]` (numpy 2.4.6) for the
# same series: an independent implementation of the same rule, run once outside the suite
# (arch needs pandas and statsmodels, which certgen does not otherwise use).
ARCH_CIRCULAR = {
    "CapFrameXFileWithHeader.csv": 161.6386002250289,
    "OCAT-MetroExodus.exe-2019-02-20T101522.csv": 117.87529947715399,
    "PresentMon-1.5_trivflip.csv": 2.996628221685741,
}


@pytest.mark.parametrize("name", sorted(ARCH_CIRCULAR))
def test_the_block_length_rule_is_arch_s_politis_white(name: str) -> None:
    assert politis_white_circular(real_frames(name)) == pytest.approx(ARCH_CIRCULAR[name],
                                                                      rel=1e-12)


def test_the_block_length_rule_on_an_ar1_series_is_arch_s() -> None:
    assert politis_white_circular(ar1(7, 5000)) == pytest.approx(106.09544261264219, rel=1e-12)


def test_a_block_is_at_least_a_second_and_at_most_a_third_of_the_capture() -> None:
    even = np.full(6000, 10.0)  # 100 fps, no correlation at all: one second is 100 frames
    assert politis_white_circular(even) <= 1.0
    assert block_length(even) == 100
    assert block_length(np.full(240, 10.0)) == 80  # a third of 240 frames


def _brute_force(frames: np.ndarray, starts: np.ndarray, block: int) -> np.ndarray:
    """Each resample built frame by frame: (total, k1 longest, k01 longest) per row."""
    n = frames.size
    blocks = starts.shape[1]
    lengths = [block] * (blocks - 1) + [n - (blocks - 1) * block]
    k1, k01 = max(1, -(-n // 100)), max(1, -(-n // 1000))
    rows = []
    for row in starts:
        resample = np.concatenate([np.take(frames, np.arange(s, s + length), mode="wrap")
                                   for s, length in zip(row, lengths, strict=True)])
        assert resample.size == n
        longest = np.sort(resample)[::-1]
        rows.append((resample.sum(), longest[:k1].sum(), longest[:k01].sum()))
    return np.array(rows)


def _hitchy(seed: int, n: int) -> np.ndarray:
    """Frames with ties (times quantised to 0.5 ms) and hitches packed into a few bursts, so
    that resamples differ a lot in how many of the longest frames they hold."""
    rng = np.random.default_rng(seed)
    frames = np.round(ar1(seed, n, 0.7) * 2) / 2
    for at in rng.integers(0, n - 40, 4):
        frames[at : at + 30] += rng.uniform(20, 60, 30)
    return np.abs(frames) + 0.5


CASES = {
    "CapFrameX": lambda: real_frames("CapFrameXFileWithHeader.csv"),
    "PresentMon": lambda: real_frames("PresentMonTestOutputFilename.csv"),
    "hitch bursts and ties": lambda: _hitchy(3, 12_000),
}


@pytest.mark.parametrize("narrow", [False, True], ids=["band", "band widened"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fast_sums_equal_every_resample_built_frame_by_frame(
    case: str, narrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same block starts, two ways: the tables and band tally, and the plain resample. With a
    band of one rank every resample has to widen it, down to the whole capture."""
    if narrow:
        monkeypatch.setattr(uncertainty, "_delta", lambda k: 1)
        monkeypatch.setattr(uncertainty, "_TALLY_ALL", 1)
    frames = CASES[case]()
    block = block_length(frames)
    starts = block_starts(np.random.default_rng(11), frames.size, block, 300)
    fast = resample_totals(frames, starts, block)
    slow = _brute_force(frames, starts, block)
    assert np.allclose(fast.total_ms, slow[:, 0], rtol=1e-12, atol=0)
    assert np.allclose(fast.tail1_ms, slow[:, 1], rtol=1e-12, atol=0)
    assert np.allclose(fast.tail01_ms, slow[:, 2], rtol=1e-12, atol=0)


def test_the_seed_comes_from_the_capture_and_its_group() -> None:
    sha = hashlib.sha256(b"capture").hexdigest()
    assert interval_seed(sha, None) == interval_seed(sha, None)
    assert interval_seed(sha, "game.exe") != interval_seed(sha, None)
    assert interval_seed(hashlib.sha256(b"other").hexdigest(), None) != interval_seed(sha, None)


def test_same_capture_same_interval_and_another_seed_moves_it() -> None:
    frames = real_frames("OCAT-MetroExodus.exe-2019-02-20T101522.csv")
    once = bootstrap_pairs(frames, WEIGHTS, seed=5, resamples=2000)
    again = bootstrap_pairs(frames.copy(), WEIGHTS, seed=5, resamples=2000)
    assert once == again
    assert bootstrap_pairs(frames, WEIGHTS, seed=6, resamples=2000) != once


# The issue's own measurement (circular block bootstrap, 2,000 resamples, blocks of about a
# second): S_F's 95 % interval per real capture.
ISSUE_TABLE = {
    "CapFrameXFileWithHeader.csv": (79.9, 90.4),
    "OCAT-MetroExodus.exe-2019-02-20T101522.csv": (74.0, 82.1),
    "PresentMonTestOutputFilename.csv": (37.1, 85.7),
}


@pytest.mark.parametrize("name", sorted(ISSUE_TABLE))
def test_the_real_captures_get_the_intervals_the_issue_measured(name: str) -> None:
    frames = real_frames(name)
    sha = hashlib.sha256((REAL / name).read_bytes()).hexdigest()
    _, pairs = bootstrap_pairs(frames, WEIGHTS, seed=interval_seed(sha, None))
    low, high = pairs["fluidity_score"]
    want_low, want_high = ISSUE_TABLE[name]
    assert abs(low - want_low) <= 0.4 and abs(high - want_high) <= 0.4, (low, high)


def test_the_ends_are_rounded_as_the_figures_are() -> None:
    _, pairs = bootstrap_pairs(_hitchy(4, 9000), WEIGHTS, seed=1, resamples=500)
    digits = {"avg_fps": 1, "low_1pct_fps": 1, "low_0_1pct_fps": 1, "consistency_gap": 4,
              "stutter": 4, "fluidity_score": 2}
    for figure, pair in pairs.items():
        for end in pair:
            assert round(end, digits[figure]) == end, (figure, end)
        assert pair[0] <= pair[1]


def test_a_short_capture_gets_no_interval_and_says_why() -> None:
    result = figure_intervals(np.full(500, 10.0), WEIGHTS, seed=1)
    assert result.block_frames is None
    assert set(result.not_estimated) == set(FIGURES)
    assert "500 frames" in result.not_estimated["fluidity_score"]
    assert "20,000 frames" in result.not_estimated["low_1pct_fps"]
    assert "scene drift" in result.not_estimated["avg_fps"]  # never from one capture
    assert all(getattr(result, figure) is None for figure in FIGURES)
    # issue 24's percentile rule, kept for its study, withheld it below 900 frames
    assert "500 frames" in percentile_intervals(np.full(500, 10.0), WEIGHTS,
                                                seed=1).not_estimated["avg_fps"]


def test_a_figure_is_null_exactly_when_it_is_not_estimated() -> None:
    fields = {"level": 0.95, "method": "m", "resamples": 10, "block_frames": 5,
              "not_estimated": {}}
    with pytest.raises(ValidationError, match="exactly when"):
        FigureIntervals(**fields, avg_fps=(1.0, 2.0))  # the other five null, none named
    with pytest.raises(ValidationError, match="unknown figures"):
        FigureIntervals(**{**fields, "not_estimated": dict.fromkeys(FIGURES, "why") | {"x": "y"}})


def test_every_interval_printed_is_one_the_rule_allows() -> None:
    """figure_intervals gives exactly the studentized engine's pairs from 20,000 frames for every
    figure but the average and the stutter (issue 41's study), and names those two; issue 24's percentile rule
    (kept for its study) gives the percentile engine's pairs where it allowed them."""
    frames = _hitchy(5, 25_000)
    result = figure_intervals(frames, WEIGHTS, seed=2, resamples=500)
    assert result.method == "circular block bootstrap, studentized (within-capture)"
    _, pairs, _ = studentized_pairs(frames, WEIGHTS, seed=2, resamples=500)
    assert set(result.not_estimated) == {"avg_fps", "stutter"}
    assert "86–89 %" in result.not_estimated["stutter"]
    for figure in FIGURES:
        if figure in result.not_estimated:
            assert getattr(result, figure) is None
        else:
            assert getattr(result, figure) == pairs[figure]
    old = percentile_intervals(frames, WEIGHTS, seed=2, resamples=500)
    _, pairs = bootstrap_pairs(frames, WEIGHTS, seed=2, resamples=500)
    assert set(old.not_estimated) == set(FIGURES) - {"low_1pct_fps", "consistency_gap"}
    assert old.low_1pct_fps == pairs["low_1pct_fps"]


def test_resamples_drawn_in_groups_give_the_same_interval(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long capture's resamples are drawn a group at a time (bounded memory): the same
    stream, so the same interval as one group."""
    frames = _hitchy(6, 8000)
    once = bootstrap_pairs(frames, WEIGHTS, seed=3, resamples=1000)
    monkeypatch.setattr(uncertainty, "_STARTS_HELD", 5000)  # about a hundred resamples a group
    assert bootstrap_pairs(frames, WEIGHTS, seed=3, resamples=1000) == once


def test_sustained_stability_compares_whole_minutes() -> None:
    """Two whole minutes at 100 and 80 FPS and a partial third at 10 FPS (left out)."""
    frames = np.concatenate([np.full(6000, 10.0), np.full(4800, 12.5), np.full(300, 100.0)])
    result = sustained_stability(frames)
    assert (result.blocks, result.worst_fps, result.best_fps) == (2, 80.0, 100.0)
    assert result.ratio == 0.8 and result.not_estimated is None
    assert result.reference == 0.97


def test_sustained_stability_needs_two_whole_minutes() -> None:
    result = sustained_stability(np.full(11_000, 10.0))  # 110 s: one whole minute
    assert result.blocks == 1 and result.ratio is None and result.worst_fps is None
    assert result.not_estimated == "the capture lasts 110.0 s; two whole 60-second blocks are needed"


def test_sustained_stability_weights_each_minute_by_time() -> None:
    """A minute of 30 frames of 1 ms, 2,998 of 20 ms and one of 10 ms (exactly 60 s; the last
    frame ends on the boundary and closes it): 3,029 frames in 60 s is 50.5 FPS, not the 59.4
    of averaging per-frame FPS."""
    minute = np.concatenate([np.full(30, 1.0), np.full(2998, 20.0), [10.0]])
    assert minute.sum() == 60_000.0
    result = sustained_stability(np.concatenate([minute, minute, [5.0]]))
    assert result.blocks == 2
    assert result.worst_fps == result.best_fps == 50.5
    assert result.ratio == 1.0


def test_even_frames_give_a_zero_width_interval_without_a_negative_zero() -> None:
    """25,000 identical frames: no spread at all, and float error (a gap of -1e-16) never
    prints as -0.0000."""
    result = figure_intervals(np.full(25_000, 16.667), WEIGHTS, seed=1, resamples=200)
    assert result.low_1pct_fps == (60.0, 60.0)
    assert result.consistency_gap == (0.0, 0.0)
    assert all(str(end) != "-0.0" for end in result.consistency_gap)


def test_the_other_methods_study_runs_and_gives_ordered_intervals() -> None:
    """bench/coverage_methods.py (docs/spec/uncertainty.md, "Other methods tried") on one small
    simulated capture: every method gives a low end at or below its high end for each figure,
    around the capture's own figure for the bootstrap methods."""
    import importlib.util
    import pathlib
    import sys

    path = pathlib.Path(__file__).resolve().parents[1] / "bench" / "coverage_methods.py"
    spec = importlib.util.spec_from_file_location("coverage_methods", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    study = module._study_module()
    x = study.frames(np.random.default_rng(5), 2_000)
    own = module.figures(x[None, :])
    for name, method in module.METHODS.items():
        pairs = method(np.random.default_rng(6), x, 60)
        assert set(pairs) == set(module.FIGURES), name
        for figure, (lo, hi) in pairs.items():
            assert np.isfinite(lo) and np.isfinite(hi) and lo <= hi, (name, figure)
            if name.startswith("percentile"):
                assert lo <= own[figure][0] * 1.05 and hi >= own[figure][0] * 0.95, (name, figure)
