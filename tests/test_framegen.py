"""Frame generation and display timing: diagnostics beside the SOP figures, never instead.

PresentMon 2.x files with generated frames are built here in the tool's exact layout (its
default 2.x header as in its gold test_case_5.csv, `NA` tokens, FrameType values as its
CsvOutput.cpp writes them); real files come from ../shared/captures/real.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from realdata import REAL
from syrupy.assertion import SnapshotAssertion

from certgen.captures import presentmon
from certgen.captures.detect import read_capture_file
from certgen.commands.metrics import measure
from certgen.errors import CaptureFormatError
from certgen.metrics.diagnostics import compute_metrics
from certgen.metrics.figures import weights_of
from certgen.metrics.framegen import compute_frame_diagnostics, compute_frame_generation
from certgen.sop import load_rules

WEIGHTS = weights_of(load_rules())

# PresentMon 2.x default CSV header (console app, --track_frame_type and the tracking options
# of its gold files), column for column as in Tests/Gold/test_case_5.csv.
HEADER = (
    "Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,"
    "AllowsTearing,PresentMode,FrameType,TimeInQPC,MsBetweenSimulationStart,MsBetweenPresents,"
    "MsBetweenDisplayChange,MsInPresentAPI,MsRenderPresentLatency,MsUntilDisplayed,MsPCLatency,"
    "CPUStartQPC,MsBetweenAppStart,MsCPUBusy,MsCPUWait,MsGPULatency,MsGPUTime,MsGPUBusy,"
    "MsGPUWait,MsVideoBusy,MsAnimationError,AnimationTime,MsFlipDelay,MsAllInputToPhotonLatency,"
    "MsClickToPhotonLatency,MsInstrumentedLatency"
)


def _row(app: str, pid: int, chain: str, frame_type: str, qpc: int, between: str,
         display: str) -> str:
    until = "NA" if display == "NA" else "8.5000"
    cells = [app, str(pid), chain, "DXGI", "0", "0", "1", "Hardware: Independent Flip",
             frame_type, str(qpc), "NA", between, display, "0.5269", "0.7881", until, "NA",
             str(qpc - 2000), between if between != "NA" else "NA", "5.7648", "4.2321",
             "2.3059", "5.1883", "5.1883", "0.0000", "0.0000", "NA", "NA", "NA", "NA", "NA",
             "NA"]
    return ",".join(cells)


# (FrameType, MsBetweenPresents, MsBetweenDisplayChange) of game.exe after its first present.
# PresentMon writes one row per displayed instance of a present, the generated one first, both
# with the present's MsBetweenPresents: four presents of 20, 20, 40 and 20 ms, each shown as a
# generated and an application frame; the last generated frame never reached the screen.
GAME_ROWS = (
    ("AMD AFMF", "20.0000", "10.0000"), ("Application", "20.0000", "10.0000"),
    ("AMD AFMF", "20.0000", "10.0000"), ("Application", "20.0000", "10.0000"),
    ("AMD AFMF", "40.0000", "20.0000"), ("Application", "40.0000", "20.0000"),
    ("AMD AFMF", "20.0000", "NA"), ("Application", "20.0000", "20.0000"),
)


def presentmon_2x(*, frame_type: bool = True, rows: tuple[tuple[str, str, str], ...] = GAME_ROWS,
                  crlf: bool = True) -> bytes:
    """A PresentMon 2.x CSV: BOM, CRLF, the game's first present with NA intervals, a dwm.exe
    group interleaved (never chosen), then `rows` of game.exe."""
    lines = [HEADER]
    lines.append(_row("game.exe", 4242, "0x2A70D2CAC00", "Application", 1000, "NA", "NA"))
    lines.append(_row("dwm.exe", 1268, "0x224B280A1C0", "Application", 1500, "NA", "NA"))
    for i, (kind, between, display) in enumerate(rows):
        lines.append(_row("game.exe", 4242, "0x2A70D2CAC00", kind, 2000 + i, between, display))
        lines.append(_row("dwm.exe", 1268, "0x224B280A1C0", "Application", 2500 + i, "16.6667",
                          "16.6667"))
    if not frame_type:
        drop = HEADER.split(",").index("FrameType")
        lines = [",".join(c for j, c in enumerate(line.split(",")) if j != drop) for line in lines]
    end = "\r\n" if crlf else "\n"
    return b"\xef\xbb\xbf" + end.join(lines).encode("utf-8") + end.encode("ascii")


def _capture(data: bytes, tmp_path: pathlib.Path, name: str = "pm2.csv"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_bytes(data)
    [capture] = read_capture_file(path, name=name)
    return capture


def test_reader_carries_frame_type_and_display_change_aligned_with_frame_times(
    tmp_path: pathlib.Path,
) -> None:
    capture = _capture(presentmon_2x(), tmp_path)
    assert capture.group is not None and capture.group.application == "game.exe"
    assert capture.frame_times_ms.tolist() == [20, 20, 20, 20, 40, 40, 20, 20]
    assert capture.frame_types is not None and capture.display_change_ms is not None
    assert capture.frame_types.tolist() == [t for t, _, _ in GAME_ROWS]
    shown = capture.display_change_ms.tolist()
    assert shown[:6] == [10, 10, 10, 10, 20, 20] and np.isnan(shown[6]) and shown[7] == 20
    assert capture.display_change_column == "MsBetweenDisplayChange"


def test_hand_computed_small_case(tmp_path: pathlib.Path) -> None:
    """8 frames, 4 generated; application frames 20, 20, 40, 20 ms; display changes 10, 10, 10,
    10, 20, 20, (NA), 20 ms.

    SOP (every frame, unchanged): 1000 * 8 / 200 = 40.0 FPS, both lows 1000 / 40 = 25.0.
    Application frames: 1000 * 4 / 100 = 40.0, lows 25.0, gap 1 - 25 / 40 = 0.375.
    Display: 7 changes over 100 ms = 70.0 FPS, lows 1000 / 20 = 50.0, gap 1 - 50 / 70 = 0.2857.
    """
    [entry] = measure([str(_write(tmp_path, "pm2.csv", presentmon_2x()))], None, None)
    assert (entry["frames"], entry["avg_fps"], entry["low_1pct_fps"], entry["low_0_1pct_fps"]) == (
        8, 40.0, 25.0, 25.0)
    assert entry["frame_diagnostics"] == {
        "frame_generation": {
            "column": "FrameType",
            "frames": 8,
            "generated_frames": 4,
            "generated_share": 0.5,
            "frame_types": [{"frame_type": "AMD AFMF", "frames": 4},
                            {"frame_type": "Application", "frames": 4}],
            "application": {"frames": 4, "avg_fps": 40.0, "low_1pct_fps": 25.0,
                            "low_0_1pct_fps": 25.0, "consistency_gap": 0.375, "stutter": 0.0},
        },
        "display": {
            "column": "MsBetweenDisplayChange",
            "not_displayed": 1,
            "figures": {"frames": 7, "avg_fps": 70.0, "low_1pct_fps": 50.0,
                        "low_0_1pct_fps": 50.0, "consistency_gap": 0.2857, "stutter": 0.0},
        },
    }


def _write(tmp_path: pathlib.Path, name: str, data: bytes) -> pathlib.Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_sop_figures_are_the_same_with_and_without_frame_type(tmp_path: pathlib.Path) -> None:
    """Generated frames marked or not, the pinned figures are the present intervals of every
    frame of the group: FrameType never changes them."""
    with_type = _write(tmp_path, "with.csv", presentmon_2x())
    without = _write(tmp_path, "without.csv", presentmon_2x(frame_type=False))
    a, b = measure([str(with_type), str(without)], None, None)
    pinned = [k for k in a if k not in ("file", "frame_diagnostics", "validity",
                                        "frame_generation")]
    assert {k: a[k] for k in pinned} == {k: b[k] for k in pinned}
    # The multiplier is FrameType's own figure: shown with the column, why not without it.
    assert a["frame_generation"]["observed_multiplier"] == 2.0
    assert b["frame_generation"]["not_shown"] is not None
    assert a["frame_diagnostics"]["frame_generation"] is not None
    # Only the check that reads FrameType differs: it runs on one file and not the other.
    assert a["validity"]["checked"] == ["generated_zero_interval", *b["validity"]["checked"]]
    assert b["frame_diagnostics"]["frame_generation"] is None  # no column: null, never 0
    assert a["frame_diagnostics"]["display"] == b["frame_diagnostics"]["display"]


def test_other_generator_names_count_as_generated_and_na_type_as_unknown(
    tmp_path: pathlib.Path,
) -> None:
    rows = (("Intel XeSS-FG", "16.0000", "8.0000"), ("Application", "16.0000", "8.0000"),
            ("AMD_AFMF", "16.0000", "8.0000"), ("NA", "16.0000", "8.0000"),
            ("Application", "16.0000", "8.0000"))
    capture = _capture(presentmon_2x(rows=rows, crlf=False), tmp_path)
    assert capture.frame_types is not None
    assert capture.frame_types.tolist() == ["Intel XeSS-FG", "Application", "AMD_AFMF", None,
                                            "Application"]
    fg = compute_frame_diagnostics(capture, WEIGHTS).frame_generation
    assert fg is not None
    assert (fg.frames, fg.generated_frames, fg.generated_share) == (4, 2, 0.5)
    assert [(t.frame_type, t.frames) for t in fg.frame_types] == [
        ("AMD_AFMF", 1), ("Application", 2), ("Intel XeSS-FG", 1)]
    assert fg.application is not None and fg.application.frames == 2
    # The reader's codes and the csv module's strings are counted alike.
    assert capture.frame_type_codes is not None
    assert compute_frame_generation(capture.frame_times_ms, capture.frame_types, WEIGHTS) == fg
    exact = presentmon.exact_path(presentmon_2x(rows=rows, crlf=False), "c.csv")
    assert exact.frame_type_codes is None
    assert compute_frame_diagnostics(exact, WEIGHTS).frame_generation == fg


def test_type_names_written_two_ways_are_one_type_on_both_paths() -> None:
    """" AMD AFMF" and "AMD AFMF" are two categories to polars but one type as the csv module
    reads it (stripped): the fast path's code table then holds the name twice, and its counts
    must merge them exactly as the csv module's strings count."""
    rows = (("AMD AFMF", "16.0000", "8.0000"), (" AMD AFMF", "16.0000", "8.0000"),
            ("Application ", "16.0000", "8.0000"), ("Application", "32.0000", "8.0000"),
            ("Application", "16.0000", "8.0000"))
    data = presentmon_2x(rows=rows, crlf=False)
    fast, exact = presentmon.read_each_path(data, "c.csv")
    assert fast is not None and fast.frame_type_codes is not None
    assert len(fast.frame_type_codes.names) > len(set(fast.frame_type_codes.names))
    fg = compute_frame_diagnostics(fast, WEIGHTS).frame_generation
    assert fg is not None and fg == compute_frame_diagnostics(exact, WEIGHTS).frame_generation
    assert [(t.frame_type, t.frames) for t in fg.frame_types] == [("AMD AFMF", 2), ("Application", 3)]
    assert (fg.generated_frames, fg.application is not None and fg.application.frames) == (2, 3)


def test_all_display_changes_missing_gives_null_figures_not_zero(tmp_path: pathlib.Path) -> None:
    rows = (("Application", "16.0000", "NA"), ("Application", "16.0000", "NA"))
    diag = compute_frame_diagnostics(_capture(presentmon_2x(rows=rows), tmp_path), WEIGHTS)
    assert diag.display is not None
    assert (diag.display.not_displayed, diag.display.figures) == (2, None)


def test_a_display_cell_that_is_no_number_is_refused_with_its_line(
    tmp_path: pathlib.Path,
) -> None:
    rows = (("Application", "16.0000", "16.0000"), ("Application", "16.0000", "abc"))
    path = _write(tmp_path, "bad.csv", presentmon_2x(rows=rows))
    with pytest.raises(CaptureFormatError) as err:
        read_capture_file(path, name="bad.csv")
    # Line 1 header, 2-3 first presents, then game/dwm alternate: the second game row is line 6.
    assert str(err.value) == "bad.csv:6: MsBetweenDisplayChange: expected a number, got 'abc'"


def test_a_bad_display_cell_of_another_group_is_refused_too(tmp_path: pathlib.Path) -> None:
    """Every cell read is checked, whichever group it belongs to (as the interval is)."""
    data = presentmon_2x().replace(b"16.6667,16.6667,", b"16.6667,x1,", 1)
    path = _write(tmp_path, "bad.csv", data)
    with pytest.raises(CaptureFormatError) as err:
        read_capture_file(path, name="bad.csv")
    # Line 4 is game.exe's first frame, line 5 dwm.exe's first row with an interval.
    assert str(err.value) == "bad.csv:5: MsBetweenDisplayChange: expected a number, got 'x1'"


@pytest.mark.parametrize("block", [200, 1 << 24])
def test_the_frame_columns_come_from_the_one_read_of_the_file(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """No second read for FrameType and the display column: polars parses each byte after the
    header once (in blocks), and the exact path gives the same columns. (An empty cell makes
    a block be parsed a second time as text: see the end.)"""
    import polars as pl

    from certgen.captures import presentmon

    rows = (("Application", "16.0000", "0.0000"), (" AMD AFMF ", "16.0000", "NA"),
            ("NA", "16.0000", "8.0000"), ("Application", "NA", "8.0000"),
            ("NA", "17.5000", "9.2500"))
    data = presentmon_2x(rows=rows)
    parsed: list[int] = []
    read_csv = pl.read_csv

    def counting(source: bytes, *args: object, **kwargs: object) -> object:
        parsed.append(len(source))
        return read_csv(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl, "read_csv", counting)
    monkeypatch.setattr(presentmon, "_BLOCK", block)
    capture = _capture(data, tmp_path)
    assert sum(parsed) == len(data) - len(b"\xef\xbb\xbf" + HEADER.encode() + b"\r\n")
    assert capture.frame_times_ms.tolist() == [16, 16, 16, 17.5]  # the NA interval left out
    assert capture.frame_types is not None and capture.display_change_ms is not None
    assert capture.frame_types.tolist() == ["Application", "AMD AFMF", None, None]
    assert capture.display_change_ms[[0, 2, 3]].tolist() == [0.0, 8.0, 9.25]  # 0 stays 0
    assert np.isnan(capture.display_change_ms[1])  # NA is a null
    monkeypatch.setattr(pl, "read_csv", read_csv)
    # An empty FrameType cell is None, as NA is, on both paths.
    for source in (data, data.replace(b",NA,2002,", b",,2002,")):
        fast, exact = presentmon.read_each_path(source, "pm2.csv")
        assert fast is not None
        for got in (fast, exact):
            assert got.frame_types is not None and got.display_change_ms is not None
            assert got.frame_types.tolist() == capture.frame_types.tolist()
            assert np.array_equal(got.display_change_ms, capture.display_change_ms,
                                  equal_nan=True)


def test_no_columns_no_diagnostics(tmp_path: pathlib.Path) -> None:
    """A format without the columns gives null, never 0 (MangoHud here)."""
    log = ("os,cpu,gpu,ram,kernel,driver,cpuscheduler\nLinux,cpu,gpu,1,k,d,s\n"
           "fps,frametime,cpu_load,gpu_load,elapsed\n"
           + "".join(f"100,10.0,1,1,{(i + 1) * 10_000_000}\n" for i in range(50)))
    capture = _capture(log.encode(), tmp_path, "m.csv")
    assert capture.frame_types is None and capture.display_change_ms is None
    diag = compute_frame_diagnostics(capture, WEIGHTS)
    assert diag.model_dump() == {
        "frame_generation": None, "display": None,
        "frame_generation_observed": {
            "observed_multiplier": None, "per_second": None,
            "not_shown": "not shown by this capture: it has no frame-type column (PresentMon 2.x "
                         "FrameType)"}}


def test_capframex_json_display_changes_with_nulls(tmp_path: pathlib.Path) -> None:
    doc = {"Runs": [{"CaptureData": {"MsBetweenPresents": [10.0, 10.0, 10.0, 10.0],
                                     "MsBetweenDisplayChange": [0.0, 20.0, None, 20.0]}}]}
    capture = _capture(json.dumps(doc).encode(), tmp_path, "s.json")
    assert capture.display_change_ms is not None
    assert capture.display_change_ms.tolist()[:2] == [0.0, 20.0]
    assert np.isnan(capture.display_change_ms[2])
    display = compute_frame_diagnostics(capture, WEIGHTS).display
    assert display is not None and display.figures is not None
    assert (display.not_displayed, display.figures.frames, display.figures.avg_fps) == (2, 2, 50.0)


def test_capframex_json_display_list_of_the_wrong_length_is_refused(
    tmp_path: pathlib.Path,
) -> None:
    doc = {"Runs": [{"CaptureData": {"MsBetweenPresents": [10.0, 10.0],
                                     "MsBetweenDisplayChange": [10.0]}}]}
    path = _write(tmp_path, "s.json", json.dumps(doc).encode())
    with pytest.raises(CaptureFormatError) as err:
        read_capture_file(path, name="s.json")
    assert str(err.value) == ("s.json: Runs[0].CaptureData.MsBetweenDisplayChange: expected a "
                              "list of 2 numbers (one per frame)")


# ------------------------------------------------------------------------------ real files


def test_real_2x_and_1x_of_one_trace_agree_on_display_timing() -> None:
    """test_case_5 as written by 2.x (NA for a frame never displayed) and by --v1_metrics (0):
    the same 84 frames are not displayed and the display figures agree."""
    [v2] = read_capture_file(REAL / "test_case_5.csv", name="test_case_5.csv")
    [v1] = read_capture_file(REAL / "test_case_5_v1.csv", name="test_case_5_v1.csv")
    assert v2.display_change_column == "MsBetweenDisplayChange"
    assert v1.display_change_column == "msBetweenDisplayChange"
    assert v2.display_change_ms is not None and v1.display_change_ms is not None
    assert int(np.isnan(v2.display_change_ms).sum()) == 84  # NA in 2.x
    assert int((v1.display_change_ms == 0).sum()) == 84  # 0 in 1.x
    a = compute_frame_diagnostics(v2, WEIGHTS).display
    b = compute_frame_diagnostics(v1, WEIGHTS).display
    assert a is not None and b is not None and a.figures is not None and b.figures is not None
    assert a.not_displayed == b.not_displayed == 84
    assert (a.figures.avg_fps, a.figures.low_1pct_fps) == (b.figures.avg_fps, b.figures.low_1pct_fps)
    # A 60 Hz display showed the 89 FPS benchmark: the display figures say so.
    assert a.figures.avg_fps == 60.0


def test_real_2x_frame_types_are_all_application_so_app_figures_are_the_sop_figures() -> None:
    [capture] = read_capture_file(REAL / "test_case_5.csv", name="test_case_5.csv")
    diag = compute_frame_diagnostics(capture, WEIGHTS)
    sop = compute_metrics(capture.frame_times_ms, WEIGHTS).sop
    fg = diag.frame_generation
    assert fg is not None and fg.application is not None
    assert (fg.frames, fg.generated_frames, fg.generated_share) == (258, 0, 0.0)
    assert (fg.application.avg_fps, fg.application.low_1pct_fps, fg.application.low_0_1pct_fps,
            fg.application.consistency_gap, fg.application.stutter) == (
        sop.avg_fps, sop.low_1pct_fps, sop.low_0_1pct_fps, sop.consistency_gap, sop.stutter)


@pytest.mark.parametrize(("name", "has_type", "display_column"), [
    ("test_case_5_v2.csv", True, None),  # --v2_metrics: FrameType, DisplayedTime (not read)
    ("PresentMon-2.0.0_test_case_0.csv", False, None),
    ("PresentMon-1.5_trivflip.csv", False, "MsBetweenDisplayChange"),
    ("OCAT-MetroExodus.exe-2019-02-20T101522.csv", False, "MsBetweenDisplayChange"),
    ("CapFrameXFileWithHeader.csv", False, "MsBetweenDisplayChange"),
])
def test_real_files_carry_what_they_have_and_null_otherwise(
    name: str, has_type: bool, display_column: str | None
) -> None:
    [capture] = read_capture_file(REAL / name, name=name)
    assert (capture.frame_types is not None) == has_type
    assert capture.display_change_column == display_column
    assert (capture.display_change_ms is None) == (display_column is None)
    if capture.display_change_ms is not None:
        assert capture.display_change_ms.shape == capture.frame_times_ms.shape


def test_capframex_csv_dropped_frames_are_the_zero_display_changes() -> None:
    """CapFrameX's PresentMon 1.x table writes 0 for each Dropped=1 frame: all 4236 are the
    frames not displayed."""
    name = "CapFrameXFileWithHeader.csv"
    [capture] = read_capture_file(REAL / name, name=name)
    display = compute_frame_diagnostics(capture, WEIGHTS).display
    assert display is not None
    assert display.not_displayed == capture.dropped_frames == 4236


# ------------------------------------------------------------------ record and documents

DIAG = {
    "frame_generation": {
        "column": "FrameType", "frames": 8, "generated_frames": 4, "generated_share": 0.5,
        "frame_types": [{"frame_type": "AMD AFMF", "frames": 4},
                        {"frame_type": "Application", "frames": 4}],
        "application": {"frames": 4, "avg_fps": 40.0, "low_1pct_fps": 25.0,
                        "low_0_1pct_fps": 25.0, "consistency_gap": 0.375, "stutter": 0.0},
    },
    "display": {"column": "MsBetweenDisplayChange", "not_displayed": 1,
                "figures": {"frames": 7, "avg_fps": 70.0, "low_1pct_fps": 50.0,
                            "low_0_1pct_fps": 50.0, "consistency_gap": 0.2857, "stutter": 0.0}},
}


def _record_bytes(short_run: dict[str, object]) -> bytes:
    from recordkit import record_json

    return (json.dumps(record_json({"runs": [short_run]}), ensure_ascii=False, indent=2)
            + "\n").encode("utf-8")


def test_record_without_frame_diagnostics_round_trips_byte_for_byte() -> None:
    """A record of an older certgen has no runs[].frame_diagnostics and is written back without."""
    from certgen.record import dump_record, load_record

    data = _record_bytes({})
    assert b"frame_diagnostics" not in data
    assert dump_record(load_record(data)) == data


def test_record_with_frame_diagnostics_round_trips_byte_for_byte() -> None:
    from certgen.record import dump_record, load_record

    data = _record_bytes({"frame_diagnostics": DIAG})
    record = load_record(data)
    assert record.runs[0].frame_diagnostics is not None
    assert dump_record(record) == data


@pytest.mark.parametrize(("lang", "title", "tag", "share"), [
    ("en", "Frame generation and display timing", "diagnostic, not graded", "50.00% of 8 frames"),
    ("ru", "Генерация кадров и\u00a0вывод на\u00a0экран", "диагностика, в\u00a0оценку не\u00a0входит",
     "из\u00a08 кадров"),
    ("pt", "Geração de quadros e\u00a0exibição", "diagnóstico, fora da avaliação", "de 8 quadros"),
])
def test_certificate_shows_a_labelled_note_only_for_runs_with_diagnostics(
    lang: str, title: str, tag: str, share: str, snapshot: SnapshotAssertion
) -> None:
    from recordkit import complete_record

    from certgen.render.certificate import render_certificate_html

    with_diag = render_certificate_html(
        complete_record({"runs": [{"frame_diagnostics": DIAG}]}), lang, record_sha256="0" * 64)
    assert title in with_diag and tag in with_diag and share in with_diag
    assert 'class="frame-diagnostics"' in with_diag
    # The section as rendered: the figures named in words, as elsewhere on the page.
    section = with_diag.split('<section class="frame-diagnostics">', 1)[1].split("</section>")[0]
    assert "F₁" not in section and "F₀.₁" not in section
    assert section == snapshot
    for absent in ({}, {"frame_diagnostics": {"frame_generation": None, "display": None}}):
        html = render_certificate_html(complete_record({"runs": [absent]}), lang,
                                       record_sha256="0" * 64)
        assert 'class="frame-diagnostics"' not in html and title not in html


def test_report_shows_the_diagnostic_table_when_a_side_has_the_columns(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bundlekit import run_cli

    before = _write(tmp_path, "before.csv", presentmon_2x())
    after = _write(tmp_path, "after.csv", presentmon_2x(frame_type=False))
    code, _, err = run_cli(["compare", str(before), str(after), "--out", str(tmp_path / "r"),
                            "--lang", "en"], capsys)
    assert (code, err) == (0, "")
    [html] = [p.read_text(encoding="utf-8") for p in (tmp_path / "r").rglob("*.html")]
    section = html[html.index("Frame generation and display timing"):]
    assert "diagnostic, not graded" in section
    assert "50.00% of 8 frames" in section and "not in the capture" in section
    assert "<td class=\"num\">70.0</td>" in section  # from display changes, both sides
