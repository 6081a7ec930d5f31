"""One capture report (issue 43): `certgen metrics` prints the API's typed `CaptureReport`s, the
command assembles nothing itself, and certgen reads a capture through one call."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from bundlekit import run_cli
from realdata import REAL

from certgen import api
from certgen.commands.metrics import display_timing_option
from certgen.model import RunMetrics
from certgen.model.capturereport import CaptureReport, RefusedCapture

PACKAGE = Path(__file__).resolve().parent.parent / "certgen"
GOLD = Path(__file__).resolve().parent.parent / "examples" / "gold-rx7800xt" / "captures"


@pytest.mark.parametrize("options", [[], ["--interval"], ["--refresh-hz", "144"]])
def test_metrics_json_prints_exactly_the_apis_reports(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path, options: list[str]) -> None:
    """Byte for byte, a refused file in its place included: the command is a face."""
    monkeypatch.chdir(REAL)
    bad = tmp_path / "not-a-capture.csv"
    bad.write_text("hello\n", encoding="utf-8")
    files = ["test_case_5.csv", str(bad), "PresentMon-2.1.0_test_case_0.csv"]
    code, out, err = run_cli(["metrics", "--json", *files, *options], capsys)
    assert code == 1 and err.startswith(f"certgen: {bad}")
    timing = display_timing_option(144.0, None) if "--refresh-hz" in options else None
    reports = api.report_captures(files, interval="--interval" in options, timing=timing)
    assert [type(r) for r in reports] == [CaptureReport, RefusedCapture, CaptureReport]
    assert out == json.dumps([r.as_json() for r in reports], indent=2, ensure_ascii=False) + "\n"


def test_the_report_is_typed_by_stage_and_flat_in_its_json() -> None:
    [report] = api.report_captures([GOLD / "run1-1440p.csv"])
    assert isinstance(report, CaptureReport)
    [capture] = api.read_capture(GOLD / "run1-1440p.csv")
    assert report.figures == api.compute_figures(capture)
    data = report.as_json()
    # the figures' and the measured parts' keys stand at the report's own level, in order
    assert list(data)[5:5 + len(RunMetrics.model_fields)] == list(RunMetrics.model_fields)
    assert "figures" not in data and "measured" not in data
    assert "interval" not in data and "stability" not in data  # not asked: left out, not null
    assert data["latency"] == report.measured.latency.model_dump(mode="json")


def test_intervals_are_the_apis_own() -> None:
    """The report's intervals are compute_intervals' with the file's SHA-256, as documented."""
    import hashlib

    path = GOLD / "run1-1440p.csv"
    [report] = api.report_captures([path], interval=True)
    assert isinstance(report, CaptureReport)
    [capture] = api.read_capture(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert report.interval == api.compute_intervals(capture, capture_sha256=sha)
    assert report.stability == api.compute_stability(capture)


def test_a_refused_file_is_a_refused_capture_in_its_place(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    reports = api.report_captures([empty, GOLD / "run1-1440p.csv"])
    assert isinstance(reports[0], RefusedCapture) and reports[0].file == str(empty)
    assert reports[0].as_json() == {"file": str(empty), "error": reports[0].error}
    assert isinstance(reports[1], CaptureReport)


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("certgen"):
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_metrics_command_assembles_nothing_itself() -> None:
    """No reader, figure, diagnostic, measured or interval stage is imported by the command:
    it gets its reports from certgen.api."""
    imported = _imported(PACKAGE / "commands" / "metrics.py")
    assert "certgen.api.report_captures" in imported
    stages = sorted(n for n in imported if n.startswith(("certgen.metrics", "certgen.captures."))
                    and n != "certgen.captures.detect.FORMATS")
    assert stages == []


def _reader_calls(root: Path) -> list[str]:
    """file:line of every call of a capture reader (read_capture, read_capture_file) outside
    the readers' own folder."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "captures":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name in ("read_capture", "read_capture_file"):
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_certgen_calls_a_capture_reader_in_one_place() -> None:
    """Every part (the pipeline, reports, the API, `certgen metrics`) reads a capture through
    certgen.metrics.capturereport.read_runs, which checks what the file states (pagefigures);
    the API's own read_capture is a name of that one call."""
    calls = _reader_calls(PACKAGE)
    assert calls and {c.partition(":")[0] for c in calls} == {"metrics/capturereport.py"}, calls


def test_the_reader_call_check_sees_a_second_call(tmp_path: Path) -> None:
    (tmp_path / "captures").mkdir()
    (tmp_path / "captures" / "detect.py").write_text("def f():\n    read_capture(b'', name='x')\n")
    (tmp_path / "pipeline.py").write_text("from x import detect\n\ndetect.read_capture_file(p)\n")
    assert _reader_calls(tmp_path) == ["pipeline.py:3"]
