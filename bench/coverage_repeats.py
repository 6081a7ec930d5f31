"""How sure is a grade, measured (issue 41): coverage of one capture's studentized interval, of a
run's t-interval over K captures and of a tier's pooled interval, and the wrong-"pass" rate of
each verdict for a tier whose expected mean sits on its line.

Three generators (bench/coverage.py describes the first; each draws fresh, independent captures):

- **project**: scene levels holding 1 s, AR(1) jitter, hitches 0.6 per second, each a burst of
  1–3 frames × (2 + Pareto(α = 2.5));
- **light**: scenes holding 0.3 s and lighter spikes (Pareto α = 5);
- **rare**: the project's with hitches ten times rarer (0.06 per second): issue 41's study puts it
  on the median of 252 real FrameView logs (0.71 vs 0.59 slow frames per 1,000).

The measurand is **the expected SOP figure of one capture of that length** (issue 41: short
captures read the tail optimistic, so an endless capture's figure is not what a capture
estimates). It is estimated as the mean figure over EXPECTED_CAPTURES fresh captures of the
length. A tier is TIER_RUNS runs of the same generator (each its own configuration with the same
expected score), its expected mean the expected score.

Cells (each over `--captures` simulated captures, or tiers):
- one capture, the studentized interval (`studentized_pairs`) of the lows, gap, stutter and
  score at 20,000 frames (certgen prints it for the lows, the gap and the score: WITHIN_FIGURES;
  never the average);
- one run of K = 3 and 5 captures: the 95 % t-interval of each figure (`figure_spread`);
- one tier of K = 2, 3 and 5 captures per run: its pooled interval (`tier_interval`), the width
  against the honest one (1.96 σ / √(runs × K), σ the sd of one capture's score), and with the
  line on the expected mean: how often the SOP's point rule says "pass" (its recorded captures'
  mean at or above the line), and how often the non-binary verdict says "pass" (a wrong "pass":
  the expected mean is on the line, not above it) or "conditional pass".

`make coverage` runs the full study (500 a cell) and prints the tables of docs/spec/uncertainty.md;
tests/test_how_sure_coverage.py runs a smaller one and checks the direction.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter

from certgen.metrics.figures import fps_figures, ratios_from_fps
from certgen.metrics.uncertainty import (
    STUDIED_FIGURES,
    WITHIN_FIGURES,
    interval_seed,
    studentized_pairs,
)
from certgen.model.thresholds import Weights
from certgen.model.verdict import Tier
from certgen.rules.uncertainty import RunScores, figure_spread, gate_verdict, tier_interval

WEIGHTS = Weights(consistency_gap=0.7, stutter=0.3)
BASE_MS = 7.0
LEVEL_SIGMA = 0.08
FIGURES = ("avg_fps", "low_1pct_fps", "low_0_1pct_fps", "consistency_gap", "stutter",
           "fluidity_score")
TIER_RUNS = 4
RUN_LENGTH = 7_000
"""Frames of a repeated capture (about 50 s at the generators' 7 ms)."""
SINGLE_LENGTH = 20_000
EXPECTED_CAPTURES = 2_000


@dataclass(frozen=True)
class Generator:
    name: str
    hold_s: float
    alpha: float
    hitches_per_s: float


GENERATORS = (Generator("project", 1.0, 2.5, 0.6), Generator("light", 0.3, 5.0, 0.6),
              Generator("rare", 1.0, 2.5, 0.06))


def frames(gen: Generator, rng: np.random.Generator, n: int) -> np.ndarray:
    """n frame times (ms) of the generator (bench/coverage.py's, parametrised)."""
    phi, sigma = 0.8, 0.08
    noise = rng.normal(0.0, sigma * np.sqrt(1 - phi**2), n)
    noise[0] = rng.normal(0.0, sigma)
    jitter = lfilter([1.0], [1.0, -phi], noise)
    times = np.empty(n)
    position = 0
    while position < n:
        level = BASE_MS * float(np.exp(rng.normal(0.0, LEVEL_SIGMA)))
        count = max(1, int(rng.exponential(gen.hold_s) * 1000.0 / level))
        end = min(n, position + count)
        times[position:end] = level * np.exp(jitter[position:end])
        position = end
    seconds = float(times.sum()) / 1000.0
    for at in rng.integers(0, n, rng.poisson(gen.hitches_per_s * seconds)):
        times[at : at + int(rng.integers(1, 4))] *= 2.0 + rng.pareto(gen.alpha)
    return times


def figures_of(times: np.ndarray) -> dict[str, float]:
    """The SOP figures of a capture, computed and rounded as the SOP does."""
    fps = fps_figures(times)
    ratios = ratios_from_fps(fps.avg_fps, fps.low_1pct_fps, fps.low_0_1pct_fps, WEIGHTS)
    out = {"avg_fps": fps.avg_fps, "low_1pct_fps": fps.low_1pct_fps,
           "low_0_1pct_fps": fps.low_0_1pct_fps, "consistency_gap": ratios.consistency_gap,
           "stutter": ratios.stutter, "fluidity_score": ratios.fluidity_score}
    assert all(v is not None for v in out.values())
    return {k: float(v) for k, v in out.items() if v is not None}


def expected(gen: Generator, n: int, captures: int, seed: int) -> tuple[dict[str, float], float]:
    """(each figure's expected value at n frames, the sd of one capture's score)."""
    rng = np.random.default_rng(seed)
    rows = [figures_of(frames(gen, rng, n)) for _ in range(captures)]
    mean = {k: float(np.mean([r[k] for r in rows])) for k in FIGURES}
    return mean, float(np.std([r["fluidity_score"] for r in rows], ddof=1))


@dataclass(frozen=True)
class Cell:
    generator: str
    what: str
    k: int
    figure: str
    trials: int
    covered: int
    width_ratio: float | None = None
    point_pass: float | None = None
    verdict_pass: float | None = None
    conditional_pass: float | None = None

    @property
    def share(self) -> float:
        return self.covered / self.trials


def single_cells(gen: Generator, captures: int, resamples: int, truth: dict[str, float],
                 seed: int, length: int = SINGLE_LENGTH) -> list[Cell]:
    rng = np.random.default_rng(seed)
    covered = dict.fromkeys(STUDIED_FIGURES, 0)
    for i in range(captures):
        _, pairs, _ = studentized_pairs(frames(gen, rng, length), WEIGHTS,
                                        seed=interval_seed(f"{i:064x}", gen.name),
                                        resamples=resamples)
        for figure in STUDIED_FIGURES:
            covered[figure] += pairs[figure][0] <= truth[figure] <= pairs[figure][1]
    printed = "" if length >= 20_000 else " (not printed)"
    return [Cell(gen.name, f"one capture, {length:,} frames"
                 + (printed or ("" if f in WITHIN_FIGURES else " (withheld)")), 1, f, captures,
                 covered[f]) for f in STUDIED_FIGURES]


def repeat_cells(gen: Generator, tiers: int, truth: dict[str, float], sd: float,
                 seed: int, ks: tuple[int, ...] = (2, 3, 5)) -> list[Cell]:
    rng = np.random.default_rng(seed)
    most = max(ks)
    run_cov = {(k, f): 0 for k in ks if k >= 3 for f in FIGURES}
    runs_seen = 0
    tier_cov = dict.fromkeys(ks, 0)
    widths = {k: 0.0 for k in ks}
    point_pass = 0
    verdict_pass = dict.fromkeys(ks, 0)
    conditional = dict.fromkeys(ks, 0)
    line = truth["fluidity_score"]
    tier = Tier(resolution="t", runs=TIER_RUNS, scored_runs=TIER_RUNS, not_run=0,
                mean_fluidity=line, measured=True, meets_gold=True, meets_platinum=True)
    for _ in range(tiers):
        captures = [[figures_of(frames(gen, rng, RUN_LENGTH)) for _ in range(most)]
                    for _ in range(TIER_RUNS)]
        for run in captures:
            runs_seen += 1
            for k in ks:
                if k < 3:
                    continue
                for figure in FIGURES:
                    spread = figure_spread(figure, [c[figure] for c in run[:k]])
                    assert spread.interval is not None
                    run_cov[(k, figure)] += spread.interval[0] <= truth[figure] <= spread.interval[1]
        point_pass += float(np.mean([run[0]["fluidity_score"] for run in captures])) >= line
        for k in ks:
            scored = [RunScores(i, tuple(c["fluidity_score"] for c in run[:k]))
                      for i, run in enumerate(captures)]
            row, _, half = tier_interval(tier, scored)
            assert row.interval is not None and half is not None
            tier_cov[k] += row.interval[0] <= line <= row.interval[1]
            widths[k] += half / (1.96 * sd / np.sqrt(TIER_RUNS * k))
            verdict = gate_verdict(row.interval, line)
            verdict_pass[k] += verdict == "pass"
            conditional[k] += verdict == "conditional pass"
    cells = [Cell(gen.name, f"one run, {RUN_LENGTH:,} frames", k, f, runs_seen, run_cov[(k, f)])
             for (k, f) in sorted(run_cov)]
    cells += [Cell(gen.name, f"tier of {TIER_RUNS} runs", k, "fluidity_score", tiers,
                   tier_cov[k], width_ratio=widths[k] / tiers, point_pass=point_pass / tiers,
                   verdict_pass=verdict_pass[k] / tiers,
                   conditional_pass=conditional[k] / tiers) for k in ks]
    return cells


def tables(cells: list[Cell]) -> str:
    lines = ["| generator | interval | K | figure | trials | covers the expected figure |",
             "| --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        lines.append(f"| {c.generator} | {c.what} | {c.k} | {c.figure} | {c.trials} | "
                     f"{100 * c.share:.1f} % |")
    lines += ["", "| generator | K | tier interval covers | half-width ÷ honest | SOP point rule "
              "says pass (on the line) | verdict pass (wrong) | conditional pass |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        if c.width_ratio is None:
            continue
        lines.append(f"| {c.generator} | {c.k} | {100 * c.share:.1f} % | {c.width_ratio:.2f} | "
                     f"{100 * (c.point_pass or 0):.1f} % | {100 * (c.verdict_pass or 0):.1f} % | "
                     f"{100 * (c.conditional_pass or 0):.1f} % |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--captures", type=int, default=500,
                        help="trials per cell (0: the single-capture cells only)")
    parser.add_argument("--resamples", type=int, default=2_000,
                        help="resamples of each single-capture interval")
    parser.add_argument("--expected", type=int, default=EXPECTED_CAPTURES)
    parser.add_argument("--single", type=int, default=None,
                        help="trials of the single-capture cells (default: --captures)")
    parser.add_argument("--generators", default=",".join(g.name for g in GENERATORS))
    args = parser.parse_args()
    started = time.perf_counter()
    chosen = [g for g in GENERATORS if g.name in args.generators.split(",")]
    cells: list[Cell] = []
    for i, gen in enumerate(chosen):
        truth, sd = expected(gen, RUN_LENGTH, args.expected, seed=100 + i)
        print(f"{gen.name}: expected at {RUN_LENGTH:,} frames " +
              ", ".join(f"{k} {v:.4g}" for k, v in truth.items()) + f"; sd of S_F {sd:.2f}",
              file=sys.stderr)
        if args.captures:
            cells += repeat_cells(gen, args.captures, truth, sd, seed=200 + i)
        single = args.single if args.single is not None else args.captures
        if single:
            long_truth, _ = expected(gen, SINGLE_LENGTH, max(200, args.expected // 4),
                                     seed=300 + i)
            cells += single_cells(gen, single, args.resamples, long_truth, seed=400 + i)
        print(f"  done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    print(tables(cells))


if __name__ == "__main__":
    main()
