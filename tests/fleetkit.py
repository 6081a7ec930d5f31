"""The random fleets of tests/test_fleet_scale.py, and the writer its concurrent-writers test
starts in 8 spawned processes. A spawned process imports the module of its target: this one
imports certgen.fleet alone, where test_fleet_scale.py would bring pytest, Hypothesis and the
bundle kit into each child (about 3 s of CPU a child, most of that test's cost)."""

from __future__ import annotations

import random

from certgen.fleet import METRIC_NAMES, RANKED_METRICS, Cohort, FleetRun, FleetStore

COHORTS = [
    Cohort("Game A", "2560x1440", "Ultra", False, "none", None, False),
    Cohort("Game A", "2560x1440", "Ultra", True, "none", None, False),
    Cohort("Game B", "1920x1080", "High", False, "DLSS", "Quality", True),
]


def fleet_run(cert: str, index: int, cohort: Cohort, values: dict[str, float | None]) -> FleetRun:
    return FleetRun(certificate_id=cert, run_index=index, issued="2026-01-01",
                    card_model="Card", card_serial=f"S-{cert}", cohort=cohort,
                    source="test", **{m: values.get(m) for m in METRIC_NAMES})


def random_values(rng: random.Random) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for m in RANKED_METRICS:
        if rng.random() < 0.08:
            out[m.name] = None
            continue
        decimals = rng.choice([1, 2, 4]) if m.mean_decimals == 2 else 4
        scale = 1.0 if m.lower_is_better else 100.0 if m.name == "fluidity_score" else 150.0
        # Few distinct values: ties are common, as in a real fleet of rounded figures.
        out[m.name] = round(rng.choice([rng.uniform(0, scale), rng.randint(0, 8) * scale / 8]),
                            decimals)
    # A fleet row's lows are never above the average (the store refuses such a row).
    chain = ("avg_fps", "low_1pct_fps", "low_0_1pct_fps")
    if out["low_1pct_fps"] is not None:
        present = [name for name in chain if out[name] is not None]
        for name, value in zip(present, sorted((out[n] for n in present), reverse=True)):
            out[name] = value
    return out


def random_fleet(seed: int, certificates: int) -> list[FleetRun]:
    rng = random.Random(seed)
    rows = []
    for c in range(certificates):
        for index in range(rng.choice([1, 1, 2, 3])):
            rows.append(fleet_run(f"R{seed}-{c:04d}", index, rng.choice(COHORTS),
                                  random_values(rng)))
    return rows


def writer(location: str, worker: int) -> None:
    """One of the concurrent writers: 15 rounds of two random certificates, each added twice,
    and the one shared certificate every writer adds."""
    with FleetStore.open(location) as store:
        for c in range(15):
            rows = random_fleet(1000 * worker + c, 2)
            store.add_runs(rows)
            store.add_runs(rows)  # idempotent: the second add skips every row
            # Every worker also adds the same shared certificate: it must be counted once.
            store.add_runs([fleet_run("SHARED", 0, COHORTS[0], {"avg_fps": 60.0})])
