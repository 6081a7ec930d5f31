"""`--process` is never silently dropped: refused for captures without process groups, and
named in the notes of the captures it did not apply to when several formats are mixed."""

from __future__ import annotations

import json
import pathlib

import pytest
from realdata import REAL

from certgen.cli import main

PM = ("Application,ProcessID,SwapChainAddress,Dropped,MsBetweenPresents\n"
      "a.exe,1,0x1,0,10\na.exe,1,0x1,0,10\nb.exe,2,0x2,0,20\nb.exe,2,0x2,0,20\nb.exe,2,0x2,0,20\n")
MANGOHUD = "fps,frametime,cpu_load,gpu_load,elapsed\n" + "".join(
    f"100,10.000,1,1,{i * 10_000_000}\n" for i in range(4))
CAPFRAMEX_JSON = json.dumps({"Runs": [{"CaptureData": {"MsBetweenPresents": [10.0, 20.0]}}]})
FRAME_STATS = "".join(
    json.dumps({"schema_version": 1, "tick": t, "present_interval_ms": None if t == 0 else 10.0,
                "kind": "full", "gpu_ms": None, "gpu_tick": None}) + "\n" for t in range(4)
) + '{"schema_version":1,"end":true,"frames":4,"dropped":0}\n'
BENCH = "side,kind,name,value\nbefore,frame,,10\nbefore,frame,,20\n"
NO_KEYS = "Dropped,MsBetweenPresents\n0,10\n0,20\n"
WHY = "has no process groups (only PresentMon, OCAT, FrameView and CapFrameX CSV captures have them)"

CASES = [
    ("mh.csv", MANGOHUD, "a MangoHud log"),
    ("cfx.json", CAPFRAMEX_JSON, "a CapFrameX JSON session"),
    ("run.jsonl", FRAME_STATS, "an engine frame-stats file"),
    ("bench.csv", BENCH, "a benchmark-page CSV"),
    ("plain.csv", NO_KEYS, "a CSV without Application, ProcessID and SwapChainAddress columns"),
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(argv))  # as the console script does: sys.exit(main())
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), out, err


@pytest.mark.parametrize(("name", "text", "what"), CASES, ids=[c[0] for c in CASES])
def test_process_for_a_capture_without_groups_is_refused(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    name: str, text: str, what: str,
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["metrics", "--process", "a.exe", name], capsys)
    assert (code, out, err) == (1, "", f"certgen: {name}: process 'a.exe' given, but {what} {WHY}\n")
    # Without --process the same file reads: the refusal is about the option, not the file.
    assert run(["metrics", name], capsys)[0] == 0


def test_several_captures_without_groups_refuse_on_the_first(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, text, _ in CASES:
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["metrics", "--json", "--process", "a.exe", "cfx.json", "mh.csv"], capsys)
    assert (code, out, err) == (
        1, "", f"certgen: cfx.json: process 'a.exe' given, but a CapFrameX JSON session {WHY}\n")


def test_mixed_formats_apply_process_where_it_can_and_say_where_not(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pm.csv").write_text(PM, encoding="utf-8")
    (tmp_path / "mh.csv").write_text(MANGOHUD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["metrics", "--json", "--process", "a.exe", "mh.csv", "pm.csv"], capsys)
    assert (code, err) == (0, "")
    mh, pm = json.loads(out)
    note = "--process 'a.exe' not applied: a MangoHud log has no process groups"
    assert mh["warnings"] == [note]
    # a.exe has fewer rows than b.exe: without --process b.exe would be read.
    assert (pm["group"], pm["avg_fps"], pm["warnings"]) == (
        "a.exe (pid 1, swap chain 0x1)", 100.0, [])
    code, out, err = run(["metrics", "--process", "a.exe", "mh.csv", "pm.csv"], capsys)
    assert (code, err) == (0, "")
    mh_notes = out.split("\nmh.csv:\n")[1].split("\n\n")[0]
    assert f"  - {note}" in mh_notes.splitlines()


def test_mixed_formats_still_refuse_a_process_no_group_has(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pm.csv").write_text(PM, encoding="utf-8")
    (tmp_path / "mh.csv").write_text(MANGOHUD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["metrics", "--process", "c.exe", "mh.csv", "pm.csv"], capsys)
    # pm.csv is refused (named on stderr, exit 1); mh.csv is still reported, with its note.
    assert code == 1
    assert err.startswith("certgen: pm.csv: no process named 'c.exe'; groups: ")
    assert err.count("\n") == 1
    assert "mh.csv:" in out and "pm.csv" not in out
    assert "--process 'c.exe' not applied: a MangoHud log has no process groups" in out


NAMELESS = ("Application,ProcessID,SwapChainAddress,Dropped,MsBetweenPresents\n"
            ",520,0x1,0,10\n,520,0x1,0,20\ng.exe,7,0x2,0,10\ng.exe,7,0x2,0,10\ng.exe,7,0x2,0,10\n")


def test_a_process_with_no_name_prints_sensibly_and_is_chosen_with_an_empty_process(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pm.csv").write_text(NAMELESS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["metrics", "--json", "pm.csv"], capsys)
    [entry] = json.loads(out)
    assert (code, err) == (0, "")
    assert entry["group"] == "g.exe (pid 7, swap chain 0x2)"
    assert entry["groups_left_out"] == ["(no name) (pid 520, swap chain 0x1)"]
    code, out, err = run(["metrics", "--json", "--process", "", "pm.csv"], capsys)
    [entry] = json.loads(out)
    assert (code, err) == (0, "")
    assert (entry["group"], entry["frames"]) == ("(no name) (pid 520, swap chain 0x1)", 2)
    code, out, err = run(["metrics", "--process", "x.exe", "pm.csv"], capsys)
    assert (code, out) == (1, "")
    assert err == ("certgen: pm.csv: no process named 'x.exe'; groups: g.exe (pid 7, swap chain "
                   "0x2): 3 rows; (no name) (pid 520, swap chain 0x1): 2 rows\n")
    # The group as printed picks it too.
    code, out, err = run(["metrics", "--json", "--process", "(no name) (pid 520)", "pm.csv"],
                         capsys)
    [entry] = json.loads(out)
    assert (code, entry["group"]) == (0, "(no name) (pid 520, swap chain 0x1)")


def test_two_processes_of_one_name_are_told_apart_by_the_printed_group(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real test_case_0 (PresentMon 2.1.0) has four Presenter.exe processes of 18 frames:
    the warning names how to read another, and that is what reads it."""
    path = str(REAL / "PresentMon-2.1.0_test_case_0.csv")
    code, out, _ = run(["metrics", "--json", path], capsys)
    [entry] = json.loads(out)
    assert code == 0
    [close] = [w for w in entry["warnings"] if w.startswith("close group choice")]
    other = close.split('--process "')[1].split('" reads the other')[0]
    assert other.startswith("Presenter.exe (pid ") and other != entry["group"]
    code, out, _ = run(["metrics", "--json", "--process", other, path], capsys)
    [chosen] = json.loads(out)
    assert (code, chosen["group"], chosen["frames"]) == (0, other, 18)
    assert chosen["warnings"] == [w for w in chosen["warnings"] if "close group" not in w]


@pytest.mark.parametrize("forced", ["presentmon", "ocat", "frameview"])
def test_a_forced_format_is_the_format_shown(
    forced: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "pm.csv").write_text(PM, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    [detected] = json.loads(run(["metrics", "--json", "pm.csv"], capsys)[1])
    code, out, err = run(["metrics", "--json", "--format", forced, "pm.csv"], capsys)
    [entry] = json.loads(out)
    assert (code, err, detected["format"], entry["format"]) == (0, "", "presentmon", forced)
    assert {k: v for k, v in entry.items() if k != "format"} == {
        k: v for k, v in detected.items() if k != "format"}
    code, out, _ = run(["metrics", "--format", forced, "pm.csv"], capsys)
    assert f"  - format {forced}, interval MsBetweenPresents" in out
