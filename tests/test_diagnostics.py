"""Diagnostics beside the SOP figures: percentiles, stalls, too-short, and the stutter rule.

The fast stutter detector is checked against a brute-force reading of the rule (the docstring
of certgen.metrics.diagnostics states it): every window built literally from the present times and its
median taken with np.median.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import diagnostic_frame_time

from certgen.metrics import diagnostics
from certgen.metrics.diagnostics import compute_diagnostics, stutter_events


def brute_force_stutters(frames: np.ndarray) -> np.ndarray:
    """The rule, literally: window = frames j with T_i - 1500 <= T_j <= T_i + 1500."""
    present = np.cumsum(frames)
    events = []
    for i in range(frames.size):
        in_window = (present >= present[i] - 1500.0) & (present <= present[i] + 1500.0)
        median = float(np.median(frames[in_window]))
        t = float(frames[i])
        if t <= 1000.0 and t > 2.0 * median and t > median + 8.0:
            events.append(i)
    return np.asarray(events, dtype=np.intp)


def interpolated_percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks, written out by hand."""
    ordered = sorted(values)
    rank = q / 100.0 * (len(ordered) - 1)
    below = math.floor(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (rank - below) * (ordered[above] - ordered[below])


FORCE_ROWS = 10**12
FORCE_ALL_AT_ONCE = 0



@pytest.mark.parametrize("rows_cost", [FORCE_ROWS, FORCE_ALL_AT_ONCE], ids=["rows", "all-at-once"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.lists(diagnostic_frame_time, min_size=1, max_size=400))
def test_stutter_events_match_brute_force(
    frames: list[float], rows_cost: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both median strategies (padded rows, wavelet matrix) give the literal rule's events."""
    monkeypatch.setattr(diagnostics, "_ROWS_COST_PER_FRAME", rows_cost)
    monkeypatch.setattr(diagnostics, "_ROWS_CELLS", 1024)  # many small chunks
    array = np.asarray(frames, dtype=np.float64)
    assert stutter_events(array).tolist() == brute_force_stutters(array).tolist()


@settings(max_examples=30, deadline=None)
@given(
    base=st.floats(4.0, 30.0),
    jitter=st.floats(0.0, 1.5),
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(200, 1500),
)
def test_stutter_events_match_brute_force_on_noisy_captures(
    base: float, jitter: float, seed: int, size: int
) -> None:
    """Long noisy captures, where the block bound is in play and many frames are candidates."""
    rng = np.random.default_rng(seed)
    frames = base * rng.gamma(4.0, 0.25, size) ** jitter
    assert stutter_events(frames).tolist() == brute_force_stutters(frames).tolist()


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(0, 30).map(float), min_size=1, max_size=200),
    data=st.data(),
)
def test_kth_smallest_is_the_sorted_window_value(values: list[float], data: st.DataObject) -> None:
    """The all-at-once order statistic equals sorting each window (ties included)."""
    array = np.asarray(values)
    queries = data.draw(
        st.lists(
            st.tuples(st.integers(0, array.size - 1), st.integers(1, array.size)).filter(
                lambda q: q[0] < q[1]
            ),
            min_size=1,
            max_size=30,
        )
    )
    lo = np.array([q[0] for q in queries])
    hi = np.array([q[1] for q in queries])
    k = np.array([data.draw(st.integers(0, int(h - a - 1))) for a, h in zip(lo, hi)])
    got = diagnostics._kth_smallest(array, lo, hi, k)
    expected = [sorted(values[a:h])[j] for a, h, j in zip(lo, hi, k)]
    assert got.tolist() == expected


def _steady_with(frame: float, base: float, *, before: int = 400, after: int = 400) -> np.ndarray:
    return np.array([base] * before + [frame] + [base] * after)


@pytest.mark.parametrize(
    ("frame", "base", "is_event"),
    [
        (20.0, 10.0, False),  # exactly 2 x the median: not longer than it
        (20.001, 10.0, True),
        (13.0, 5.0, False),  # exactly median + 8 ms (2 x 5 = 10 is passed)
        (13.001, 5.0, True),
        (1000.0, 10.0, True),  # a 1 s frame still counts
        (1000.001, 10.0, False),  # longer than 1 s: a stall, not a stutter
        (8.0, 0.5, False),  # t > m + 8 needs more than 8 ms
    ],
)
def test_stutter_thresholds(frame: float, base: float, is_event: bool) -> None:
    frames = _steady_with(frame, base, before=3000, after=3000)
    assert stutter_events(frames).tolist() == ([3000] if is_event else [])


def _window_edge_capture(far_frame: float) -> tuple[np.ndarray, int]:
    """Frame i (30 ms) whose median depends on one 2 ms frame ending 1500 ms before it.

    With that frame in the window: 136 x 2 ms, 135 x 20 ms and the 30 ms frame, median
    (2 + 20) / 2 = 11, an event. Without it the median is 20: no event. far_frame is the 20 ms
    frame next to the 2 ms frames; lengthening it pushes the 2 ms frame past 1500 ms.
    """
    near = [far_frame] + [20.0] * 59
    frames = np.array([2.0] * 1000 + near + [30.0] + [20.0] * 200)
    return frames, 1000 + len(near)


def test_window_includes_a_frame_exactly_1500_ms_before() -> None:
    frames, i = _window_edge_capture(20.0)
    present = np.cumsum(frames)
    edge = 1000 - 136  # the 136th 2 ms frame back from frame i
    assert present[i] - present[edge] == 1500.0 and present[i] - present[edge - 1] > 1500.0
    assert i in stutter_events(frames).tolist()
    assert i in brute_force_stutters(frames).tolist()


def test_window_excludes_a_frame_just_over_1500_ms_before() -> None:
    frames, i = _window_edge_capture(20.5)
    assert i not in stutter_events(frames).tolist()


def test_stalls_are_counted_and_kept_out_of_the_percentiles() -> None:
    steady = [10.0 + (j % 7) for j in range(1000)]
    frames = np.array(steady + [250.0, 200.0, 1500.0])
    diag = compute_diagnostics(frames)
    assert diag.stall_count == 2  # over 200 ms: 250 and 1500, not 200 itself
    assert diag.stall_total_ms == 1750.0
    counted = steady + [200.0]
    assert diag.p99_ms == pytest.approx(interpolated_percentile(counted, 99.0), abs=1e-12)
    assert diag.p99_9_ms == pytest.approx(interpolated_percentile(counted, 99.9), abs=1e-12)
    # 250 and 200 ms are stutter events (<= 1 s); the 1.5 s frame is only a stall.
    assert stutter_events(frames).tolist() == [1000, 1001]
    assert diag.stutter_count == 2


def test_percentiles_interpolate_between_closest_ranks() -> None:
    values = [float(v) for v in range(1, 101)]
    diag = compute_diagnostics(np.array(values[::-1]))
    assert diag.p99_ms == pytest.approx(interpolated_percentile(values, 99.0), abs=1e-12)
    assert diag.p99_9_ms == pytest.approx(interpolated_percentile(values, 99.9), abs=1e-12)
    assert diag.p99_ms != 99.0 and diag.p99_ms != 100.0  # neither nearest rank


@pytest.mark.parametrize(("frames", "too_short"), [(899, True), (900, False)])
def test_too_short_below_900_frames(frames: int, too_short: bool) -> None:
    assert compute_diagnostics(np.full(frames, 16.0)).too_short is too_short


def test_no_frames_no_percentiles() -> None:
    diag = compute_diagnostics(np.empty(0))
    assert (diag.p99_ms, diag.p99_9_ms, diag.stall_count, diag.stutter_count) == (None, None, 0, 0)


def test_stutter_events_leave_the_frames_untouched() -> None:
    frames = np.array([10.0] * 500 + [40.0] + [10.0] * 500)
    frames.setflags(write=False)
    assert stutter_events(frames).tolist() == [500]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stutter_events_match_brute_force_on_game_like_captures(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scenes at different rates with spikes (the bench shape): many events are confirmed by
    the upper bound of the window median alone (windows across a scene change still need the
    exact median)."""
    rng = np.random.default_rng(seed)
    scene_fps = np.repeat(rng.uniform(60.0, 144.0, 12), 1000)
    frames = 1000.0 / scene_fps * rng.lognormal(0.0, 0.06, scene_fps.size)
    spikes = rng.random(frames.size) < 0.01
    frames[spikes] *= rng.uniform(2.5, 4.0, int(spikes.sum()))
    exact: list[int] = []
    medians = diagnostics._window_medians

    def counted(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        exact.append(lo.size)
        return medians(values, lo, hi)

    monkeypatch.setattr(diagnostics, "_window_medians", counted)
    events = stutter_events(frames)
    assert events.tolist() == brute_force_stutters(frames).tolist()
    assert events.size > 50 and sum(exact) < events.size


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(0.01, 250.0), st.sampled_from([5.0, 16.7, 200.0, 200.5, 1500.0])),
        min_size=1, max_size=3000,
    ),
)
def test_p99_and_p99_9_are_numpys_percentiles_bit_for_bit(values: list[float]) -> None:
    """The tail-only computation gives exactly np.percentile over the frames up to 200 ms."""
    frames = np.asarray(values)
    counted = frames[frames <= 200.0]
    diag = compute_diagnostics(frames)
    if counted.size == 0:
        assert diag.p99_ms is None and diag.p99_9_ms is None
    else:
        assert (diag.p99_ms, diag.p99_9_ms) == tuple(np.percentile(counted, [99.0, 99.9]))


@pytest.mark.parametrize("seed", range(3))
def test_p99_on_long_captures_is_numpys_percentile(seed: int) -> None:
    rng = np.random.default_rng(seed)
    frames = rng.gamma(20.0, 0.8, 200_000)
    frames[rng.choice(frames.size, 7, replace=False)] = 450.0
    counted = frames[frames <= 200.0]
    diag = compute_diagnostics(frames)
    assert (diag.p99_ms, diag.p99_9_ms) == tuple(np.percentile(counted, [99.0, 99.9]))


def test_stutter_events_memo_answers_only_for_equal_frames() -> None:
    """The one-entry memo (the hitch causes ask again for the diagnostics' events): equal frames
    give the same answer; frames that differ in one value are computed afresh."""
    from certgen.metrics.diagnostics import _stutter_events, stutter_events

    frames = np.full(3000, 10.0)
    frames[[500, 1500]] = 40.0
    first = stutter_events(frames)
    assert first.tolist() == _stutter_events(frames).tolist() == [500, 1500]
    assert stutter_events(frames.copy()) is first  # equal values: the memo's answer
    changed = frames.copy()
    changed[2500] = 40.0
    assert stutter_events(changed).tolist() == [500, 1500, 2500]
    assert not first.flags.writeable  # callers share it: nobody may change it
