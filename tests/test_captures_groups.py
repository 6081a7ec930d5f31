"""The group rule of PresentMon-family files (docs/spec/captures.md, "Which group is read").

With no process named: never a system process while another group has frames; then a real swap
chain before 0x0, then most frames, then first seen in the file; a warning whenever the
runner-up has as many frames or is within 10 % of the chosen group. Both paths (polars, csv
module) make the same choice.
"""

from __future__ import annotations

import numpy as np
import pytest
from capturekit import differing_fields
from realdata import REAL

from certgen.captures import presentmon
from certgen.captures.detect import read_capture
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError

HEADER = ("Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,Dropped,"
          "TimeInSeconds,MsBetweenPresents,MsInPresentAPI")


def log(groups: list[tuple[str, str, str, int]], *, interleave: bool = True) -> bytes:
    """A PresentMon 1.x file: `frames` rows of 16.667 ms per (app, pid, swap chain)."""
    rows = []
    longest = max(n for *_, n in groups)
    order = [(g, i) for i in range(longest) for g in groups] if interleave else [
        (g, i) for g in groups for i in range(longest)]
    for (app, pid, swap, frames), i in order:
        if i < frames:
            rows.append(f"{app},{pid},{swap},DXGI,1,0,0,{i / 60:.6f},16.667,0.250")
    return ("\n".join([HEADER, *rows]) + "\n").encode()


def every_path(data: bytes, process: str | None = None) -> Capture:
    """The capture of each path that takes the file; they must all be the same."""
    fast, slow = presentmon.read_each_path(data, "pm.csv", process=process)
    captures = [c for c in (fast, slow) if c is not None]
    [public] = read_capture(data, name="pm.csv", process=process)
    captures.append(public)
    for other in captures[1:]:
        assert np.array_equal(other.frame_times_ms, captures[0].frame_times_ms)
        assert differing_fields(other, captures[0]) == []
    return captures[0]


def labels(capture: Capture) -> tuple[str, list[str]]:
    assert capture.group is not None
    return capture.group.label(), [g.label() for g in capture.groups_left_out]


def test_four_groups_of_18_frames_the_first_seen_wins_with_a_warning() -> None:
    # Sorted as strings, "10792" came before "2032": the old rule took the second group seen.
    data = log([("Presenter.exe", "2032", "0x29A5884FF18", 18),
                ("Presenter.exe", "10792", "0x20979A6D5F8", 18),
                ("Presenter.exe", "8320", "0x15EFD8424E0", 18),
                ("Presenter.exe", "11648", "0x1B95496E4B0", 18)])
    capture = every_path(data)
    assert labels(capture) == ("Presenter.exe (pid 2032, swap chain 0x29A5884FF18)", [
        "Presenter.exe (pid 10792, swap chain 0x20979A6D5F8)",
        "Presenter.exe (pid 8320, swap chain 0x15EFD8424E0)",
        "Presenter.exe (pid 11648, swap chain 0x1B95496E4B0)",
    ])
    assert capture.warnings == (
        "close group choice: Presenter.exe (pid 2032, swap chain 0x29A5884FF18) (18 frames) was "
        "chosen over Presenter.exe (pid 10792, swap chain 0x20979A6D5F8) (18 frames) because it "
        "was seen first in the file; check that it is the game (--process names an application, "
        "or one group as printed here: --process \"Presenter.exe (pid 10792, swap chain "
        "0x20979A6D5F8)\" reads the other)",
    )
    # Each of the four is chosen by its pid (the swap chain may be left out, case and zeros
    # of the address do not matter), and a pid of no such process lists the groups.
    for pid, swap in (("10792", "0x20979A6D5F8"), ("8320", "0x15eFD8424E0"),
                      ("11648", "0x00001B95496E4B0")):
        for process in (f"Presenter.exe (pid {pid})", f"presenter.exe (pid {pid}, swap chain {swap})"):
            chosen = every_path(data, process=process)
            assert chosen.group is not None and chosen.group.process_id == pid, process
            assert chosen.warnings == ()
    with pytest.raises(CaptureFormatError, match=r"no group 'Presenter.exe \(pid 1\)'; groups: "):
        read_capture(data, name="pm.csv", process="Presenter.exe (pid 1)")
    with pytest.raises(CaptureFormatError, match="no group"):
        read_capture(data, name="pm.csv", process="Presenter.exe (pid 2032, swap chain 0x1)")


def test_first_seen_is_the_first_row_not_the_biggest_block() -> None:
    data = log([("b.exe", "9", "0x2", 18), ("a.exe", "1", "0x1", 18)], interleave=False)
    assert labels(every_path(data))[0] == "b.exe (pid 9, swap chain 0x2)"


@pytest.mark.parametrize("null", ["0x0", "0x0000000000000000"])
def test_a_null_swap_chain_loses_to_a_real_one(null: str) -> None:
    data = log([("Game.exe", "40", null, 30), ("Game.exe", "40", "0x1D5E3F2A070", 20)])
    capture = every_path(data)
    assert labels(capture)[0] == "Game.exe (pid 40, swap chain 0x1D5E3F2A070)"
    assert capture.warnings == (
        "close group choice: Game.exe (pid 40, swap chain 0x1D5E3F2A070) (20 frames) was chosen "
        f"over Game.exe (pid 40, swap chain {null}) (30 frames) because a real swap chain comes "
        "before 0x0; check that it is the game (--process names an application, or one group as "
        f"printed here: --process \"Game.exe (pid 40, swap chain {null})\" reads the other)",
    )
    # The other swap chain of the same process, by its address as printed.
    chosen = every_path(data, process=f"Game.exe (pid 40, swap chain {null})")
    assert chosen.group is not None and chosen.group.swap_chain == null
    assert chosen.frame_times_ms.size == 30


def test_a_null_swap_chain_far_behind_raises_no_warning() -> None:
    capture = every_path(log([("Game.exe", "40", "0x0", 5), ("Game.exe", "40", "0x7", 20)]))
    assert labels(capture)[0] == "Game.exe (pid 40, swap chain 0x7)"
    assert capture.warnings == ()


def test_dwm_with_more_frames_loses_to_the_game() -> None:
    data = log([("dwm.exe", "1268", "0x224B280A1C0", 120), ("Game.exe", "40", "0x7", 45),
                ("DWM.EXE", "1268", "0x224B280B000", 10)])
    capture = every_path(data)
    assert labels(capture) == ("Game.exe (pid 40, swap chain 0x7)", [
        "dwm.exe (pid 1268, swap chain 0x224B280A1C0)",
        "DWM.EXE (pid 1268, swap chain 0x224B280B000)",
    ])
    # Only the system group the rule would otherwise have preferred is named.
    assert capture.warnings == (
        "left out as a system process (never chosen by default while another process has "
        "frames; --process names one): dwm.exe (pid 1268, swap chain 0x224B280A1C0): 120 frames",
    )
    chosen = every_path(data, process="dwm.exe")
    assert labels(chosen)[0] == "dwm.exe (pid 1268, swap chain 0x224B280A1C0)"
    assert chosen.warnings == ()


def test_only_dwm_present_is_chosen_with_a_warning() -> None:
    """A one-group file: the fast path takes it and makes the same choice and warning."""
    data = log([("dwm.exe", "1268", "0x224B280A1C0", 40)])
    layout = presentmon._layout(data[:65536], "pm.csv", capframex=False)
    assert presentmon._fast(data, layout).groups
    capture = every_path(data)
    assert labels(capture) == ("dwm.exe (pid 1268, swap chain 0x224B280A1C0)", [])
    assert capture.warnings == (
        "every group is a system process: dwm.exe (pid 1268, swap chain 0x224B280A1C0) was "
        "chosen, but figures of a system process (such as the compositor, dwm.exe) say nothing "
        "about a game",
    )


def test_only_system_processes_follow_the_rule_among_themselves() -> None:
    data = log([("explorer.exe", "5", "0x9", 10), ("dwm.exe", "1", "0x0", 50),
                ("dwm.exe", "1", "0x3", 30)])
    capture = every_path(data)
    assert labels(capture)[0] == "dwm.exe (pid 1, swap chain 0x3)"
    assert capture.warnings[0].startswith("every group is a system process: dwm.exe (pid 1, ")


@pytest.mark.parametrize(("runner", "warned"), [(18, True), (17, False), (19, True)])
def test_a_runner_up_within_10_percent_is_warned_about(runner: int, warned: bool) -> None:
    capture = every_path(log([("a.exe", "1", "0x1", 20), ("b.exe", "2", "0x2", runner)]))
    assert labels(capture)[0] == "a.exe (pid 1, swap chain 0x1)"
    expected = (
        f"close group choice: a.exe (pid 1, swap chain 0x1) (20 frames) was chosen over b.exe "
        f"(pid 2, swap chain 0x2) ({runner} frames) because it has more frames; check that it "
        "is the game (--process names an application, or one group as printed here: "
        "--process \"b.exe (pid 2, swap chain 0x2)\" reads the other)",
    )
    assert capture.warnings == (expected if warned else ())


def test_process_picks_among_its_groups_by_the_same_rule() -> None:
    data = log([("g.exe", "7", "0x0", 50), ("g.exe", "7", "0x5", 10), ("g.exe", "8", "0x6", 10),
                ("h.exe", "9", "0x9", 99)])
    capture = every_path(data, process="G.exe")
    assert labels(capture)[0] == "g.exe (pid 7, swap chain 0x5)"
    assert capture.warnings[0].startswith("close group choice: g.exe (pid 7, swap chain 0x5) "
                                          "(10 frames) was chosen over g.exe (pid 8,")


def test_system_process_list_is_compared_ignoring_case() -> None:
    assert presentmon.is_system_process("DWM.exe")
    assert presentmon.is_system_process("searchhost.exe")
    assert not presentmon.is_system_process("steamwebhelper.exe")
    assert not presentmon.is_system_process("")
    assert presentmon.is_null_swap_chain("0x0000000000000000")
    assert not presentmon.is_null_swap_chain("0x1") and not presentmon.is_null_swap_chain("")


@pytest.mark.parametrize("name", ["PresentMon-2.0.0_test_case_0.csv",
                                  "PresentMon-2.1.0_test_case_0.csv"])
def test_test_case_0_scores_presenter_not_dwm(name: str) -> None:
    """PresentMon's test capture: dwm.exe has 197 frames, seven Presenter.exe swap chains 18."""
    [capture] = read_capture((REAL / name).read_bytes(), name=name)
    assert capture.group is not None
    assert (capture.group.application, capture.group.process_id) == ("Presenter.exe", "10792")
    assert capture.frame_times_ms.size == 18
    assert any(w.startswith("left out as a system process") and "dwm.exe (pid 1268" in w
               for w in capture.warnings)
    assert any(w.startswith("close group choice") for w in capture.warnings)


def test_trivflip_scores_the_test_application_not_dwm() -> None:
    [capture] = read_capture((REAL / "PresentMon-1.5_trivflip.csv").read_bytes(), name="t.csv")
    assert capture.group is not None
    assert capture.group.label() == "TrivFlip12.exe (pid 23816, swap chain 0x00000274F86D4280)"


def test_an_unknown_process_lists_groups_most_frames_first_then_first_seen() -> None:
    data = log([("b.exe", "20", "0x2", 3), ("a.exe", "3", "0x1", 3), ("c.exe", "1", "0x3", 5)])
    with pytest.raises(CaptureFormatError) as caught:
        read_capture(data, name="pm.csv", process="x.exe")
    assert str(caught.value) == (
        "pm.csv: no process named 'x.exe'; groups: c.exe (pid 1, swap chain 0x3): 5 rows; "
        "b.exe (pid 20, swap chain 0x2): 3 rows; a.exe (pid 3, swap chain 0x1): 3 rows")
