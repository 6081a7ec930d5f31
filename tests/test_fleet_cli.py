"""`certgen fleet add | import | export | cohorts` on real SQLite files in tmp_path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bundlekit import run_cli
from recordkit import complete_record, record_json

from certgen.fleet import Cohort, FleetStore
from certgen.record import Record, dump_record
from certgen.sop import load_rules

MIN = load_rules().ranking_min_cohort
CP = Cohort("Cyberpunk 2077", "2560x1440", "Ultra", False, "none", None, False)
AW = Cohort("Alan Wake 2", "2560x1440", "High", False, "DLSS", "Quality", True)


def certgen(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    return run_cli(list(args), capsys)


def short_record(cert_id: str, runs: list[tuple[Cohort, float | None]], *,
                 issuable: bool = True) -> dict[str, Any]:
    """The fields of a record.json these tests are about, one run per (cohort, gap)."""
    run_objs = []
    for i, (cohort, gap) in enumerate(runs):
        m = None if gap is None else {
            "avg_fps": 100.0, "low_1pct_fps": round(100 * (1 - gap), 1), "low_0_1pct_fps": 60.0,
            "consistency_gap": gap, "stutter": 0.25, "fluidity_score": 80.0}
        run_objs.append({"index": i, **cohort._asdict(),
                         "status": "not_run" if m is None else "recorded",
                         "not_run_reason": "not supported" if m is None else None,
                         "metrics": m})
    return {"schema_version": 1,
            "certificate": {"id": cert_id, "issued": "2026-11-29"},
            "status": {"issuable": issuable, "draft": False, "refusals": []},
            "card": {"model": "Example 1660", "serial": f"SN-{cert_id}"},
            "runs": run_objs}


def record(cert_id: str, runs: list[tuple[Cohort, float | None]], *,
           issuable: bool = True) -> Record:
    """A complete record (recordkit) with one run per (cohort, gap)."""
    return complete_record(short_record(cert_id, runs, issuable=issuable))


def write_record(folder: Path, rec: Record) -> Path:
    path = folder / f"{rec.certificate.id}.json"
    path.write_bytes(dump_record(rec))
    return path


@pytest.fixture
def fleet_db(fleet_location: str) -> str:
    """A fresh fleet on each backend: an SQLite file path or a PostgreSQL URL."""
    return fleet_location


def test_add_records_is_idempotent(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   fleet_db: str) -> None:
    a = write_record(tmp_path, record("A-1", [(CP, 0.1), (AW, 0.2), (CP, None)]))
    b = write_record(tmp_path, record("B-1", [(CP, 0.15)]))
    code, out, err = certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), str(a), str(b))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "A-1: 2 runs added, 0 already in the fleet",
        "B-1: 1 run added, 0 already in the fleet",
        f"{fleet_db}: 3 runs added, 0 already present; 3 runs in 2 cohorts",
    ]
    code, out, _ = certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), str(a))
    assert code == 0
    assert out.splitlines()[-1] == (
        f"{fleet_db}: 0 runs added, 2 already present; 3 runs in 2 cohorts")


def test_add_a_build_output_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   fleet_db: str) -> None:
    out_dir = tmp_path / "out" / "A-1"
    out_dir.mkdir(parents=True)
    (out_dir / "record.json").write_bytes(dump_record(record("A-1", [(CP, 0.1)])))
    code, out, _ = certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), str(out_dir))
    assert code == 0 and out.startswith("A-1: 1 run added")


def test_add_refusals_exit_1_and_keep_the_good_inputs(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path, fleet_db: str) -> None:
    good = write_record(tmp_path, record("G-1", [(CP, 0.1)]))
    draft = write_record(tmp_path, record("D-1", [(CP, 0.1)], issuable=False))
    missing = tmp_path / "nowhere.json"
    code, out, err = certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), str(draft),
                             str(good), str(missing))
    assert code == 1
    assert err.splitlines() == [
        (f"certgen: {draft}: certificate D-1 is not issuable (a draft or refused certificate); "
         "only issued certificates enter the fleet"),
        f"certgen: {missing}: no such record or bundle",
        "certgen: 2 of 3 inputs refused (see above); the others were added",
    ]
    assert "G-1: 1 run added" in out
    with FleetStore.open(fleet_db) as store:
        assert [r.certificate_id for r in store.runs()] == ["G-1"]


def test_a_record_with_a_wrong_field_is_refused_naming_the_file_and_field(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, fleet_db: str) -> None:
    good = write_record(tmp_path, record("G-1", [(CP, 0.1)]))
    data = record_json(short_record("B-1", [(CP, 0.1)]))
    data["runs"][0]["metrics"]["stutter"] = "high"
    bad = tmp_path / "B-1.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), str(bad),
                             str(good))
    assert code == 1
    assert err.splitlines() == [
        f'certgen: {bad}: runs[0].metrics.stutter: expected a number or null, got "high"',
        "certgen: 1 of 2 inputs refused (see above); the others were added",
    ]
    assert "G-1: 1 run added" in out


def test_add_without_inputs_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                             fleet_db: str) -> None:
    code, _, err = certgen(capsys, "fleet", "add", "--fleet", str(fleet_db))
    assert code == 2 and "Missing argument 'BUNDLE_OR_RECORD...'" in err


def test_fleet_path_from_environment(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    env_db = tmp_path / "env.sqlite"
    monkeypatch.setenv("CERTGEN_FLEET", str(env_db))
    rec = write_record(tmp_path, record("E-1", [(CP, 0.1)]))
    assert certgen(capsys, "fleet", "add", str(rec))[0] == 0
    assert env_db.is_file()


def test_export_import_round_trip_via_cli(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path, fleet_db: str) -> None:
    paths = [write_record(tmp_path, record(f"C-{i:02d}", [(CP, 0.01 * i), (AW, 0.02 * i)]))
             for i in range(12)]
    assert certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), *map(str, paths))[0] == 0
    code, stdout_export, _ = certgen(capsys, "fleet", "export", "--fleet", str(fleet_db))
    assert code == 0 and len(stdout_export.splitlines()) == 24
    exported = tmp_path / "fleet.jsonl"
    code, _, err = certgen(capsys, "fleet", "export", "--fleet", str(fleet_db), "-o",
                           str(exported))
    assert (code, err) == (0, f"{exported}: 24 runs exported\n")
    assert exported.read_text(encoding="utf-8") == stdout_export

    other = tmp_path / "copy.sqlite"
    code, out, _ = certgen(capsys, "fleet", "import", "--fleet", str(other), str(exported))
    assert code == 0
    assert out == f"{other}: 24 runs imported, 0 already present; 24 runs in 2 cohorts\n"
    again = tmp_path / "again.jsonl"
    certgen(capsys, "fleet", "export", "--fleet", str(other), "-o", str(again))
    assert again.read_bytes() == exported.read_bytes()


def test_import_error_names_the_line_and_field(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path, fleet_db: str) -> None:
    rec = write_record(tmp_path, record("A-1", [(CP, 0.1)]))
    certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), str(rec))
    good = certgen(capsys, "fleet", "export", "--fleet", str(fleet_db))[1]
    bad_obj = json.loads(good)
    bad_obj.update(certificate_id="Z-9", consistency_gap="0.1")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.replace("A-1", "B-1") + json.dumps(bad_obj) + "\n", encoding="utf-8")
    code, _, err = certgen(capsys, "fleet", "import", "--fleet", str(fleet_db), str(bad))
    assert code == 1
    assert err == (f'certgen: {bad}:2: consistency_gap: expected a number or null, got "0.1"\n')
    with FleetStore.open(fleet_db) as store:
        assert store.run_count() == 1  # nothing from the bad file, not even its good line 1


def test_export_of_a_missing_fleet_is_refused(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    db = tmp_path / "none.sqlite"
    code, _, err = certgen(capsys, "fleet", "export", "--fleet", str(db))
    assert code == 1
    assert err == (f"certgen: {db}: no such fleet database (run `certgen fleet add` or "
                   "`certgen fleet import` to create one)\n")
    assert not db.exists()


def test_cohorts_table_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                fleet_db: str) -> None:
    paths = [write_record(tmp_path, record(f"C-{i:02d}", [(CP, 0.1)] + ([(AW, 0.2)] if i < 3
                                                                        else [])))
             for i in range(5)]
    certgen(capsys, "fleet", "add", "--fleet", str(fleet_db), *map(str, paths))
    code, out, _ = certgen(capsys, "fleet", "cohorts", "--fleet", str(fleet_db))
    assert code == 0
    assert out.splitlines() == [
        "runs  cohort",
        "   5  Cyberpunk 2077 · 2560x1440 · Ultra · RT off · upscaler none · FG off",
        "   3  Alan Wake 2 · 2560x1440 · High · RT off · upscaler DLSS Quality · FG on (mode not "
        "stated)",
        (f"8 runs in 2 cohorts; percentiles are published from n = {MIN} (the run itself "
         "included)"),
    ]
    code, out, _ = certgen(capsys, "fleet", "cohorts", "--fleet", str(fleet_db), "--json")
    doc = json.loads(out)
    assert (doc["fleet_runs"], doc["ranking_min_cohort"]) == (8, MIN)
    assert [(c["title"], c["upscaler_mode"], c["runs"]) for c in doc["cohorts"]] == [
        ("Cyberpunk 2077", None, 5), ("Alan Wake 2", "Quality", 3)]


def test_cli_exit_codes_in_a_real_process(tmp_path: Path) -> None:
    """The installed entry point: a refusal is one stderr line and exit 1, no traceback."""
    db = tmp_path / "x.sqlite"
    db.write_text("not sqlite\n" * 50)
    proc = subprocess.run([sys.executable, "-m", "certgen", "fleet", "cohorts", "--fleet",
                           str(db)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stderr == f"certgen: {db}: not a fleet database (file is not a database)\n"
