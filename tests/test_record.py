"""Bundle -> record (certgen.pipeline, certgen.record): the must-show rule cases from frame times,
the audit trail, the record's determinism and its chart series."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bundlekit import (
    card,
    frames_for,
    run_entry,
    sha256_of,
    simple_bundle,
    write_card,
    write_frame_stats,
    write_presentmon,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from certgen.errors import RefusalError
from certgen.metrics.diagnostics import compute_metrics
from certgen.model import Rank, Ranks, RunMetrics, Weights
from certgen.model.cohort import Cohort
from certgen.pipeline import make_record
from certgen.record import Record, RecordError, chart_series, dump_record, load_record

SAMPLE = Path(__file__).parent / "data" / "records" / "sample.json"
NEAR_99 = (100.0, 99.0, 98.0)
DILUTING = (100.0, 82.0, 31.9)  # the realisable case of docs/spec/rules.md
AT_LIMIT = (100.0, 80.0, 32.0)  # stutter exactly 0.6000
JUSTIFIED = {
    "justification": "Isolated long frames at the same streaming points in both captures.",
    "vrm_reexamination": "pass: all rails within 5% of nominal",
}


def dilution_bundle(
    root: Path,
    *,
    soft_limit: dict[str, str] | None = None,
    archive: bool = True,
    declared_sha: str | None = None,
    last: tuple[float, float, float] = DILUTING,
) -> Path:
    """Three runs near 99 and one more run (by default the diluting one) at 2560x1440."""
    runs = []
    for i in range(3):
        write_presentmon(root / f"captures/run{i}.csv", frames_for(*NEAR_99))
        runs.append(run_entry(f"Game {i}", capture=f"captures/run{i}.csv"))
    write_presentmon(root / "captures/run3.csv", frames_for(*last))
    extra: dict[str, Any] = {}
    if archive:
        first = write_presentmon(root / "archive/run3-first.csv", frames_for(100.0, 80.0, 30.0))
        extra["first_capture"] = {"file": "archive/run3-first.csv",
                                  "sha256": declared_sha or sha256_of(first)}
    if soft_limit is not None:
        extra["soft_limit"] = soft_limit
    runs.append(run_entry("Streaming Title", capture="captures/run3.csv", **extra))
    return write_card(root, card(runs))


def as_json(record: Record) -> dict[str, Any]:
    """The record as record.json holds it (the same values, as JSON data)."""
    return record.model_dump(mode="json")


def refusals(path: Path) -> list[str]:
    with pytest.raises(RefusalError) as info:
        make_record(path)
    return info.value.reasons


# --- the dilution case, from frame times -------------------------------------------------


def test_dilution_figures_come_out_of_the_frame_times() -> None:
    """F 100 / F_1% 82 / F_0.1% 31.9 gives g 0.18, s 0.611, S_F 69.07 (docs/spec/rules.md)."""
    sop = compute_metrics(frames_for(*DILUTING), Weights(consistency_gap=0.7, stutter=0.3)).sop
    assert (sop.avg_fps, sop.low_1pct_fps, sop.low_0_1pct_fps) == DILUTING
    assert (sop.consistency_gap, sop.stutter, sop.fluidity_score) == (0.18, 0.611, 69.07)
    near = compute_metrics(frames_for(*NEAR_99), Weights(consistency_gap=0.7, stutter=0.3)).sop
    assert near.fluidity_score == 99.0


def test_diluted_tier_mean_above_88_is_refused_without_justification(tmp_path: Path) -> None:
    dilution_bundle(tmp_path)
    assert refusals(tmp_path) == [
        ('card.yaml: runs[3].soft_limit: run "Streaming Title 2560x1440" has stutter 0.6110 > '
        "0.60; a justification and a Phase 1 VRM re-examination are required before this "
        "certificate can be issued")
    ]
    draft = make_record(tmp_path, draft=True)
    assert draft.tiers[0].mean_fluidity == 91.52  # (3 x 99.00 + 69.07) / 4, above 88
    assert draft.grade.value == "GOLD"  # what the gates say; the Soft Limit blocks issue
    assert draft.status.model_dump(mode="json") == {
        "issuable": False, "draft": True, "refusals": refusals(tmp_path),
        "refusal_details": [{"code": "soft_limit_missing", "run": 3,
                             "missing": ["justification", "vrm_reexamination"],
                             "stutter": 0.611, "limit": 0.6}],
        "specimen": False,
    }


def test_diluted_tier_is_issued_with_justification_and_vrm_reexamination(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, soft_limit=JUSTIFIED)
    record = as_json(make_record(tmp_path))
    assert record["status"] == {"issuable": True, "draft": False, "refusals": [],
                                "refusal_details": [], "specimen": False}
    assert record["grade"]["value"] == "GOLD"
    run = record["runs"][3]
    assert run["soft_limit"] == {"raised": True, "limit": 0.6, **JUSTIFIED, "satisfied": True}
    assert record["audit"]["soft_limit"] == [{"run": 3, "stutter": 0.611, **JUSTIFIED,
                                              "satisfied": True}]
    assert all(not r["soft_limit"]["raised"] for r in record["runs"][:3])


def test_justification_alone_is_not_enough(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, soft_limit={"justification": JUSTIFIED["justification"]})
    (reason,) = refusals(tmp_path)
    assert reason.endswith("a Phase 1 VRM re-examination is required before this certificate "
                           "can be issued")


def test_stutter_of_exactly_060_does_not_raise_the_soft_limit(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, archive=False, last=AT_LIMIT)
    record = as_json(make_record(tmp_path))
    run = record["runs"][3]
    assert run["metrics"]["stutter"] == 0.6
    assert run["soft_limit"]["raised"] is False
    assert record["status"]["issuable"] is True
    assert record["audit"]["soft_limit"] == []


# --- re-run audit ------------------------------------------------------------------------


def test_skipped_rerun_is_refused(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, archive=False, soft_limit=JUSTIFIED)
    assert refusals(tmp_path) == [
        ('card.yaml: runs[3].first_capture: run "Streaming Title 2560x1440" needed a re-run '
        "(stutter 0.6110 > 0.60) but has no archived first capture; the re-run step was "
        "skipped (archive the first capture and cite its SHA-256)")
    ]


def test_first_capture_hash_mismatch_is_refused(tmp_path: Path) -> None:
    declared = "0" * 64
    dilution_bundle(tmp_path, soft_limit=JUSTIFIED, declared_sha=declared)
    actual = sha256_of(tmp_path / "archive/run3-first.csv")
    assert refusals(tmp_path) == [
        (f"card.yaml: runs[3].first_capture: archive/run3-first.csv: SHA-256 mismatch: declared "
        f"{declared}, file has {actual}; the archived first capture is not the one cited in "
        "the audit trail")
    ]


def test_incomplete_frame_stats_capture_triggers_the_rerun_rule(tmp_path: Path) -> None:
    write_frame_stats(tmp_path / "captures/fs.jsonl", frames_for(*NEAR_99), end=False)
    write_card(tmp_path, card([run_entry("Engine", capture="captures/fs.jsonl")]))
    (reason,) = refusals(tmp_path)
    assert reason == (
        'card.yaml: runs[0].first_capture: run "Engine 2560x1440" needed a re-run (incomplete: '
        "no end line (the process did not exit cleanly)) but has no archived first capture; "
        "the re-run step was skipped (archive the first capture and cite its SHA-256)"
    )
    # With the first capture archived the incomplete re-run is accepted and disclosed; the
    # first capture (a capture of its own, also cut short) is scored, and its own figures say
    # why it was re-run.
    first = write_frame_stats(tmp_path / "archive/fs-first.jsonl",
                              frames_for(*NEAR_99, n=9_000), end=False)
    write_card(tmp_path, card([run_entry(
        "Engine", capture="captures/fs.jsonl",
        first_capture={"file": "archive/fs-first.jsonl", "sha256": sha256_of(first)})]))
    record = as_json(make_record(tmp_path))
    assert record["runs"][0]["capture"]["incomplete"] is True
    assert record["runs"][0]["capture"]["incomplete_detail"] == [{"code": "no_end_line"}]
    assert record["runs"][0]["first_capture"]["required"] is True
    assert record["audit"]["first_captures"] == [{
        "run": 0, "file": "archive/fs-first.jsonl", "sha256": sha256_of(first),
        "sha256_declared": sha256_of(first), "matches": True, "required": True,
        "why": "incomplete: no end line (the process did not exit cleanly)",
        "why_detail": {"code": "incomplete",
                       "reason": "no end line (the process did not exit cleanly)"},
        "metrics": record["runs"][0]["first_capture"]["metrics"],
        "rerun_reason": {"code": "incomplete",
                         "reason": "no end line (the process did not exit cleanly)"},
    }]
    assert record["runs"][0]["first_capture"]["metrics"]["frames"] == 9_000


def test_complete_frame_stats_capture_needs_no_rerun(tmp_path: Path) -> None:
    write_frame_stats(tmp_path / "captures/fs.jsonl", frames_for(*NEAR_99), end=True)
    write_card(tmp_path, card([run_entry("Engine", capture="captures/fs.jsonl")]))
    record = as_json(make_record(tmp_path))
    assert record["runs"][0]["capture"]["format"] == "frame-stats"
    assert record["runs"][0]["capture"]["incomplete_detail"] is None
    assert record["status"]["issuable"] is True


def test_every_refusal_is_listed_at_once(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, archive=False)
    reasons = refusals(tmp_path)
    assert [r.split(":")[1].strip() for r in reasons] == [
        "runs[3].first_capture", "runs[3].soft_limit"
    ]


# --- not-run runs and the audit trail ----------------------------------------------------


def test_not_run_runs_are_disclosed_and_never_averaged(tmp_path: Path) -> None:
    simple_bundle(tmp_path, [NEAR_99])
    data = card([
        run_entry("Game 0", capture="captures/run0.csv"),
        run_entry("Alan Wake 2", ray_tracing=True, not_run="no hardware ray tracing on this GPU"),
    ])
    write_card(tmp_path, data)
    record = as_json(make_record(tmp_path))
    assert record["tiers"] == [{
        "resolution": "2560x1440", "runs": 2, "scored_runs": 1, "not_run": 1,
        "mean_fluidity": 99.0, "measured": True, "meets_gold": True, "meets_platinum": True,
    }]
    run = record["runs"][1]
    assert run["status"] == "not_run"
    assert run["not_run_reason"] == "no hardware ray tracing on this GPU"
    assert run["metrics"] is None and run["ranks"] is None and run["capture"] is None
    assert record["audit"]["not_run"] == [{"run": 1, "reason": "no hardware ray tracing on this GPU"}]
    assert record["grade"]["value"] == "PLATINUM"


def test_audit_cites_the_sha256_of_every_capture(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, soft_limit=JUSTIFIED)
    record = as_json(make_record(tmp_path))
    expected = [
        {"run": i, "file": f"captures/run{i}.csv",
         "sha256": hashlib.sha256((tmp_path / f"captures/run{i}.csv").read_bytes()).hexdigest()}
        for i in range(4)
    ]
    assert record["audit"]["captures"] == expected
    assert [r["capture"]["sha256"] for r in record["runs"]] == [e["sha256"] for e in expected]
    (first,) = record["audit"]["first_captures"]
    assert first["sha256"] == sha256_of(tmp_path / "archive/run3-first.csv")
    assert first["matches"] is True


def test_grade_cap_travels_into_the_record(tmp_path: Path) -> None:
    simple_bundle(tmp_path, [NEAR_99],
                  grade_cap={"grade": "SILVER", "reason": "Phase 2: coil whine above the line"})
    grade = make_record(tmp_path).grade
    assert (grade.value, grade.fluidity_grade) == ("SILVER", "PLATINUM")
    assert grade.cap is not None
    assert grade.cap.model_dump() == {"grade": "SILVER",
                                      "reason": "Phase 2: coil whine above the line"}


# --- the record as bytes ------------------------------------------------------------------


RECORD_KEYS = [
    "schema_version", "certificate", "issuer", "rules_version", "certgen_version", "software",
    "rules", "status", "customer", "card", "phase1", "test_system", "grade", "tiers", "runs", "audit", "fleet",
    "calibration", "uncertainty",
]


def test_record_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    dilution_bundle(tmp_path, soft_limit=JUSTIFIED)
    first = dump_record(make_record(tmp_path))
    second = dump_record(make_record(tmp_path))
    assert first == second
    assert first.startswith(b'{\n  "schema_version": 1,') and first.endswith(b"}\n")
    assert list(json.loads(first)) == RECORD_KEYS == list(Record.model_fields)
    loaded = load_record(first)
    assert dump_record(loaded) == first


def test_zipped_bundle_gives_the_same_record(tmp_path: Path) -> None:
    folder = dilution_bundle(tmp_path / "b", soft_limit=JUSTIFIED)
    zipped = tmp_path / "b.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, "card-folder/" + path.relative_to(folder).as_posix())
    assert dump_record(make_record(zipped)) == dump_record(make_record(folder))


def test_record_keeps_unicode_as_text(tmp_path: Path) -> None:
    simple_bundle(tmp_path, [NEAR_99], customer="ООО «Пример» — São Paulo")
    data = dump_record(make_record(tmp_path))
    assert "ООО «Пример» — São Paulo".encode() in data


def test_load_record_refuses_another_schema_version() -> None:
    with pytest.raises(RecordError) as info:
        load_record(b'{"schema_version": 2}')
    assert str(info.value) == "record.json: schema_version: expected schema_version 1, got 2"


def test_dump_record_refuses_nan_and_writes_the_version_first() -> None:
    """A model built around validation (model_copy does not validate) cannot write NaN."""
    sample = load_record(SAMPLE.read_bytes())
    run = sample.runs[0]
    assert run.metrics is not None
    bad_run = run.model_copy(update={"metrics": run.metrics.model_copy(
        update={"stutter": float("nan")})})
    bad = sample.model_copy(update={"runs": (bad_run, *sample.runs[1:])})
    with pytest.raises(RecordError, match=r"runs\[0\]\.metrics\.stutter: not a finite number"):
        dump_record(bad)
    # Keys in another order read back and are written in record.json order again.
    data = json.loads(SAMPLE.read_bytes())
    shuffled = {k: data[k] for k in reversed(list(data))}
    assert dump_record(load_record(json.dumps(shuffled).encode())) == SAMPLE.read_bytes()


# --- ranks through the Fleet protocol -----------------------------------------------------


class FakeFleet:
    """A stand-in fleet: every metric at percentile 50 of a 40-run cohort."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def run_ranks(self, cohort: Any, metrics: RunMetrics, certificate_id: str, *,
                  min_cohort: int | None = None) -> Ranks:
        self.calls.append((tuple(cohort), certificate_id, min_cohort))
        rank = Rank(percentile=50.0, n=40, cohort_mean=1.0, z=0.0)
        return Ranks(fluidity_score=rank, stutter=rank)

    def cohort_runs(self, cohorts: Any) -> int:
        self.calls.append(("cohort_runs", sorted(tuple(c) for c in cohorts)))
        return 1234


def test_fleet_ranks_enter_the_record(tmp_path: Path) -> None:
    simple_bundle(tmp_path, [NEAR_99, NEAR_99])
    fleet = FakeFleet()
    record = as_json(make_record(tmp_path, fleet=fleet))
    assert fleet.calls[0] == (
        Cohort("Game 0", "2560x1440", "Ultra", False, "none", None, False), "TEST-0001", 30
    )
    assert record["runs"][0]["ranks"] == {
        "fluidity_score": {"percentile": 50.0, "n": 40, "cohort_mean": 1.0, "z": 0.0},
        "stutter": {"percentile": 50.0, "n": 40, "cohort_mean": 1.0, "z": 0.0},
    }
    assert record["fleet"]["median_percentile"] == 50.0
    assert record["fleet"]["fleet_runs"] == 1234
    # Asked of the bundle's own cohorts (one per run), never of the whole fleet.
    assert fleet.calls[-1] == ("cohort_runs", [
        Cohort(f"Game {i}", "2560x1440", "Ultra", False, "none", None, False) for i in (0, 1)])
    assert record["fleet"]["cohort_mean"] is None


def test_without_a_fleet_every_rank_is_provisional_with_n_1_the_run_itself(tmp_path: Path) -> None:
    simple_bundle(tmp_path, [NEAR_99])
    ranks = as_json(make_record(tmp_path))["runs"][0]["ranks"]
    assert list(ranks) == ["fluidity_score", "consistency_gap", "stutter", "avg_fps",
                           "low_1pct_fps", "low_0_1pct_fps"]
    assert all(r == {"percentile": None, "n": 1, "cohort_mean": None, "z": None}
               for r in ranks.values())


# --- chart series -------------------------------------------------------------------------


def test_chart_keeps_a_single_spike_and_the_low_lines() -> None:
    frames = np.full(100_000, 10.0)
    frames[54_321] = 250.0
    chart = chart_series(frames, 82.0, 31.9)
    assert len(chart.buckets) <= 400
    assert max(b[2] for b in chart.buckets) == 250.0
    assert min(b[1] for b in chart.buckets) == 10.0
    assert chart.duration_ms == 1_000_240.0
    assert (chart.low_1pct_ms, chart.low_0_1pct_ms) == (12.195, 31.348)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0.05, max_value=2000.0), min_size=1, max_size=3000))
def test_chart_buckets_bound_every_frame(values: list[float]) -> None:
    frames = np.asarray(values)
    chart = chart_series(frames, None, None)
    buckets = chart.buckets
    assert 1 <= len(buckets) <= 400
    starts = [b[0] for b in buckets]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert all(lo <= hi for _, lo, hi in buckets)
    assert abs(max(b[2] for b in buckets) - float(frames.max())) <= 0.0005  # 3-decimal rounding
    assert abs(min(b[1] for b in buckets) - float(frames.min())) <= 0.0005
    assert chart.low_1pct_ms is None


def test_a_capture_file_holding_several_runs_is_refused(tmp_path: Path) -> None:
    import json

    one = {"CaptureData": {"TimeInSeconds": [i * 0.01 for i in range(1000)],
                           "MsBetweenPresents": [10.0] * 1000, "Dropped": [False] * 1000}}
    (tmp_path / "captures").mkdir()
    (tmp_path / "captures/cx.json").write_text(
        json.dumps({"Hash": "x", "Info": {"GameName": "G"}, "Runs": [one, one]}))
    write_card(tmp_path, card([run_entry(capture="captures/cx.json")]))
    from certgen.errors import BundleError

    with pytest.raises(BundleError) as info:
        make_record(tmp_path)
    assert str(info.value) == (
        "card.yaml: runs[0].capture: captures/cx.json holds 2 runs; certgen never pools runs: "
        "give each run its own capture file"
    )
