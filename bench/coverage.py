"""Coverage of the measurement interval (certgen.metrics.uncertainty), measured on simulated captures.

An interval is only worth printing if it does what it says: a 95 % interval should contain the
true figure in about 95 % of captures. The true figure of a real card is unknown, so captures
are drawn from a frame-time generator whose truth is known from a very long realisation:

- **Level**: a scene level (BASE_MS × a log-normal factor, σ = LEVEL_SIGMA = 0.08) that holds
  for an exponentially distributed time (mean HOLD_S = 1 s) and then moves: slow drift, as a
  benchmark path goes from a light scene to a heavy one.
- **Jitter**: log frame time is AR(1) around the level (φ = 0.8, stationary σ = 0.08): the
  frame-to-frame unevenness, correlated over a few frames as render queues are.
- **Hitches**: a Poisson process of 0.6 per second; each hitch is a burst of 1–3 frames
  multiplied by 2 + a Pareto(α = 2.5) factor (shader compiles, streaming, a driver stall).

The truth is each figure over 4 million frames (the SOP arithmetic and its rounding). A capture of n
frames is a fresh stretch of the same process; its interval covers the truth when
low ≤ truth ≤ high. The engine's interval (bootstrap_pairs, before any minimum) is scored for
every figure and length; the table also says whether certgen prints it there, which must be
exactly where the interval covers the truth in 92–98 % of captures. `make coverage` runs the
full study (500 captures per length, 10,000 resamples each) and prints the table in
docs/spec/uncertainty.md; tests/test_uncertainty_coverage.py runs a
smaller one.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter

from certgen.metrics.figures import fps_figures, ratios_from_fps
from certgen.metrics.uncertainty import RESAMPLES, bootstrap_pairs, not_estimated_reasons
from certgen.model.thresholds import Weights

WEIGHTS = Weights(consistency_gap=0.7, stutter=0.3)
BASE_MS = 7.0
HOLD_S = 1.0
LEVEL_SIGMA = 0.08
LENGTHS = (2_000, 7_000, 20_000)
CHECKED = ("avg_fps", "low_1pct_fps", "low_0_1pct_fps", "consistency_gap", "stutter",
           "fluidity_score")


def frames(rng: np.random.Generator, n: int) -> np.ndarray:
    """n frame times (ms) from the generator described above."""
    # Scene levels: each lasts an exponential time; the frames' own duration sets how many
    # frames that is, so lay levels out on a generous frame grid and cut.
    phi, sigma = 0.8, 0.08
    noise = rng.normal(0.0, sigma * np.sqrt(1 - phi**2), n)
    noise[0] = rng.normal(0.0, sigma)  # start in the stationary state
    jitter = lfilter([1.0], [1.0, -phi], noise)  # x_i = φ x_{i-1} + ε_i
    times = np.empty(n)
    position = 0
    level = BASE_MS * float(np.exp(rng.normal(0.0, LEVEL_SIGMA)))
    while position < n:
        hold_s = rng.exponential(HOLD_S)
        count = max(1, int(hold_s * 1000.0 / level))
        end = min(n, position + count)
        times[position:end] = level * np.exp(jitter[position:end])
        position = end
        level = BASE_MS * float(np.exp(rng.normal(0.0, LEVEL_SIGMA)))
    seconds = float(times.sum()) / 1000.0
    hitches = rng.poisson(0.6 * seconds)
    for at in rng.integers(0, n, hitches):
        width = int(rng.integers(1, 4))
        times[at : at + width] *= 2.0 + rng.pareto(2.5)
    return times


def figures_of(times: np.ndarray) -> dict[str, float]:
    """The SOP figures of a frame-time array, as the SOP computes and rounds them (the truth)."""
    fps = fps_figures(times)
    ratios = ratios_from_fps(fps.avg_fps, fps.low_1pct_fps, fps.low_0_1pct_fps, WEIGHTS)
    assert fps.avg_fps and fps.low_1pct_fps and fps.low_0_1pct_fps
    assert ratios.fluidity_score is not None
    assert ratios.consistency_gap is not None and ratios.stutter is not None
    return {"avg_fps": fps.avg_fps, "low_1pct_fps": fps.low_1pct_fps,
            "low_0_1pct_fps": fps.low_0_1pct_fps, "consistency_gap": ratios.consistency_gap,
            "stutter": ratios.stutter, "fluidity_score": ratios.fluidity_score}


@dataclass(frozen=True)
class Coverage:
    length: int
    figure: str
    captures: int
    covered: int
    """Captures whose interval (the engine's, before any minimum) holds the truth."""
    printed: bool
    """Whether certgen prints this figure's interval at this length (not_estimated_reasons)."""

    @property
    def share(self) -> float:
        return self.covered / self.captures


def truth(seed: int = 20261202, frames_total: int = 4_000_000) -> dict[str, float]:
    return figures_of(frames(np.random.default_rng(seed), frames_total))


def study(lengths: tuple[int, ...], captures: int, resamples: int,
          true: dict[str, float], seed: int = 1) -> list[Coverage]:
    rng = np.random.default_rng(seed)
    out: list[Coverage] = []
    for length in lengths:
        covered = dict.fromkeys(CHECKED, 0)
        for i in range(captures):
            _, pairs = bootstrap_pairs(frames(rng, length), WEIGHTS, seed=i,
                                       resamples=resamples)
            for figure in CHECKED:
                low, high = pairs[figure]
                covered[figure] += low <= true[figure] <= high
        withheld = not_estimated_reasons(length)
        out += [Coverage(length, f, captures, covered[f], f not in withheld) for f in CHECKED]
    return out


def table(rows: list[Coverage]) -> str:
    lines = ["| frames | figure | captures | the interval covers the truth | certgen prints it |",
             "| --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row.length:,} | {row.figure} | {row.captures} | "
                     f"{100 * row.share:.1f} % | {'yes' if row.printed else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--captures", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    args = parser.parse_args()
    started = time.perf_counter()
    true = truth()
    print("truth over 4,000,000 frames: " +
          ", ".join(f"{k} {v}" for k, v in true.items()), file=sys.stderr)
    lengths = tuple(int(x) for x in args.lengths.split(","))
    print(table(study(lengths, args.captures, args.resamples, true)))
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
