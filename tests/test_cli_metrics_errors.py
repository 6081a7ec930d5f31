"""Malformed captures: `certgen metrics` refuses each with one exact line and exit 1.

Fixtures are written into tmp_path; the test runs from there so messages name the file exactly
as the user typed it (captures/...).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
from bundlekit import run_cli
from realdata import REAL

PM_HEADER = "Application,ProcessID,SwapChainAddress,Dropped,MsBetweenPresents\n"


def pm_rows(*values: str) -> str:
    return PM_HEADER + "".join(f"game.exe,1,0x1,0,{v}\n" for v in values)


def frame_line(tick: int, interval: float | None, kind: str = "full") -> str:
    return json.dumps(
        {"schema_version": 1, "tick": tick, "t_ms": 0.0, "sim_ms": None, "submit_ms": 1.0,
         "gpu_ms": None, "gpu_tick": None, "present_interval_ms": interval, "kind": kind,
         "size": [160, 96], "device": "desktop", "hud_ms": None},
        separators=(",", ":"),
    ) + "\n"


MANGOHUD_HEADER = "fps,frametime,cpu_load,gpu_load,elapsed\n"

# (file name, content: str is UTF-8 text, bytes are written as is, None = do not create,
#  "DIR" = a directory), expected stderr line.
CASES = [
    ("empty.csv", "", "captures/empty.csv: empty file, expected a capture"),
    ("blank.csv", "\n\n  \n", "captures/blank.csv: empty file, expected a capture"),
    ("header.csv", PM_HEADER, "captures/header.csv:1: no frame rows after the header"),
    ("text.csv", pm_rows("16.6", "abc"),
     "captures/text.csv:3: MsBetweenPresents: expected a number, got 'abc'"),
    ("nan.csv", pm_rows("16.6", "16.7", "NaN"),
     "captures/nan.csv:4: MsBetweenPresents: expected a finite number, got 'NaN'"),
    ("inf.csv", pm_rows("inf", "16.7"),
     "captures/inf.csv:2: MsBetweenPresents: expected a finite number, got 'inf'"),
    ("zero.csv", pm_rows("0", "0.0", "0"),
     ("captures/zero.csv: no frame with a positive frame time (3 dropped as <= 0); "
     "the run must be captured again")),
    ("negative.csv", pm_rows("-1.5", "-16.6"),
     ("captures/negative.csv: no frame with a positive frame time (2 dropped as <= 0); "
     "the run must be captured again")),
    ("nocolumn.csv", ("//GameName=x.exe\nApplication,ProcessID,SwapChainAddress,Dropped\n"
     "x.exe,1,0x1,0\n"),
     ("captures/nocolumn.csv:2: no frame-time column: expected MsBetweenPresents, "
     "msBetweenPresents or FrameTime")),
    ("unknown.csv", "time,value\n1,2\n",
     ("captures/unknown.csv:1: not a capture format certgen reads: the first line is "
     "'time,value' (expected a PresentMon, OCAT, FrameView, CapFrameX, MangoHud, frame-stats "
     "or benchmark CSV file)")),
    ("short.csv", PM_HEADER + "game.exe,1,0x1,0,16.6\ngame.exe,1,0x1,16.6\n",
     "captures/short.csv:3: expected 5 fields as in the header, got 4"),
    ("long.csv", PM_HEADER + "game.exe,1,0x1,0,16.6,7\ngame.exe,1,0x1,0,16.6\n",
     "captures/long.csv:2: expected 5 fields as in the header, got 6"),
    ("wide.csv", "Application,ProcessID,SwapChainAddress,Dropped,MsBetweenPresents,Runtime,"
     "PresentMode\n" + "g.exe,1,0x1,0,16.6,DXGI,Flip\n" * 3 + "g.exe,1,0x1,0,16.6,DXGI,Flip,x\n",
     "captures/wide.csv:5: expected 7 fields as in the header, got 8"),
    ("dropped.csv", pm_rows("16.6").replace(",0,16.6", ",yes,16.6"),
     "captures/dropped.csv:2: Dropped: expected 0 or 1, got 'yes'"),
    ("truncated.json", '{"Info": {"GPU": "x"},\n "Runs": [{"CaptureData": {"MsBetweenPresents": [1.0,',
     "captures/truncated.json:2: not valid JSON: Expecting value (column 54)"),
    ("runs.json", '{"Runs": {}}', ("captures/runs.json: Runs: expected a non-empty list of runs, "
     "got an object")),
    ("noruns.json", '{"Hash": "x", "Info": {}}',
     "captures/noruns.json: Runs: expected a non-empty list of runs, got nothing"),
    ("emptyruns.json", '{"Runs": []}',
     "captures/emptyruns.json: Runs: expected a non-empty list of runs, got an empty list"),
    ("value.json", '{"Runs": [{"CaptureData": {"MsBetweenPresents": [16.6, "x"]}}]}',
     'captures/value.json: Runs[0].CaptureData.MsBetweenPresents[1]: expected a number, got "x"'),
    ("nodata.json", '{"Runs": [{"SensorData2": {}}]}',
     "captures/nodata.json: Runs[0].CaptureData: expected an object, got null"),
    ("stats.jsonl", frame_line(0, None) + "garbage\n" + frame_line(1, 16.6),
     "captures/stats.jsonl:2: expected one JSON object per line, got 'garbage'"),
    ("twice.jsonl", frame_line(0, None) + frame_line(1, 16.6) + frame_line(0, None),
     ("captures/twice.jsonl:3: tick 0 after tick 1: two renderers wrote this file; capture one "
     "run per file")),
    ("sampled.csv", MANGOHUD_HEADER + "".join(
        f"60,16.6,10,20,{i * 1_000_000_000}\n" for i in range(10)),
     ("captures/sampled.csv: a sampled log, not one line per frame: its 10 frame times add up "
     "to 0.1 s of a 9.0 s log; record it again with log_interval=0")),
    ("junk.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00",
     "captures/junk.bin: binary data, not a text capture (NUL byte at offset 8)"),
    ("latin1.csv", "Application,MsBetweenPresents\ncaf\xe9.exe,16.6\n".encode("latin-1"),
     "captures/latin1.csv: not UTF-8 text (byte 0xe9 at offset 33)"),
    ("utf16.csv", pm_rows("16.6").encode("utf-16"),
     "captures/utf16.csv: UTF-16 text; save the capture as UTF-8"),
    ("utf16be.csv", pm_rows("16.6").encode("utf-16-be"),
     "captures/utf16be.csv: UTF-16 text; save the capture as UTF-8"),
    ("folder", "DIR", "captures/folder: is a directory, expected a capture file"),
    ("missing.csv", None, "captures/missing.csv: no such file"),
]


@pytest.mark.parametrize(("file", "content", "message"), CASES, ids=[c[0] for c in CASES])
def test_malformed_capture_is_refused_with_one_exact_line(
    file: str, content: str | bytes | None, message: str, tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "captures"
    folder.mkdir()
    if content == "DIR":
        (folder / file).mkdir()
    elif isinstance(content, bytes):
        (folder / file).write_bytes(content)
    elif content is not None:
        (folder / file).write_text(content, encoding="utf-8", newline="")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["metrics", f"captures/{file}"], capsys)
    assert (code, out, err) == (1, "", f"certgen: {message}\n")
    # With --json the array names the refused file with the same one-line message.
    code, out, err = run_cli(["metrics", "--json", f"captures/{file}"], capsys)
    assert (code, err) == (1, f"certgen: {message}\n")
    assert json.loads(out) == [{"file": f"captures/{file}", "error": message}]


def test_forced_format_reports_what_is_missing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "log.csv").write_text("fps,frametime,elapsed\n60,16.6,0\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli(["metrics", "--format", "presentmon", "log.csv"], capsys)
    assert (code, err) == (
        1, ("certgen: log.csv:1: no frame-time column: expected MsBetweenPresents, "
        "msBetweenPresents or FrameTime\n"))


def test_unknown_process_lists_the_groups(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pm.csv").write_text(
        PM_HEADER + "a.exe,1,0x1,0,10\na.exe,1,0x1,0,10\nb.exe,2,0x2,0,10\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["metrics", "--process", "c.exe", "pm.csv"], capsys)
    assert (code, out, err) == (
        1, "", ("certgen: pm.csv: no process named 'c.exe'; groups: a.exe (pid 1, swap chain "
        "0x1): 2 rows; b.exe (pid 2, swap chain 0x2): 1 rows\n"))


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["metrics", "--format", "excel", "x.csv"], capsys)
    assert code == 2 and "Invalid value for '--format'" in err
    code, _, err = run_cli(["metrics"], capsys)
    assert code == 2 and "Missing argument 'CAPTURE...'" in err


def test_a_batch_reports_every_readable_file_and_names_each_refused_one(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real captures around two bad files: nothing stops at the first bad one."""
    (tmp_path / "bad.csv").write_text(pm_rows("10", "x"), encoding="utf-8")
    monkeypatch.chdir(REAL)
    bad = str(tmp_path / "bad.csv")
    missing = str(tmp_path / "missing.csv")
    files = ["PresentMonTestOutputFilename.csv", bad, "test_case_5.csv", missing,
             "PresentMon-2.0.0_test_case_0.csv"]
    bad_line = f"{bad}:3: MsBetweenPresents: expected a number, got 'x'"
    missing_line = f"{missing}: no such file"
    code, out, err = run_cli(["metrics", "--json", *files], capsys)
    assert code == 1
    assert err == f"certgen: {bad_line}\ncertgen: {missing_line}\n"
    data = json.loads(out)
    assert [d["file"] for d in data] == files
    assert data[1] == {"file": bad, "error": bad_line}
    assert data[3] == {"file": missing, "error": missing_line}
    for index in (0, 2, 4):
        [alone] = json.loads(run_cli(["metrics", "--json", files[index]], capsys)[1])
        assert data[index] == alone  # each readable file exactly as when measured alone
    # The table lists the good files; stderr names the bad ones.
    code, out, err = run_cli(["metrics", *files], capsys)
    assert code == 1
    assert err == f"certgen: {bad_line}\ncertgen: {missing_line}\n"
    rows = [line.split()[0] for line in out.splitlines()[2:5]]
    assert rows == ["PresentMonTestOutputFilename.csv", "test_case_5.csv",
                    "PresentMon-2.0.0_test_case_0.csv"]
    assert bad not in out and missing not in out


def test_as_a_process_the_refusal_is_one_line_without_traceback(tmp_path: pathlib.Path) -> None:
    (tmp_path / "text.csv").write_text(pm_rows("16.6", "abc"), encoding="utf-8")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-m", "certgen", "metrics", "text.csv"],
        cwd=tmp_path, capture_output=True, text=True, env=env, check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "certgen: text.csv:3: MsBetweenPresents: expected a number, got 'abc'\n")
