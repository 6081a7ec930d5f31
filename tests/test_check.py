"""`certgen check` and `certgen schema` through the real CLI entry point (exit codes, streams)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundlekit import card, run_cli, run_entry, simple_bundle, write_card

NEAR_99 = (100.0, 99.0, 98.0)
DILUTING = (100.0, 82.0, 31.9)


def test_check_prints_the_grade_and_its_reasoning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], snapshot: object
) -> None:
    simple_bundle(tmp_path, [NEAR_99, NEAR_99])
    code, out, err = run_cli(["check", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "TEST-0001: PLATINUM"
    assert out == snapshot


def test_check_refusal_prints_every_reason_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    simple_bundle(tmp_path, [NEAR_99, NEAR_99, NEAR_99, DILUTING])
    code, out, err = run_cli(["check", str(tmp_path)], capsys)
    assert code == 1
    assert err.splitlines() == [
        ('certgen: card.yaml: runs[3].first_capture: run "Game 3 2560x1440" needed a re-run '
        "(stutter 0.6110 > 0.60) but has no archived first capture; the re-run step was skipped "
        "(archive the first capture and cite its SHA-256)"),
        ('certgen: card.yaml: runs[3].soft_limit: run "Game 3 2560x1440" has stutter 0.6110 > '
        "0.60; a justification and a Phase 1 VRM re-examination are required before this "
        "certificate can be issued"),
    ]
    assert out.splitlines()[-1] == "refused (2 reasons, on stderr)"


def test_check_json_prints_the_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    simple_bundle(tmp_path, [NEAR_99])
    code, out, err = run_cli(["check", str(tmp_path), "--json"], capsys)
    assert (code, err) == (0, "")
    record = json.loads(out)
    assert next(iter(record)) == "schema_version"
    assert record["grade"]["value"] == "PLATINUM"
    assert record["status"] == {"issuable": True, "draft": False, "refusals": [],
                                "refusal_details": [], "specimen": False}


def test_check_invalid_bundle_lists_every_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = card([run_entry(resolution="1440", capture="../x.csv")])
    data["card"]["driver"] = 566.14
    write_card(tmp_path, data)
    code, out, err = run_cli(["check", str(tmp_path)], capsys)
    assert code == 1 and out == ""
    assert err.splitlines() == [
        "certgen: card.yaml: card.driver: expected a text, got '566.14'",
        "card.yaml: runs[0].resolution: expected WIDTHxHEIGHT, got '1440'",
        "card.yaml: runs[0].capture: expected a path inside the bundle without '..', got '../x.csv'",
    ]


def test_check_missing_bundle_is_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["check", str(tmp_path / "nope")], capsys)
    assert code == 2 and "does not exist" in err


def test_check_with_a_fleet_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fleet_mod = pytest.importorskip("certgen.fleet")
    db = tmp_path / "fleet.sqlite"
    fleet_mod.FleetStore.open(db).close()
    simple_bundle(tmp_path / "b", [NEAR_99])
    code, out, _ = run_cli(["check", str(tmp_path / "b"), "--json", "--fleet", str(db)], capsys)
    assert code == 0
    record = json.loads(out)
    assert record["fleet"]["fleet_runs"] == 0
    assert record["runs"][0]["ranks"]["fluidity_score"]["percentile"] is None


def test_schema_command_prints_the_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["schema"], capsys)
    assert code == 0
    schema = json.loads(out)
    assert schema["title"] == "card.yaml"
    _, out2, _ = run_cli(["schema"], capsys)
    assert out2 == out


def test_check_json_on_a_refused_bundle_prints_the_record_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    simple_bundle(tmp_path, [NEAR_99, DILUTING])
    code, out, err = run_cli(["check", str(tmp_path), "--json"], capsys)
    assert code == 1
    record = json.loads(out)
    assert record["status"]["issuable"] is False and record["status"]["draft"] is False
    assert len(record["status"]["refusals"]) == 2 == len(err.splitlines())
