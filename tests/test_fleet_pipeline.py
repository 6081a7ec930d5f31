"""The fleet through the real pipeline: bundle -> make_record(fleet=FleetStore) -> ranks.

A bundle built from synthetic frame times (tests/bundlekit.py) is ranked against a generated
fleet in a real SQLite file, and `certgen fleet add` takes the bundle itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bundlekit import simple_bundle
from recordkit import complete_record

from certgen.cli import main
from certgen.fleet import Cohort, FleetStore
from certgen.pipeline import make_record
from certgen.record import Record, dump_record
from certgen.sop import load_rules

MIN = load_rules().ranking_min_cohort
GAME0 = Cohort("Game 0", "2560x1440", "Ultra", False, "none", None, False)
GAME0_FG = GAME0._replace(frame_generation=True)


def fleet_record(cert_id: str, cohort: Cohort, gap: float) -> Record:
    low1 = round(100 * (1 - gap), 1)
    m = {"avg_fps": 100.0, "low_1pct_fps": low1, "low_0_1pct_fps": round(low1 * 0.7, 1),
         "consistency_gap": gap, "stutter": 0.3, "fluidity_score": 70.0}
    return complete_record({
        "certificate": {"id": cert_id, "issued": "2026-01-01"},
        "status": {"issuable": True, "draft": False},
        "card": {"model": "Other card", "serial": f"S-{cert_id}"},
        "runs": [{"index": 0, **cohort._asdict(), "status": "recorded", "metrics": m}]})


def ranks_of(rec: Record, index: int) -> dict[str, Any]:
    """`runs[index].ranks` as record.json holds it."""
    ranks = rec.runs[index].ranks
    assert ranks is not None
    return ranks.model_dump(mode="json")


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    # Game 0: F 120 / F1% 108 / F0.1% 90 -> g 0.1, s 0.1667; Game 1 lives in a cohort of its own.
    return simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0), (90.0, 80.0, 70.0)])


def test_pipeline_ranks_provisional_at_29_and_published_at_30(tmp_path: Path,
                                                              bundle: Path) -> None:
    with FleetStore.open(tmp_path / "fleet.sqlite") as store:
        for i in range(MIN - 2):
            store.add_record(fleet_record(f"F-{i:03d}", GAME0, 0.05 + 0.01 * i))
        for i in range(10):  # frame generation on: another cohort, never counted
            store.add_record(fleet_record(f"FG-{i:03d}", GAME0_FG, 0.5))
        rec = make_record(bundle, fleet=store)
        ranks0 = ranks_of(rec, 0)
        assert ranks0["consistency_gap"] == {"percentile": None, "n": MIN - 1,
                                             "cohort_mean": None, "z": None}
        assert ranks_of(rec, 1)["fluidity_score"]["n"] == 1
        assert rec.fleet.provisional_runs == 2 and rec.fleet.ranked_runs == 0
        assert rec.fleet.median_percentile is None
        # The certificate's cohorts only (Game 0 and Game 1): the 10 frame-generation runs are
        # in another cohort, which the build cache does not key this bundle on.
        assert rec.fleet.fleet_runs == MIN - 2
        store.add_record(fleet_record("FG-LATE", GAME0_FG, 0.5))
        assert dump_record(make_record(bundle, fleet=store)) == dump_record(rec)

        store.add_record(fleet_record("LATE", GAME0, 0.9))
        rec = make_record(bundle, fleet=store)
        gap = ranks_of(rec, 0)["consistency_gap"]
        assert gap["n"] == MIN
        assert rec.fleet.fleet_runs == MIN - 1
        metrics0 = rec.runs[0].metrics
        assert metrics0 is not None and metrics0.consistency_gap is not None
        g = metrics0.consistency_gap
        others = [0.05 + 0.01 * i for i in range(MIN - 2)] + [0.9]
        assert gap["percentile"] == round(100 * sum(1 for o in others if g < o) / len(others), 1)
        assert rec.fleet.ranked_runs == 1
        assert rec.fleet.median_percentile == ranks_of(rec, 0)["fluidity_score"]["percentile"]
        assert rec.fleet.cohort_mean is None


def test_fleet_add_takes_a_bundle_and_a_recheck_does_not_rank_against_itself(
        tmp_path: Path, bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "fleet.sqlite"
    with FleetStore.open(db) as store:
        for i in range(MIN):
            store.add_record(fleet_record(f"F-{i:03d}", GAME0, 0.05 + 0.01 * i))
        before = make_record(bundle, fleet=store)
    main(["fleet", "add", "--fleet", str(db), str(bundle)])
    assert capsys.readouterr().out.startswith("TEST-0001: 2 runs added, 0 already in the fleet")
    main(["fleet", "add", "--fleet", str(db), str(bundle)])
    assert capsys.readouterr().out.startswith("TEST-0001: 0 runs added, 2 already in the fleet")
    with FleetStore.open(db) as store:
        assert store.run_count() == MIN + 2
        after = make_record(bundle, fleet=store)
    assert [r.ranks for r in after.runs] == [r.ranks for r in before.runs]
    assert before.fleet.fleet_runs is not None
    assert after.fleet.fleet_runs == before.fleet.fleet_runs + 2
