"""The fleet at scale, on both backends (SQLite file and a real PostgreSQL server):

- ranking in SQL (index counts, exact per-cohort sums) gives exactly the ranks of the Python
  reference (`rank_run` over `cohort_values`, the implementation the SQL replaced), on the sample
  fleet and on random fleets, after adds, replaces and migrations;
- import and export stream (memory does not grow with the file; errors still name lines);
- the per-cohort digest the build cache keys on moves only with its own cohort;
- concurrent writers from 8 processes lose nothing.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import random
import sqlite3
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import simple_bundle
from fleetkit import COHORTS, fleet_run, random_fleet, random_values, writer
from hypothesis import given
from hypothesis import strategies as st

import certgen.fleet.store as fleet_store
from certgen.errors import FleetError, FleetImportError
from certgen.fleet import (
    METRIC_NAMES,
    SCHEMA_VERSION,
    Cohort,
    CohortSums,
    FleetRun,
    FleetStore,
    exact_scaled,
    exact_scaled_square,
    migrate,
    rank_from_sums,
    rank_run,
    rank_value,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
def reference(store: FleetStore, cohort: Cohort, values: dict[str, Any], cert: str,
              min_cohort: int) -> dict[str, dict[str, Any]]:
    """The ranks the Python implementation gives (it pulls the cohort into lists)."""
    ranks = rank_run(values, store.cohort_values(cohort, cert), min_cohort=min_cohort)
    return {name: rank.model_dump() for name, rank in ranks.items()}


def assert_ranks_match_reference(store: FleetStore, probes: list[FleetRun],
                                 min_cohort: int) -> int:
    published = 0
    for row in probes:
        values = {m: row.metric(m) for m in METRIC_NAMES}
        got = store.ranks_for(row.cohort, values, row.certificate_id, min_cohort=min_cohort)
        want = reference(store, row.cohort, values, row.certificate_id, min_cohort)
        assert got == want, (row.certificate_id, row.run_index)
        published += sum(1 for r in got.values() if r["percentile"] is not None)
    return published


@pytest.fixture
def store(fleet_location: str) -> Iterator[FleetStore]:
    with FleetStore.open(fleet_location) as s:
        yield s


# --- ranking in SQL equals the Python reference -----------------------------------------------


def test_sample_fleet_ranks_equal_the_reference(store: FleetStore) -> None:
    with (EXAMPLES / "fleet.jsonl").open(encoding="utf-8") as fh:
        store.import_jsonl(fh, name="examples/fleet.jsonl")
    rows = store.runs()
    # Every run of the sample, re-ranked as its own certificate would be, at the SOP minimum
    # and at a minimum of 2 (every cohort published).
    assert assert_ranks_match_reference(store, rows, store.min_cohort) > 0
    assert assert_ranks_match_reference(store, rows, 2) > 0
    # A new certificate's runs (not in the fleet), values between and on the sample's.
    rng = random.Random(7)
    probes = [fleet_run("NEW-1", i, row.cohort, random_values(rng))
              for i, row in enumerate(rng.sample(rows, 40))]
    probes += [fleet_run("NEW-2", i, row.cohort, {m: row.metric(m) for m in METRIC_NAMES})
               for i, row in enumerate(rows[:40])]
    assert_ranks_match_reference(store, probes, 2)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_fleets_rank_as_the_reference(store: FleetStore, seed: int) -> None:
    rows = random_fleet(seed, 120)
    store.add_runs(rows)
    assert store.run_count() == len(rows)
    rng = random.Random(seed + 100)
    probes = rows[::3] + [fleet_run(f"P{seed}", i, rng.choice(COHORTS), random_values(rng))
                          for i in range(30)]
    assert assert_ranks_match_reference(store, probes, 2) > 0
    assert assert_ranks_match_reference(store, probes, 40) >= 0


def test_replaced_runs_update_the_sums(store: FleetStore) -> None:
    rows = random_fleet(11, 60)
    store.add_runs(rows)
    rng = random.Random(12)
    changed = [fleet_run(r.certificate_id, r.run_index, rng.choice(COHORTS), random_values(rng))
               for r in rows[::4]]
    with pytest.raises(FleetError, match="already in the fleet with different figures"):
        store.add_runs(changed)
    store.add_runs(changed, replace=True)
    assert store.run_count() == len(rows)
    assert assert_ranks_match_reference(store, rows[1::2] + changed, 2) > 0


@given(others=st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=40),
       value=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
       lower=st.booleans(), minimum=st.integers(min_value=1, max_value=40),
       decimals=st.sampled_from([2, 4]))
def test_rank_from_sums_equals_rank_value(others: list[float], value: float, lower: bool,
                                          minimum: int, decimals: int) -> None:
    beaten = sum(1 for o in others if (value < o if lower else value > o))
    sums = CohortSums(len(others), beaten, sum(exact_scaled(o) for o in others),
                      sum(exact_scaled_square(o) for o in others))
    assert rank_from_sums(value, sums, min_cohort=minimum, mean_decimals=decimals) == rank_value(
        value, others, lower_is_better=lower, min_cohort=minimum, mean_decimals=decimals)


def insert_before_modes(conn: sqlite3.Connection, rows: list[FleetRun]) -> None:
    """Insert rows as a certgen from before frame-generation modes wrote them (schema 2 or 3:
    no frame_generation_mode column)."""
    keep = [i for i, c in enumerate(fleet_store._COLUMNS) if c != "frame_generation_mode"]
    conn.executemany(
        f"INSERT INTO runs ({', '.join(fleet_store._COLUMNS[i] for i in keep)}) "
        f"VALUES ({', '.join('?' * len(keep))})",
        [[fleet_store._to_sql(r)[i] for i in keep] for r in rows])


def test_a_version_2_file_migrates_to_sql_ranking(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, where=str(path), target=2)
    rows = random_fleet(21, 80)
    insert_before_modes(conn, rows)
    conn.close()
    with FleetStore.open(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.run_count() == len(rows)
        assert assert_ranks_match_reference(store, rows, 2) > 0


# --- streaming import and export ----------------------------------------------------------------


def jsonl(rows: list[FleetRun]) -> str:
    return "".join(fleet_store._dump_line(r) + "\n" for r in rows)


def test_import_and_export_stream_in_batches(store: FleetStore,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_store, "BATCH_ROWS", 7)
    rows = sorted(random_fleet(31, 40), key=lambda r: (r.certificate_id, r.run_index))
    assert store.import_jsonl(io.StringIO(jsonl(rows))) == (len(rows), 0)
    assert store.import_jsonl(io.StringIO(jsonl(rows))) == (0, len(rows))
    out = io.StringIO()
    assert store.export_jsonl(out) == len(rows)
    assert out.getvalue() == jsonl(rows)


def test_a_key_repeated_in_another_batch_names_both_lines_and_imports_nothing(
        store: FleetStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_store, "BATCH_ROWS", 3)
    rows = random_fleet(41, 10)
    text = jsonl(rows) + fleet_store._dump_line(rows[0]) + "\n"
    with pytest.raises(FleetImportError) as caught:
        store.import_jsonl(io.StringIO(text), name="f.jsonl")
    assert caught.value.errors == [
        f"f.jsonl:{len(rows) + 1}: certificate {rows[0].certificate_id} run 0 is repeated "
        "(first on line 1)"]
    assert store.run_count() == 0 and store.cohorts() == []


def test_an_error_after_written_batches_rolls_everything_back(
        store: FleetStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_store, "BATCH_ROWS", 4)
    store.add_runs(random_fleet(51, 5))
    before = (store.run_count(), store.cohort_digest(COHORTS))
    text = jsonl(random_fleet(52, 30)) + '{"certificate_id": 3}\n'
    with pytest.raises(FleetImportError):
        store.import_jsonl(io.StringIO(text), name="f.jsonl")
    assert (store.run_count(), store.cohort_digest(COHORTS)) == before


def _lines(count: int) -> Iterator[str]:
    rng = random.Random(count)
    for i in range(count):
        yield fleet_store._dump_line(fleet_run(f"M-{i:07d}", 0, COHORTS[i % 3],
                                               random_values(rng))) + "\n"


def _import_peak(tmp_path: Path, count: int) -> int:
    with FleetStore.open(tmp_path / f"mem{count}.sqlite") as store:
        tracemalloc.start()
        try:
            store.import_jsonl(_lines(count))  # type: ignore[arg-type]
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def test_import_memory_does_not_grow_with_the_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """4× the lines, about the same peak: one batch is held, not the file. Batches of 500
    rows instead of 2,000, so that 1,250 and 5,000 lines are as many batches as 5,000 and
    20,000 lines are at the real size (tracemalloc makes every line slow)."""
    monkeypatch.setattr(fleet_store, "BATCH_ROWS", 500)
    small, large = _import_peak(tmp_path, 1250), _import_peak(tmp_path, 5000)
    assert large < 1.5 * small, (small, large)


# --- the build cache keys on the bundle's own cohorts -------------------------------------------


def test_cohort_digest_moves_only_with_its_cohort(store: FleetStore) -> None:
    store.add_runs(random_fleet(61, 30))
    a, b = COHORTS[0], COHORTS[2]
    before = (store.cohort_digest([a]), store.cohort_digest([b]))
    store.add_runs([fleet_run("EXTRA", 0, a, {"avg_fps": 99.5})])
    assert store.cohort_digest([a]) != before[0]
    assert store.cohort_digest([b]) == before[1]
    store.add_runs([fleet_run("EXTRA", 0, a, {"avg_fps": 99.5})])  # idempotent: no change
    assert store.cohort_digest([a]) == store.cohort_digest([a])


def _retitle(bundle: Path, cert_id: str, title: str) -> Path:
    card = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    card["certificate"]["id"] = cert_id
    card["runs"][0]["title"] = title
    (bundle / "card.yaml").write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    return bundle


def test_adding_a_run_rebuilds_only_the_certificates_of_its_cohort(fleet_location: str,
                                                                   tmp_path: Path) -> None:
    from certgen.builders.certificate import build_bundle
    from certgen.inputs.lab import load_lab

    lab = load_lab(Path(__file__).resolve().parent.parent / "examples" / "lab.yaml")

    a = simple_bundle(tmp_path / "a", [(120.0, 108.0, 90.0)])
    b = _retitle(simple_bundle(tmp_path / "b", [(90.0, 80.0, 70.0)]), "TEST-0002", "Other game")
    cohort_a = Cohort("Game 0", "2560x1440", "Ultra", False, "none", None, False)
    out = tmp_path / "out"
    with FleetStore.open(fleet_location) as store:
        store.add_runs([fleet_run("F-1", 0, cohort_a, {"avg_fps": 100.0})])

    def build() -> dict[str, bool]:
        return {r.certificate_id: r.rebuilt for r in
                (build_bundle(x, out, languages=["en"], fleet=fleet_location, lab=lab)
                 for x in (a, b))}

    assert build() == {"TEST-0001": True, "TEST-0002": True}
    assert build() == {"TEST-0001": False, "TEST-0002": False}
    with FleetStore.open(fleet_location) as store:
        store.add_runs([fleet_run("F-2", 0, cohort_a, {"avg_fps": 101.0})])
    assert build() == {"TEST-0001": True, "TEST-0002": False}
    record = json.loads((out / "TEST-0001" / "record.json").read_text(encoding="utf-8"))
    assert record["runs"][0]["ranks"]["avg_fps"]["n"] == 3


# --- concurrent writers ---------------------------------------------------------------------------


def test_eight_concurrent_writers_lose_nothing(fleet_location: str) -> None:
    FleetStore.open(fleet_location).close()  # created and migrated once, before the race
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=writer, args=(fleet_location, w)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * 8
    expected = {(r.certificate_id, r.run_index): r for w in range(8) for c in range(15)
                for r in random_fleet(1000 * w + c, 2)}
    with FleetStore.open(fleet_location) as store:
        found = {(r.certificate_id, r.run_index): r for r in store.runs()}
        assert set(found) == set(expected) | {("SHARED", 0)}
        assert store.run_count() == len(expected) + 1
        # The per-cohort sums saw every write: ranks still equal the reference.
        assert assert_ranks_match_reference(store, list(expected.values())[::5], 2) > 0
