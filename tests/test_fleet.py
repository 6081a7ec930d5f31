"""The fleet store (certgen/fleet/): cohorts, ranking, idempotent adds, JSONL, migrations.

Every store test runs on both backends (a real SQLite file in tmp_path, a real PostgreSQL database). Ranking conventions under test (see the
module docstring of certgen.fleet): n counts the run itself plus the other certificates' runs of
its cohort; percentile = share of those other runs it strictly beats; ties are not wins.
"""

from __future__ import annotations

import io
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recordkit import complete_record, record_json, record_run

from certgen.errors import FleetError, FleetImportError
from certgen.fleet import (
    JSONL_FIELDS,
    MIGRATIONS,
    SCHEMA_VERSION,
    Cohort,
    FleetStore,
    fleet_path,
    fleet_section,
    migrate,
    rank_value,
)
from certgen.record import Record, RecordError, load_record
from certgen.sop import load_rules

MIN = load_rules().ranking_min_cohort  # 30 in SOP v1.1, read from the rules file

CP = Cohort("Cyberpunk 2077", "2560x1440", "Ultra", False, "none", None, False)
# Cohorts that differ from CP in exactly one key field: none of them may ever count for CP.
NEIGHBOURS = [
    CP._replace(title="Alan Wake 2"),
    CP._replace(resolution="3840x2160"),
    CP._replace(preset="High"),
    CP._replace(ray_tracing=True),
    CP._replace(upscaler="DLSS", upscaler_mode="Quality"),
    CP._replace(upscaler="FSR", upscaler_mode="Quality"),
    CP._replace(frame_generation=True),
]


def metrics(g: float | None, s: float | None, fps: float = 100.0) -> dict[str, Any]:
    """A run's metrics from g and s (F_1% = F(1-g), F_0.1% = F_1%(1-s)); None stays None."""
    low1 = None if g is None else round(fps * (1 - g), 1)
    low01 = None if (low1 is None or s is None) else round(low1 * (1 - s), 1)
    score = None if (g is None or s is None) else round(100 * (1 - (0.7 * g + 0.3 * s)), 2)
    return {"frames": 6000, "avg_fps": fps, "low_1pct_fps": low1, "low_0_1pct_fps": low01,
            "consistency_gap": g, "stutter": s, "fluidity_score": score}


def run(index: int, cohort: Cohort, m: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, **cohort._asdict()}
    if m is None:
        out.update(status="not_run", not_run_reason="no hardware ray tracing", metrics=None)
    else:
        out.update(status="recorded", not_run_reason=None, metrics=m)
    return out


def short_record(cert_id: str, runs: list[dict[str, Any]], *,
                 issuable: bool = True) -> dict[str, Any]:
    """The fields of a record these tests are about (recordkit completes the rest)."""
    return {
        "schema_version": 1,
        "certificate": {"id": cert_id, "issued": "2026-11-29", "sop": "SOP-GPU-001 v1.1"},
        "status": {"issuable": issuable, "draft": False, "refusals": []},
        "card": {"vendor": "Example", "model": "Example 1660", "serial": f"SN-{cert_id}"},
        "runs": runs,
    }


def record(cert_id: str, runs: list[dict[str, Any]], *, issuable: bool = True) -> Record:
    return complete_record(short_record(cert_id, runs, issuable=issuable))


def gaps(count: int, start: float = 0.01, step: float = 0.01) -> list[float]:
    return [round(start + step * i, 4) for i in range(count)]


def fill(store: FleetStore, cohort: Cohort, gap_values: list[float], prefix: str) -> None:
    """One certificate per value, each with one run of `cohort`."""
    for i, g in enumerate(gap_values):
        store.add_record(record(f"{prefix}-{i:03d}", [run(0, cohort, metrics(g, 0.2))]))


@pytest.fixture
def store(fleet_location: str) -> FleetStore:
    """A fresh fleet on each backend (SQLite file, PostgreSQL database): same results."""
    s = FleetStore.open(fleet_location)
    yield s
    s.close()


# --- ranking on a generated fleet -------------------------------------------------------------


def test_n_29_is_provisional_n_30_is_published(store: FleetStore) -> None:
    """28 other runs + the run itself = 29: provisional; one more other run makes n = 30."""
    fill(store, CP, gaps(MIN - 2), "OTHER")
    ranks = store.ranks_for(CP, metrics(0.105, 0.2), "NEW-1")
    assert ranks["consistency_gap"] == {"percentile": None, "n": MIN - 1, "cohort_mean": None,
                                        "z": None}
    assert all(r["n"] == MIN - 1 and r["percentile"] is None for r in ranks.values())

    fill(store, CP, [0.5], "LATE")
    ranks = store.ranks_for(CP, metrics(0.105, 0.2), "NEW-1")
    gap = ranks["consistency_gap"]
    assert gap["n"] == MIN
    # Others: 0.01 … 0.28 and 0.5; the run (0.105) beats every other run with a larger gap.
    others = [*gaps(MIN - 2), 0.5]
    beaten = sum(1 for o in others if 0.105 < o)
    assert gap["percentile"] == round(100 * beaten / len(others), 1)
    assert gap["cohort_mean"] == round(sum([0.105, *others]) / MIN, 4)
    assert gap["z"] is not None and gap["z"] < 0  # below the cohort mean: z keeps the sign


def test_other_cohorts_are_never_counted(store: FleetStore) -> None:
    """Runs differing in one key field (title, resolution, preset, RT, upscaler, FG) never count."""
    fill(store, CP, gaps(5), "SAME")
    for k, neighbour in enumerate(NEIGHBOURS):
        fill(store, neighbour, gaps(40), f"N{k}")
    ranks = store.ranks_for(CP, metrics(0.1, 0.2), "NEW-1")
    assert {r["n"] for r in ranks.values()} == {6}
    # And each neighbour sees only its own 40 (+ itself), never CP's runs nor another's.
    for neighbour in NEIGHBOURS:
        assert store.ranks_for(neighbour, metrics(0.1, 0.2), "NEW-1")["stutter"]["n"] == 41


def test_dlss_modes_and_upscalers_are_separate_cohorts(store: FleetStore) -> None:
    dlss_q = CP._replace(upscaler="DLSS", upscaler_mode="Quality")
    fill(store, dlss_q, gaps(3), "Q")
    fill(store, CP._replace(upscaler="DLSS", upscaler_mode="Performance"), gaps(4), "P")
    fill(store, CP._replace(upscaler="XeSS", upscaler_mode="Quality"), gaps(5), "X")
    assert store.ranks_for(dlss_q, metrics(0.1, 0.2), "NEW")["fluidity_score"]["n"] == 4


def test_gap_and_stutter_ranks_are_higher_is_better(store: FleetStore) -> None:
    """A lower gap (or stutter) beats more runs: its percentile is higher."""
    for i in range(MIN + 5):
        store.add_record(record(f"F-{i:03d}", [run(0, CP, metrics(0.02 + 0.01 * i,
                                                                    0.1 + 0.01 * i))]))
    smooth = store.ranks_for(CP, metrics(0.03, 0.11), "NEW-A")
    rough = store.ranks_for(CP, metrics(0.30, 0.35), "NEW-B")
    for name in ("consistency_gap", "stutter", "fluidity_score", "low_1pct_fps",
                 "low_0_1pct_fps"):
        assert smooth[name]["percentile"] > rough[name]["percentile"], name
    # The smoothest possible run beats every other run: 100, the roughest beats none: 0.
    assert store.ranks_for(CP, metrics(0.0, 0.0), "NEW-C")["stutter"]["percentile"] == 100.0
    assert store.ranks_for(CP, metrics(0.9, 0.9), "NEW-D")["consistency_gap"]["percentile"] == 0.0


def test_fps_ranks_higher_value_wins(store: FleetStore) -> None:
    for i in range(MIN):
        store.add_record(record(f"F-{i:03d}", [run(0, CP, metrics(0.1, 0.2, fps=60.0 + i))]))
    fast = store.ranks_for(CP, metrics(0.1, 0.2, fps=200.0), "NEW")
    slow = store.ranks_for(CP, metrics(0.1, 0.2, fps=10.0), "NEW")
    assert (fast["avg_fps"]["percentile"], slow["avg_fps"]["percentile"]) == (100.0, 0.0)


def test_a_certificate_never_ranks_against_its_own_runs(store: FleetStore) -> None:
    """A re-check of an already-added certificate gives the same ranks as before adding it."""
    fill(store, CP, gaps(MIN), "OTHER")
    mine = record("MINE", [run(0, CP, metrics(0.05, 0.2)), run(1, CP, metrics(0.07, 0.2))])
    runs_metrics = [r.metrics for r in mine.runs if r.metrics is not None]
    before = [store.run_ranks(CP, m, "MINE") for m in runs_metrics]
    store.add_record(mine)
    after = [store.run_ranks(CP, m, "MINE") for m in runs_metrics]
    assert len(after) == 2 and before == after
    consistency_gap = after[0].consistency_gap
    assert consistency_gap is not None and consistency_gap.n == MIN + 1


def test_null_metric_is_not_ranked_and_not_in_others_cohort(store: FleetStore) -> None:
    """A null stutter is never 0: no stutter rank for that run, and it is not in others' n."""
    fill(store, CP, gaps(MIN), "OTHER")
    store.add_record(record("NULLS", [run(0, CP, metrics(0.01, None))]))
    ranks = store.ranks_for(CP, metrics(0.5, None), "NEW")
    assert "stutter" not in ranks and "fluidity_score" not in ranks
    assert ranks["consistency_gap"]["n"] == MIN + 2  # 30 + the null-stutter run + itself
    other = store.ranks_for(CP, metrics(0.5, 0.9), "NEW")
    assert other["stutter"]["n"] == MIN + 1  # the null-stutter run is left out
    # Had the null been stored as 0, a stutter of 0.9 would not beat "0"; it beats nothing here.
    assert other["stutter"]["percentile"] == 0.0


def test_ties_are_not_wins() -> None:
    r = rank_value(0.1, [0.1] * 29 + [0.2], lower_is_better=True, min_cohort=30)
    assert (r.percentile, r.n) == (round(100 / 30, 1), 31)


def test_zero_spread_gives_null_z() -> None:
    r = rank_value(50.0, [50.0] * 40, lower_is_better=False, min_cohort=30)
    assert (r.percentile, r.cohort_mean, r.z) == (0.0, 50.0, None)


def test_z_is_population_z_over_the_n_values() -> None:
    others = [float(v) for v in range(1, 31)]
    r = rank_value(40.0, others, lower_is_better=False, min_cohort=30)
    values = [40.0, *others]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    assert r.z == round((40.0 - mean) / sd, 2)
    assert r.percentile == 100.0


def test_first_run_of_a_cohort_is_provisional_with_n_1() -> None:
    r = rank_value(0.1, [], lower_is_better=True, min_cohort=1)
    assert (r.percentile, r.n, r.cohort_mean, r.z) == (None, 1, None, None)


@given(
    value=st.floats(0, 1, allow_nan=False),
    others=st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60),
)
def test_lower_is_better_is_the_mirror_of_higher_is_better(value: float,
                                                           others: list[float]) -> None:
    low = rank_value(value, others, lower_is_better=True, min_cohort=1)
    high = rank_value(-value, [-o for o in others], lower_is_better=False, min_cohort=1)
    assert low.percentile == high.percentile
    assert low.percentile is not None and 0.0 <= low.percentile <= 100.0


@given(others=st.lists(st.floats(0, 1, allow_nan=False), min_size=29, max_size=60),
       a=st.floats(0, 1, allow_nan=False), b=st.floats(0, 1, allow_nan=False))
def test_a_lower_gap_never_ranks_lower(others: list[float], a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    r_lo = rank_value(lo, others, lower_is_better=True, min_cohort=30)
    r_hi = rank_value(hi, others, lower_is_better=True, min_cohort=30)
    assert r_lo.percentile is not None and r_hi.percentile is not None
    assert r_lo.percentile >= r_hi.percentile


def test_min_cohort_can_come_from_the_bundles_rules(store: FleetStore) -> None:
    fill(store, CP, gaps(4), "OTHER")
    assert store.ranks_for(CP, metrics(0.1, 0.2), "NEW")["stutter"]["percentile"] is None
    assert store.ranks_for(CP, metrics(0.1, 0.1), "NEW", min_cohort=5)["stutter"] == {
        # mean 0.18; population sd sqrt((0.08² + 4·0.02²)/5) = 0.04; z = -0.08/0.04
        "percentile": 100.0, "n": 5, "cohort_mean": 0.18, "z": -2.0}


# --- the certificate's fleet section ----------------------------------------------------------


def test_fleet_section_means_median_and_dash() -> None:
    def ranked(p: float | None) -> dict[str, Any]:
        return {"fluidity_score": {"percentile": p, "n": 40 if p is not None else 3,
                                   "cohort_mean": None, "z": None}}

    runs = [
        {"status": "recorded", "metrics": metrics(0.1, 0.2), "ranks": ranked(20.0)},
        {"status": "recorded", "metrics": metrics(0.2, None), "ranks": ranked(60.0)},
        {"status": "recorded", "metrics": metrics(0.3, 0.4), "ranks": ranked(None)},
        {"status": "recorded", "metrics": metrics(None, None), "ranks": {}},
        {"status": "not_run", "metrics": None, "ranks": {}},
        {"status": "recorded", "metrics": metrics(0.05, 0.1), "ranks": ranked(90.0)},
    ]
    section = fleet_section([record_run(r, i) for i, r in enumerate(runs)], fleet_runs=1234)
    assert section.model_dump() == {
        "mean_consistency_gap": round((0.1 + 0.2 + 0.3 + 0.05) / 4, 4),
        "mean_stutter": round((0.2 + 0.4 + 0.1) / 3, 4),
        "median_percentile": 60.0,
        "cohort_mean": None,
        "ranked_runs": 3,
        "provisional_runs": 1,
        "fleet_runs": 1234,
    }


def test_fleet_section_without_published_ranks() -> None:
    section = fleet_section([record_run({"status": "not_run", "metrics": None, "ranks": {}})])
    assert section.median_percentile is None and section.mean_stutter is None
    assert (section.ranked_runs, section.provisional_runs) == (0, 0)


# --- adding -----------------------------------------------------------------------------------


def test_add_is_idempotent(store: FleetStore) -> None:
    rec = record("A-1", [run(0, CP, metrics(0.1, 0.2)), run(1, NEIGHBOURS[0], None),
                         run(2, NEIGHBOURS[1], metrics(0.2, 0.3))])
    assert store.add_record(rec) == (2, 0)  # the not-run run never enters
    assert store.add_record(rec) == (0, 2)
    assert store.run_count() == 2
    assert store.ranks_for(CP, metrics(0.1, 0.2), "OTHER")["stutter"]["n"] == 2


def test_same_certificate_from_another_dump_is_still_skipped(store: FleetStore) -> None:
    rec = record("A-1", [run(0, CP, metrics(0.1, 0.2))])
    store.add_record(rec, source="record:sha256:aaa")
    assert store.add_record(rec, source="record:sha256:bbb") == (0, 1)


def test_changed_figures_under_the_same_id_are_refused_unless_replaced(store: FleetStore) -> None:
    store.add_record(record("A-1", [run(0, CP, metrics(0.1, 0.2))]))
    changed = record("A-1", [run(0, CP, metrics(0.3, 0.2))])
    with pytest.raises(FleetError) as err:
        store.add_record(changed, where="out/A-1/record.json")
    assert str(err.value) == (
        "out/A-1/record.json: certificate A-1 run 0 is already in the fleet with different "
        "figures or configuration; it was not changed (use --replace to overwrite it)")
    assert store.runs()[0].consistency_gap == 0.1
    assert store.add_record(changed, replace=True) == (1, 0)
    assert [r.consistency_gap for r in store.runs()] == [0.3]


def test_a_refused_or_draft_record_does_not_enter(store: FleetStore) -> None:
    with pytest.raises(FleetError) as err:
        store.add_record(record("D-1", [run(0, CP, metrics(0.1, 0.2))], issuable=False))
    assert str(err.value) == ("record.json: certificate D-1 is not issuable (a draft or refused "
                              "certificate); only issued certificates enter the fleet")
    assert store.run_count() == 0


def test_record_field_errors_name_the_record_path() -> None:
    """A record a fleet cannot hold never becomes a Record: load_record names the field."""
    bad = record_json(short_record("B-1", [run(0, CP, metrics(0.1, 0.2))]))
    bad["runs"][0]["metrics"]["stutter"] = "high"
    with pytest.raises(RecordError) as err:
        load_record(json.dumps(bad).encode())
    assert str(err.value) == (
        'record.json: runs[0].metrics.stutter: expected a number or null, got "high"')
    del bad["runs"][0]["preset"]
    bad["runs"][0]["metrics"]["stutter"] = 0.2
    with pytest.raises(RecordError) as err:
        load_record(json.dumps(bad).encode())
    assert str(err.value) == "record.json: runs[0].preset: missing"


def test_several_missing_fields_are_one_error(store: FleetStore) -> None:
    with pytest.raises(FleetImportError) as err:
        store.import_jsonl(io.StringIO('{"certificate_id": "X", "run_index": 0}\n'), name="f")
    assert err.value.errors == [f"f:1: {', '.join(JSONL_FIELDS[2:])}: missing"]


# --- JSON Lines -------------------------------------------------------------------------------


def _generated_fleet(store: FleetStore) -> None:
    fill(store, CP, gaps(12), "CP")
    for k, neighbour in enumerate(NEIGHBOURS):
        fill(store, neighbour, gaps(3, start=0.05), f"N{k}")
    store.add_record(record("Ё-Кириллица", [run(0, CP._replace(title="Метро Исход"),
                                                 metrics(None, None))]))


def test_export_import_round_trip_is_byte_identical(tmp_path: Path) -> None:
    with FleetStore.open(tmp_path / "a.sqlite") as a:
        _generated_fleet(a)
        first = io.StringIO()
        count = a.export_jsonl(first)
    with FleetStore.open(tmp_path / "b.sqlite") as b:
        assert b.import_jsonl(io.StringIO(first.getvalue())) == (count, 0)
        second = io.StringIO()
        b.export_jsonl(second)
        assert b.import_jsonl(io.StringIO(first.getvalue())) == (0, count)  # idempotent
    assert second.getvalue() == first.getvalue()
    lines = first.getvalue().splitlines()
    assert len(lines) == count == 12 + 3 * len(NEIGHBOURS) + 1
    assert all(list(json.loads(line)) == list(JSONL_FIELDS) for line in lines)
    keys = [(json.loads(x)["certificate_id"], json.loads(x)["run_index"]) for x in lines]
    assert keys == sorted(keys)


def test_export_keeps_nulls_as_null(store: FleetStore) -> None:
    store.add_record(record("N-1", [run(0, CP, metrics(0.1, None))]))
    out = io.StringIO()
    store.export_jsonl(out)
    line = json.loads(out.getvalue())
    assert line["stutter"] is None and line["fluidity_score"] is None
    assert line["consistency_gap"] == 0.1


def _line(**changes: Any) -> str:
    obj: dict[str, Any] = {
        "certificate_id": "X-1", "run_index": 0, "issued": "2026-11-29",
        "card_model": "Example 1660", "card_serial": "SN-1", **CP._asdict(),
        "avg_fps": 100.0, "low_1pct_fps": 90.0, "low_0_1pct_fps": 70.0,
        "consistency_gap": 0.1, "stutter": 0.2222, "fluidity_score": 86.33, "source": "import",
    }
    obj.update(changes)
    for key in [k for k, v in changes.items() if v is ...]:
        del obj[key]
    return json.dumps(obj) + "\n"


def test_import_errors_name_line_and_field_and_import_nothing(store: FleetStore) -> None:
    text = (_line() + "\n" + _line(run_index=1, stutter="abc") + "{not json\n"
            + _line(run_index=2, ray_tracing=1, preset=...) + _line(run_index=3, extra=5)
            + "[1, 2]\n" + _line(run_index=4, avg_fps=float("nan")) + _line())
    with pytest.raises(FleetImportError) as err:
        store.import_jsonl(io.StringIO(text), name="fleet.jsonl")
    assert err.value.errors == [
        'fleet.jsonl:3: stutter: expected a number or null, got "abc"',
        "fleet.jsonl:4: not valid JSON (Expecting property name enclosed in double quotes)",
        "fleet.jsonl:5: preset: missing",
        "fleet.jsonl:5: ray_tracing: expected true or false, got 1",
        "fleet.jsonl:6: extra: unknown field",
        "fleet.jsonl:7: expected a JSON object, got [1, 2]",
        "fleet.jsonl:8: not valid JSON (NaN is not a number JSON allows)",
        "fleet.jsonl:9: certificate X-1 run 0 is repeated (first on line 1)",
    ]
    assert str(err.value).startswith(
        'fleet.jsonl:3: stutter: expected a number or null, got "abc"; ')
    assert store.run_count() == 0


def test_import_refuses_a_conflict_with_the_store(store: FleetStore) -> None:
    store.import_jsonl(io.StringIO(_line()))
    with pytest.raises(FleetError) as err:
        store.import_jsonl(io.StringIO(_line(run_index=1) + _line(stutter=0.3)), name="b.jsonl")
    assert "certificate X-1 run 0 is already in the fleet" in str(err.value)
    assert store.run_count() == 1  # all or nothing: run 1 was not added either


# --- cohorts ----------------------------------------------------------------------------------


def test_cohorts_sizes_sorted(store: FleetStore) -> None:
    fill(store, NEIGHBOURS[0], gaps(2), "AW")
    fill(store, CP, gaps(3), "CP")
    fill(store, NEIGHBOURS[6], gaps(2), "FG")
    fill(store, NEIGHBOURS[1], gaps(2), "4K")
    # Largest first; equal sizes by title, then resolution by pixel count (1440p before 4K).
    assert store.cohorts() == [(CP, 3), (NEIGHBOURS[0], 2), (NEIGHBOURS[6], 2),
                               (NEIGHBOURS[1], 2)]


# --- schema and migrations --------------------------------------------------------------------


def test_new_file_is_at_the_current_schema_version(store: FleetStore) -> None:
    assert store.schema_version == SCHEMA_VERSION == len(MIGRATIONS)


def test_a_version_1_file_migrates_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, where=str(path), target=1)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    for i, g in enumerate(gaps(MIN)):
        conn.execute(
            "INSERT INTO runs VALUES (?, 0, 'M', 'S', 'Cyberpunk 2077', '2560x1440', 'Ultra', 0, "
            "'none', NULL, 0, 100.0, 90.0, 70.0, ?, 0.2, 80.0)", (f"OLD-{i:03d}", g))
    conn.close()

    with FleetStore.open(path) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert s.run_count() == MIN
        assert s.cohorts() == [(CP, MIN)]
        assert s.runs()[0].source == "unknown"
        assert s.ranks_for(CP, metrics(0.001, 0.2), "NEW")["consistency_gap"]["percentile"] == 100.0


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(FleetError) as err:
        FleetStore.open(path)
    assert str(err.value) == (f"{path}: fleet schema version {SCHEMA_VERSION + 1} is newer than "
                              f"this certgen supports ({SCHEMA_VERSION}); upgrade certgen")


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "fleet.sqlite"
    path.write_text("hello, I am not a database\n" * 100)
    with pytest.raises(FleetError) as err:
        FleetStore.open(path)
    assert str(err.value) == f"{path}: not a fleet database (file is not a database)"


def test_fleet_path_option_then_env_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CERTGEN_FLEET", "/data/env.sqlite")
    assert fleet_path("given.sqlite") == Path("given.sqlite")
    assert fleet_path(None) == Path("/data/env.sqlite")
    monkeypatch.delenv("CERTGEN_FLEET")
    assert fleet_path(None) == Path("fleet.sqlite")
