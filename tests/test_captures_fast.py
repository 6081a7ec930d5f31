"""The polars fast path of the PresentMon reader: it reads what it can judge exactly as the csv
module does (NA as a null, CRLF, a BOM, many groups), and declines (_Suspect) everything else,
which then goes to the csv module for its exact, line-numbered error."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from capturekit import differing_fields
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import REAL
from strategies import presentmon_intervals

from certgen.captures import presentmon
from certgen.captures.detect import read_capture_file
from certgen.errors import CaptureFormatError

HEADER = (
    "Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,Dropped,"
    "TimeInSeconds,MsBetweenPresents,MsInPresentAPI"
)
PREFIX = "Game.exe,7124,0x000001D5E3F2A070,DXGI,0,0,"


def _captures(path: pathlib.Path) -> tuple[object, object] | None:
    """(fast capture, csv-module capture) of a file, or None when the fast path declines."""
    data = path.read_bytes()
    fast = presentmon.fast_path(data, path.name)
    return None if fast is None else (fast, presentmon.exact_path(data, path.name))


def _assert_same(vector: object, slow: object) -> None:
    assert np.array_equal(vector.frame_times_ms, slow.frame_times_ms, equal_nan=True)  # type: ignore[attr-defined]
    assert differing_fields(vector, slow) == []  # type: ignore[arg-type]


def _write(tmp_path: pathlib.Path, rows: list[str], *, eol: str = "\r\n", header: str = HEADER) -> pathlib.Path:
    path = tmp_path / "capture.csv"
    path.write_bytes((header + eol + "".join(r + eol for r in rows)).encode("utf-8"))
    return path


def _row(interval: str, *, dropped: str = "0", time: str = "1.000000", tail: str = "0.472") -> str:
    return f"{PREFIX}{dropped},{time},{interval},{tail}"


def test_the_real_one_group_capture_reads_the_same() -> None:
    both = _captures(REAL / "PresentMonTestOutputFilename.csv")
    assert both is not None
    _assert_same(*both)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(presentmon_intervals, min_size=1, max_size=40),
    drops=st.lists(st.sampled_from("01"), min_size=40, max_size=40),
    eol=st.sampled_from(["\r\n", "\n"]),
    times=st.lists(st.sampled_from(["0.1", "12.345678", "10218.015144", "7"]), min_size=40,
                   max_size=40),
)
def test_whatever_it_reads_equals_the_csv_module(
    tmp_path_factory: pytest.TempPathFactory, values: list[str], drops: list[str], eol: str,
    times: list[str],
) -> None:
    rows = [_row(v, dropped=drops[i], time=times[i]) for i, v in enumerate(values)]
    path = _write(tmp_path_factory.mktemp("v"), rows, eol=eol)
    both = _captures(path)
    assert both is not None  # every drawn interval is a number or NA: the fast path reads it
    _assert_same(*both)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([_row("7.262"), _row("7.262") + ",1"], id="a longer row"),
        pytest.param([_row("7.262"), "Game.exe,7124,0x000001D5E3F2A070,DXGI,0,0,0,7.262"],
                     id="a shorter row"),
        pytest.param([_row("7.262"), _row("7.2\r62")], id="a lone CR"),
        pytest.param([_row("7.262"), _row("7.262", dropped="2")], id="a Dropped flag of 2"),
        pytest.param([_row("7.262"), _row("7.2.2")], id="a second point"),
        pytest.param([_row("7.262"), _row("")], id="an empty interval"),
        pytest.param([_row("7.262"), _row(" NA")], id="a spaced NA"),
        pytest.param([_row("7.262"), _row("inf")], id="an infinite number"),
        pytest.param([_row("7.262"), _row("1_0")], id="an underscore"),
        pytest.param([_row("7.262").replace("Game.exe", " Game.exe")], id="a spaced key"),
        pytest.param([_row("7.262"), ""], id="a blank line"),
    ],
)
def test_it_declines_what_it_cannot_prove(tmp_path: pathlib.Path, rows: list[str]) -> None:
    assert _captures(_write(tmp_path, rows)) is None


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([_row("7.262"), _row("7.262").replace("Game.exe", "Other.exe")],
                     id="a second group"),
        pytest.param([_row("7.262"), _row('"7.262"')], id="a quoted field"),
        pytest.param([_row("7.262").replace("DXGI", '"DX,GI"')], id="a quoted comma"),
        pytest.param([_row("7.262"), _row("7e2"), _row("-7.262"), _row("72."), _row(".5")],
                     id="exponents, signs, points at either end"),
        pytest.param([_row("123456.789"), _row("0.1000000000000000055511151231257827")],
                     id="long numbers"),
        pytest.param([_row("7.262"), _row("NA"), _row("8.1", dropped="Error")],
                     id="NA and Error"),
        pytest.param([_row("7.262", tail="0.47é")], id="non-ASCII"),
        pytest.param([_row("7.262"), _row("NA", tail=""), _row("8.5", time="")],
                     id="empty cells in unread columns (the numbers are read as text)"),
        pytest.param([_row("7.262"), "," + _row("8.5").split(",", 1)[1]],
                     id="an empty first cell: a group named ''"),
    ],
)
def test_it_reads_what_the_csv_module_reads(tmp_path: pathlib.Path, rows: list[str]) -> None:
    both = _captures(_write(tmp_path, rows))
    assert both is not None
    _assert_same(*both)


EDGE_NUMBERS = [
    "9007199254740993", "2.2250738585072011e-308", "4.9406564584124654e-324",
    "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203124",
    "7.2624999999999999999999", "123456789012345678901234567890.5", "0.30000000000000004",
    "1e308", "1.7976931348623157e308", "16.666666666666668", "0.1", "33.3335", "1e-320",
]


@pytest.mark.parametrize("token", EDGE_NUMBERS)
def test_polars_rounds_edge_numbers_as_float_does(tmp_path: pathlib.Path, token: str) -> None:
    """Halfway cases, subnormals, 17+ digits: the fast path gives float()'s value bit for bit."""
    both = _captures(_write(tmp_path, [_row("7.262"), _row(token)]))
    assert both is not None
    _assert_same(*both)
    assert both[0].frame_times_ms[1] == float(token)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e6, allow_nan=False), st.sampled_from(["r", "e", "f"]))
def test_polars_parses_random_decimals_as_float_does(value: float, style: str) -> None:
    import polars as pl

    token = {"r": repr(value), "e": f"{value:.17e}", "f": f"{value:.25f}"}[style]
    parsed = presentmon._numbers(pl.Series([token, "NA"])).to_list()
    assert parsed[0] == float(token) and parsed[1] is None


def test_no_final_newline_is_declined(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "capture.csv"
    path.write_bytes((HEADER + "\n" + _row("7.262") + "\n" + _row("8.1")).encode())
    assert _captures(path) is None


def test_a_ragged_row_still_gets_its_line_number(tmp_path: pathlib.Path) -> None:
    path = _write(tmp_path, [_row("7.262")] * 5 + [_row("7.262") + ",1"] + [_row("7.262")] * 3)
    with pytest.raises(CaptureFormatError) as error:
        read_capture_file(path, name="c.csv")
    assert str(error.value) == "c.csv:7: expected 10 fields as in the header, got 11"


def test_many_chunks_read_the_same(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small chunks, so that the byte checks beside polars walk many of them on a small file."""
    monkeypatch.setattr(presentmon, "_CHUNK", 512)
    rows = [
        _row(f"{7 + i % 13}.{i % 1000:03d}", dropped="1" if i % 17 == 0 else "0",
             time=f"{i * 0.0071:.6f}")
        for i in range(400)
    ]
    both = _captures(_write(tmp_path, rows))
    assert both is not None
    _assert_same(*both)
    assert both[0].dropped_frames == 24  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "bad",
    [",1", "", "\rx", "\r", "\0", "\xff"],
    ids=["longer", "shorter", "lone CR", "CR before CRLF", "NUL", "not UTF-8"],
)
def test_a_bad_row_in_a_later_chunk_is_declined(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    """Each of these makes the csv module read the file otherwise (or refuse it)."""
    monkeypatch.setattr(presentmon, "_CHUNK", 512)
    if bad == "":
        wrong = "Game.exe,7124,0x1,DXGI,0,0,0,1.0,7.262"
    elif bad in ("\0", "\xff"):
        wrong = _row("7.262", tail="0.4" + bad + "72")
    else:
        wrong = _row("7.262") + bad
    rows = [_row("7.262")] * 300 + [wrong] + [_row("7.262")] * 20
    path = tmp_path / "capture.csv"
    path.write_bytes(
        (HEADER + "\r\n" + "".join(r + "\r\n" for r in rows)).encode("utf-8", "surrogateescape")
        .replace("\xff".encode(), b"\xff")
    )
    assert _captures(path) is None


def test_other_control_bytes_are_read_as_the_csv_module_reads_them(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vertical tab, a form feed or a tab is no line end to the csv module (nor to polars)."""
    monkeypatch.setattr(presentmon, "_CHUNK", 512)
    rows = [_row("7.262")] * 300
    rows[100] = _row("7.262", tail="0.4\x0b72")
    rows[200] = PREFIX.replace("DXGI", "DX\x0cGI\t") + "0,1.0,8.5,0.472"
    both = _captures(_write(tmp_path, rows))
    assert both is not None
    _assert_same(*both)


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_an_empty_number_beside_na_is_read_as_text_and_judged(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """polars reads both `NA` and an empty cell as null; with an empty cell anywhere in the file
    the numbers are read again as text, so the empty interval is refused as the csv module
    refuses it (with its line), never counted as a missing one."""
    monkeypatch.setattr(presentmon, "_CHUNK", 512)
    rows = [_row("7.262")] * 300
    rows[1] = _row("NA")
    rows[{"first": 0, "middle": 150, "last": 299}[where]] = _row("")
    path = _write(tmp_path, rows)
    assert _captures(path) is None
    with pytest.raises(CaptureFormatError, match="MsBetweenPresents"):
        read_capture_file(path, name="c.csv")


def test_an_empty_cell_elsewhere_beside_na_reads_as_the_csv_module_does(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(presentmon, "_CHUNK", 512)
    rows = [_row("7.262")] * 300
    rows[1] = _row("NA")
    rows[200] = _row("8.5", tail="")  # an empty MsInPresentAPI, a column not read
    both = _captures(_write(tmp_path, rows))
    assert both is not None
    _assert_same(*both)
    assert both[0].missing_intervals == 1  # type: ignore[attr-defined]


_PREFIX = 64 * 1024
REAL_CSVS = sorted(p.name for p in REAL.glob("*.csv")) if REAL.is_dir() else []


@pytest.mark.parametrize("name", REAL_CSVS)
@pytest.mark.parametrize("block", [97, 4096])
def test_real_files_read_in_small_blocks_as_the_csv_module_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, name: str, block: int
) -> None:
    """A mapped file is read a block of whole lines at a time (_BLOCK, 64 MiB): with tiny
    blocks, every real file gives what one block and the csv module give, through the mapped
    file too. Blocks shorter than a line (97 bytes) make one block per line, so they read the
    file's first 64 KiB of whole lines (every column and token shape is there; the whole
    file in 97-byte blocks took 14 s for CapFrameX's 850 KB); 4096-byte blocks read it all."""
    monkeypatch.setattr(presentmon, "_BLOCK", block)
    path = REAL / name
    if block < 4096 and path.stat().st_size > _PREFIX:
        data = path.read_bytes()
        path = tmp_path / name
        path.write_bytes(data[: data.rindex(b"\n", 0, _PREFIX) + 1])
    [whole] = read_capture_file(path, name=name)
    monkeypatch.undo()  # the default: one block
    [once] = read_capture_file(path, name=name)
    _assert_same(whole, once)
    data = path.read_bytes()
    if not data.lstrip(b"\xef\xbb\xbf").startswith(b"//"):  # CapFrameX: exact path only
        exact = presentmon.exact_path(data, name)
        _assert_same(whole, exact)


def test_many_blocks_read_the_same(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of a few lines, through the mapped file: the same capture as the csv module's,
    with NA intervals and dropped frames in every block."""
    monkeypatch.setattr(presentmon, "_BLOCK", 300)
    rows = [
        _row("NA" if i % 29 == 0 else f"{7 + i % 13}.{i % 1000:03d}",
             dropped="1" if i % 17 == 0 else "0", time=f"{i * 0.0071:.6f}")
        for i in range(500)
    ]
    path = _write(tmp_path, rows)
    exact = presentmon.exact_path(path.read_bytes(), path.name)
    fast = presentmon.fast_path(path.read_bytes(), path.name)
    assert fast is not None

    def no_slow_path(*args: object) -> None:
        raise AssertionError("the mapped file left the fast path")

    monkeypatch.setattr(presentmon, "_slow", no_slow_path)
    [mapped] = read_capture_file(path, name=path.name)
    _assert_same(fast, exact)
    _assert_same(mapped, exact)
    assert exact.missing_intervals == 18 and exact.dropped_frames == 30


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (",1", "c.csv:302: expected 10 fields as in the header, got 11"),
        ("", "c.csv:302: expected 10 fields as in the header, got 9"),
        # the csv module ends a line at a lone CR: `x` is line 303
        ("\rx", "c.csv:303: expected 10 fields as in the header, got 1"),
        (',"q"', "c.csv:302: expected 10 fields as in the header, got 11"),
    ],
    ids=["longer", "shorter", "lone CR", "a quote"],
)
def test_a_bad_row_in_a_later_block_keeps_its_line_number(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, bad: str, error: str
) -> None:
    """A block after the first one with a row the fast path cannot vouch for: the exact path
    names the line (a quote sends the whole file to the quoted route, which declines too)."""
    monkeypatch.setattr(presentmon, "_BLOCK", 256)
    wrong = _row("7.262") + bad if bad != "" else "Game.exe,7124,0x1,DXGI,0,0,0,1.0,7.262"
    rows = [_row("7.262")] * 300 + [wrong] + [_row("7.262")] * 20
    path = _write(tmp_path, rows)
    with pytest.raises(CaptureFormatError) as raised:
        read_capture_file(path, name="c.csv")
    assert str(raised.value) == error


def test_a_quote_in_a_later_block_is_read_whole(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quoted cells may span lines, so a quote found in a later block sends the whole file to
    the quoted route, which still reads it without the csv module."""
    monkeypatch.setattr(presentmon, "_BLOCK", 256)
    rows = [_row("7.262")] * 300 + [_row("8.5", tail='"0.472"')] + [_row("7.262")] * 20
    path = _write(tmp_path, rows)
    exact = presentmon.exact_path(path.read_bytes(), path.name)
    fast = presentmon.fast_path(path.read_bytes(), path.name)
    assert fast is not None
    _assert_same(fast, exact)
    assert exact.frame_times_ms.size == 321 and exact.frame_times_ms[300] == 8.5


@pytest.mark.parametrize("processes", [3, 40])
def test_many_groups_are_counted_as_the_csv_module_counts_them(
    tmp_path: pathlib.Path, processes: int
) -> None:
    """Groups are counted by polars on their key codes, in order of first appearance: the same
    groups, sizes and file order as the csv module's."""
    rows = [
        f"App{(i * 7) % processes}.exe,{1000 + (i * 7) % processes},0x{(i * 7) % processes:X},"
        f"DXGI,0,0,0,{i * 0.01:.6f},{7 + i % 5}.25,0.472"
        for i in range(processes * 9 + 4)
    ]
    path = _write(tmp_path, rows)
    both = _captures(path)
    assert both is not None
    _assert_same(*both)
    assert len(both[1].groups_left_out) == processes - 1  # type: ignore[attr-defined]
