"""Issue 39, item 5: the fleet keeps out what no card stands behind, on both backends.

Specimens (SAMPLE- ids: no card was measured), certificates the lab has revoked (its
revocations.yaml or its registry's index.json, `--revocations`), and a certificate whose
capture (the same SHA-256) is already behind another certificate are refused by `fleet add`,
one line each, and `calibrate` counts none of them, even in a fleet that holds them (one
written before this check)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from bundlekit import run_cli
from recordkit import complete_record

from certgen.fleet import Cohort, FleetStore
from certgen.fleet.model import FleetRun
from certgen.metrics.figures import fluidity_score
from certgen.model import Weights
from certgen.record import Record, dump_record
from certgen.registry import INDEX_FORMAT

CP = Cohort("Cyberpunk 2077", "2560x1440", "Ultra", False, "none", None, False)
CANDIDATE = Path(__file__).parent / "data/sop/sop-gpu-001-v1.2-test.yaml"  # gold 80, plat. 92


def _record(cert_id: str, *, specimen: bool = False, capture: str | None = None) -> Record:
    run: dict[str, Any] = {**CP._asdict(), "status": "recorded", "not_run_reason": None,
                           "metrics": {"avg_fps": 100.0, "low_1pct_fps": 90.0,
                                       "low_0_1pct_fps": 60.0, "consistency_gap": 0.1,
                                       "stutter": 0.25, "fluidity_score": 80.0}}
    if capture is not None:
        run["capture"] = {"file": "captures/copied.csv", "sha256": capture}
    return complete_record({
        "certificate": {"id": cert_id, "issued": "2026-11-29"},
        "status": {"issuable": True, "draft": False, "refusals": [], "specimen": specimen},
        "card": {"model": "Example 1660", "serial": f"SN-{cert_id}"},
        "runs": [run]})


def _write(folder: Path, rec: Record) -> Path:
    path = folder / f"{rec.certificate.id}.json"
    path.write_bytes(dump_record(rec))
    return path


def _revocations_yaml(folder: Path, *ids: str) -> Path:
    path = folder / "revocations.yaml"
    path.write_text("".join(f'- id: "{i}"\n  date: 2026-11-30\n  reason: "Card returned."\n'
                            for i in ids), encoding="utf-8")
    return path


def _index_json(folder: Path, *ids: str) -> Path:
    path = folder / "index.json"
    # Entries as the registry writes them (verify reads index.json strictly: an id, the
    # record's SHA-256, a status agreeing with `revoked`).
    sha = "0" * 64
    path.write_text(json.dumps({"format": INDEX_FORMAT, "as_of": "2026-12-01", "certificates": [
        {"id": i, "record_sha256": sha, "status": "revoked",
         "revoked": {"date": "2026-11-30", "reason": {"en": "Card returned."}}}
        for i in ids] + [{"id": "A-1", "record_sha256": sha, "status": "valid",
                          "revoked": None}]}), encoding="utf-8")
    return path


@pytest.mark.parametrize("listing", ["yaml", "index"])
def test_fleet_add_refuses_specimens_revoked_and_reused_captures_one_line_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fleet_location: str, listing: str
) -> None:
    good = _record("A-1")
    assert good.runs[0].capture is not None
    sha = good.runs[0].capture.sha256
    inputs = [_write(tmp_path, r) for r in (
        good,
        _record("SAMPLE-GOLD-0002", specimen=True),   # a sample lab's certificate
        _record("SAMPLE-GOLD-0009"),                  # the id alone says specimen
        _record("R-1"),                               # revoked below
        _record("B-1", capture=sha),                  # A-1's capture again
        _record("C-1"),
    )]
    again = tmp_path / "again"
    again.mkdir()
    inputs.append(_write(again, good))  # the same certificate re-added: not a reuse
    revocations = (_revocations_yaml if listing == "yaml" else _index_json)(tmp_path, "R-1")
    code, out, err = run_cli(["fleet", "add", "--fleet", fleet_location, "--revocations",
                              str(revocations), *map(str, inputs)], capsys)
    assert code == 1
    specimen = ("is a specimen (a sample laboratory's certificate; no card was measured for "
                "it); a specimen never enters the fleet")
    assert err.splitlines() == [
        f"certgen: {inputs[1]}: certificate SAMPLE-GOLD-0002 {specimen}",
        f"certgen: {inputs[2]}: certificate SAMPLE-GOLD-0009 {specimen}",
        f"certgen: {inputs[3]}: certificate R-1 was revoked on 2026-11-30 ({revocations}); a "
        "revoked certificate never enters the fleet or its calibration",
        f"certgen: {inputs[4]}: certificate B-1: capture captures/copied.csv (SHA-256 {sha}) "
        f"is already in the fleet behind certificate A-1 ({good.runs[0].capture.file}); one "
        "capture never certifies two certificates",
        "certgen: 4 of 7 inputs refused (see above); the others were added",
    ]
    assert out.splitlines()[:3] == ["A-1: 1 run added, 0 already in the fleet",
                                    "C-1: 1 run added, 0 already in the fleet",
                                    "A-1: 0 runs added, 1 already in the fleet"]
    with FleetStore.open(fleet_location, readonly=True) as store:
        assert [r.certificate_id for r in store.runs()] == ["A-1", "C-1"]
        assert store.shared_captures() == {}
    # Without the list, R-1 is a certificate like any other.
    code, out, err = run_cli(["fleet", "add", "--fleet", fleet_location, str(inputs[3])],
                             capsys)
    assert (code, err) == (0, "") and out.startswith("R-1: 1 run added")


def test_a_specimen_line_is_refused_by_fleet_import(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path, fleet_location: str) -> None:
    rows = tmp_path / "rows.jsonl"
    line = json.loads((Path(__file__).parent.parent / "examples/fleet.jsonl")
                      .read_text(encoding="utf-8").splitlines()[0])
    rows.write_text(json.dumps({**line, "certificate_id": "SAMPLE-PLATINUM-0001"}) + "\n",
                    encoding="utf-8")
    code, _, err = run_cli(["fleet", "import", "--fleet", fleet_location, str(rows)], capsys)
    assert (code, err) == (1, f"certgen: {rows}:1: certificate_id: a specimen certificate (an "
                              "id beginning SAMPLE-: no card was measured for it) never enters "
                              "the fleet\n")


def test_a_bad_revocation_list_is_one_line_before_the_fleet_is_opened(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "revocations.yaml"
    bad.write_text("- R-1\n", encoding="utf-8")
    db = tmp_path / "fleet.sqlite"
    code, _, err = run_cli(["fleet", "add", "--fleet", str(db), "--revocations", str(bad),
                            str(_write(tmp_path, _record("A-1")))], capsys)
    assert code == 1 and err.count("\n") == 1 and f"{bad}:1: expected a list of revocations" in err
    assert not db.exists()


W = Weights(consistency_gap=0.7, stutter=0.3)


def _run(cert: str, x: float) -> FleetRun:
    return FleetRun(certificate_id=cert, run_index=0, issued="2026-11-01", card_model="Card",
                    card_serial=f"S-{cert}", cohort=CP, avg_fps=100.0, low_1pct_fps=90.0,
                    low_0_1pct_fps=80.0, consistency_gap=x, stutter=x,
                    fluidity_score=fluidity_score(x, x, W), source="test")


def _older_fleet(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet as one written before issue 39 could hold: 100 cards C-000..C-099 (S_F = 100 -
    0.2 i) and, each at S_F = 86 (SILVER now, GOLD under the candidate): a specimen, a
    certificate revoked since, and two certificates on one capture."""
    import certgen.fleet.model as model

    with monkeypatch.context() as m:
        m.setattr(model, "is_specimen_id", lambda cert: False)  # no such check back then
        with FleetStore.open(location) as store:
            store.add_runs([_run(f"C-{i:03d}", 0.002 * i) for i in range(100)]
                           + [_run(c, 0.07) for c in ("SAMPLE-GOLD-0002", "R-1", "S-1", "S-2")])
            with store._errors():  # no check stood in the way of the second certificate
                store._begin_write()
                sha = hashlib.sha256(b"one capture").hexdigest()
                for cert in ("S-1", "S-2"):
                    store._execute("INSERT INTO captures (sha256, certificate_id, file) "
                                   "VALUES (?, ?, ?)", (sha, cert, "captures/run.csv"))
                store._conn.execute("COMMIT")


def test_calibrate_counts_none_of_them(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       fleet_location: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _older_fleet(fleet_location, monkeypatch)
    revocations = _revocations_yaml(tmp_path, "R-1")
    out = tmp_path / "review"
    code, _, err = run_cli(["calibrate", "--fleet", fleet_location, "--out", str(out),
                            "--rules", str(CANDIDATE), "--revocations", str(revocations)],
                           capsys)
    assert code == 0
    assert err == ("left out of the review: 1 specimen (SAMPLE-GOLD-0002); 1 revoked (R-1); "
                   "2 sharing a capture with another certificate (S-1, S-2)\n")
    data = json.loads((out / "calibration.json").read_bytes())
    assert (data["cards"], data["runs"]) == (100, 100)
    named = {c["certificate_id"] for c in data["candidates"][0]["changes"]}
    assert named and not named & {"SAMPLE-GOLD-0002", "R-1", "S-1", "S-2"}
    assert data["readiness"]["largest"][0]["runs"] == 100  # the cohort's size without them
    csv = (out / "calibration.csv").read_text(encoding="utf-8")
    html = (out / "calibration.en.html").read_text(encoding="utf-8")
    for cert in ("SAMPLE-GOLD-0002", "R-1", "S-1", "S-2"):
        assert cert not in csv and cert not in html


def test_without_the_list_a_revoked_certificate_is_counted(
    tmp_path: Path, fleet_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from certgen.builders.calibration import calibrate_fleet, read_candidate

    _older_fleet(fleet_location, monkeypatch)
    review, left = calibrate_fleet(fleet_location, candidates=[read_candidate(CANDIDATE)])
    assert (review.cards, left.specimen, left.revoked, left.shared) == (
        101, ["SAMPLE-GOLD-0002"], [], ["S-1", "S-2"])
    assert "R-1" in {c.certificate_id for c in review.candidates[0].changes}
