"""FrameView's unsigned wrap-around: an interval of about 2⁶⁴ × 100 ns is a negative interval the
tool wrote as unsigned (issue 25, step 5). It is read as that negative interval, so the SOP drops
it as a non-positive frame time (counted), with a warning, instead of refusing the whole log."""

from __future__ import annotations

import numpy as np
import pytest
from capturekit import differing_fields
from test_captures_frameview import FRAMES, frameview_log

from certgen.captures import presentmon
from certgen.captures.detect import read_capture
from certgen.errors import CaptureFormatError
from certgen.metrics.diagnostics import compute_metrics
from certgen.model import Weights

WEIGHTS = Weights(consistency_gap=0.7, stutter=0.3)
WRAPPED = "1844674407370951.2"
"""The value the issue quotes from a FrameView log: about −4 ms written as unsigned 100 ns ticks."""


def _log_with(cell: str, at: int = 10) -> bytes:
    """The FrameView test log with frame `at`'s MsBetweenPresents written as `cell`."""
    good = frameview_log([("Game.exe", 7, "0x1", FRAMES)]).decode()
    lines = good.split("\r\n")
    cells = lines[1 + at].split(",")
    column = lines[0].split(",").index("MsBetweenPresents")
    cells[column] = cell
    lines[1 + at] = ",".join(cells)
    return "\r\n".join(lines).encode()


def test_a_wrapped_interval_is_dropped_as_non_positive_and_warned() -> None:
    fast, slow = presentmon.read_each_path(_log_with(WRAPPED), "fv.csv")
    assert fast is not None and differing_fields(fast, slow) == []
    assert slow.frame_times_ms.size == len(FRAMES)
    assert slow.frame_times_ms[10] == pytest.approx(-4.0, abs=0.25)  # float spacing there: 0.25
    [warning] = [w for w in slow.warnings if "wrap-around" in w]
    assert "frame 11" in warning and WRAPPED in warning and "FrameView" in warning
    metrics = compute_metrics(slow.frame_times_ms, WEIGHTS, source="fv.csv")
    assert metrics.dropped_nonpositive == 1
    # The same figures as the log without that frame.
    kept = np.delete(np.array([t for _, t in FRAMES]), 10)
    without = compute_metrics(kept, WEIGHTS, source="kept")
    assert (metrics.avg_fps, metrics.low_1pct_fps, metrics.fluidity_score) == (
        without.avg_fps, without.low_1pct_fps, without.fluidity_score)


def test_a_log_without_a_wrap_says_nothing_of_one() -> None:
    capture = read_capture(frameview_log([("Game.exe", 7, "0x1", FRAMES)]), name="fv.csv")[0]
    assert not any("wrap-around" in w for w in capture.warnings)


@pytest.mark.parametrize("cell", ["1844674407370956.0", "1844674397370950.0", "1e15"])
def test_other_huge_values_are_still_refused(cell: str) -> None:
    """Only the wrap of a negative interval of up to 10,000 s is read so: above 2⁶⁴ × 100 ns, or
    further below it, a value is no wrap and the range check refuses it, naming it."""
    with pytest.raises(CaptureFormatError, match="outside the range certgen accepts"):
        read_capture(_log_with(cell), name="fv.csv")


def test_generated_frames_logged_with_0_ms_are_named() -> None:
    """Issue 25, step 5: generated frames written with a 0 ms interval (a PresentMon pattern with
    some frame generators) are dropped by the SOP as non-positive; the warning says why."""
    from test_measured import pm25

    from certgen.metrics.pagefigures import checked

    rows = []
    for i in range(40):
        rows.append({"MsBetweenPresents": "16.6", "FrameType": "Application"})
        rows.append({"MsBetweenPresents": "0.0000" if i % 4 else "8.3",
                     "FrameType": "AMD AFMF"})
    rows.append({"MsBetweenPresents": "0", "FrameType": "Application"})  # not generated
    data = pm25(rows)
    fast, slow = presentmon.read_each_path(data, "fg.csv")
    assert fast is not None and differing_fields(fast, slow) == []
    for capture in (fast, slow):
        [seen] = checked([capture])
        [warning] = [w for w in seen.warnings if "0 ms present interval" in w]
        assert warning.startswith("30 generated frames (AMD AFMF) logged with a 0 ms")
    [plain] = checked(read_capture(frameview_log([("Game.exe", 7, "0x1", FRAMES)]), name="fv.csv"))
    assert not any("0 ms present interval" in w for w in plain.warnings)
