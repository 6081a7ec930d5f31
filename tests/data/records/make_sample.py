"""Regenerate tests/data/records/sample.json: a certificate record built from synthetic frames.

Run once by hand (`python tests/data/records/make_sample.py`); the JSON is committed so the
renderer tests do not depend on the capture readers. Deterministic (seeded generator).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from certgen.metrics.diagnostics import compute_metrics
from certgen.metrics.figures import weights_of
from certgen.model import (
    RANKED_METRICS,
    CaptureInfo,
    CardInfo,
    CertificateInfo,
    Phase1,
    Rank,
    Ranks,
)
from certgen.model.cohort import Cohort
from certgen.record import RunInput, build_record, chart_series, dump_record
from certgen.rules.verdict import RunFacts, decide
from certgen.sop import load_rules

HERE = Path(__file__).resolve().parent


def _frames(seed: int, n: int, base: float, jitter: float, spikes: list[tuple[int, float]]) -> np.ndarray:
    rng = np.random.default_rng(seed)
    frames = base + rng.uniform(-jitter, jitter, n)
    for count, value in spikes:
        idx = rng.choice(n, count, replace=False)
        frames[idx] = value
    return frames


def main() -> None:
    rules = load_rules("SOP-GPU-001 v1.1")
    weights = weights_of(rules)
    runs = [
        dict(title="Cyberpunk 2077", resolution="2560x1440", preset="Ultra", ray_tracing=False,
             upscaler="none", upscaler_mode=None, frame_generation=False,
             frames=_frames(1, 7200, 8.3, 0.3, [(40, 8.9), (6, 9.6)])),
        dict(title="Cyberpunk 2077", resolution="3840x2160", preset="Ultra", ray_tracing=False,
             upscaler="none", upscaler_mode=None, frame_generation=False,
             frames=_frames(2, 6000, 9.97, 0.07, [(54, 10.067), (6, 31.35)]),
             first=("archive/cp2077-2160p-first.csv", b"first capture bytes"),
             justification=(
                 "Isolated long frames at **asset streaming** points (see the [streaming log]"
                 "(https://lab.example/log/123)); the 1% tail is otherwise even.\n\n"
                 "- re-run once after shader compilation\n- spikes at the same map positions"
             ),
             vrm="pass: all rails within 5% of nominal"),
        dict(title="Alan Wake 2", resolution="2560x1440", preset="High", ray_tracing=True,
             upscaler="none", upscaler_mode=None, frame_generation=False,
             not_run="no hardware ray tracing on this GPU"),
        dict(title="Forza Horizon 5", resolution="2560x1440", preset="Extreme", ray_tracing=False,
             upscaler="DLSS", upscaler_mode="Quality", frame_generation=True,
             frames=_frames(3, 9000, 6.2, 0.25, [(60, 7.4), (8, 9.1)])),
        dict(title="Forza Horizon 5", resolution="3840x2160", preset="Extreme", ray_tracing=False,
             upscaler="none", upscaler_mode=None, frame_generation=False,
             frames=_frames(4, 4800, 12.5, 0.4, [(40, 13.8), (5, 17.0)])),
    ]
    inputs, facts = [], []
    ranked = {0: (71.4, 42, 93.1, 0.62), 3: (55.0, 35, 94.8, 0.12)}
    for index, run in enumerate(runs):
        config = Cohort(**{k: run[k] for k in ("title", "resolution", "preset", "ray_tracing",
                                                   "upscaler", "upscaler_mode",
                                                   "frame_generation")})
        first = run.get("first")
        first_sha = hashlib.sha256(first[1]).hexdigest() if first else None
        if "not_run" in run:
            inputs.append(RunInput(index=index, config=config, not_run_reason=run["not_run"]))
            facts.append(RunFacts(index=index, title=run["title"], resolution=run["resolution"],
                                  recorded=False))
            continue
        name = f"captures/run{index}.csv"
        metrics = compute_metrics(run["frames"], weights, source=name)
        m = metrics.model_dump()
        if index in ranked:
            p, n, mean, z = ranked[index]
            ranks = Ranks(**{key: Rank(percentile=p, n=n, z=z,
                                       cohort_mean=mean if key == "fluidity_score" else None)
                             for key in RANKED_METRICS})
        else:
            ranks = Ranks(**{key: Rank(percentile=None, n=12 + index, cohort_mean=None, z=None)
                             for key in RANKED_METRICS})
        capture = CaptureInfo(**{
            "file": name, "sha256": hashlib.sha256(run["frames"].tobytes()).hexdigest(),
            "format": "presentmon", "interval_column": "MsBetweenPresents",
            "group": f"Game.exe (pid {1000 + index}, swap chain 0x1)", "groups_left_out": (),
            "dropped_frames": 0, "missing_intervals": 0, "skipped_frames": 0,
            "incomplete": False, "incomplete_reason": None, "warnings": (),
        })  # no incomplete_detail: the sample is a record of an older certgen
        chart = chart_series(run["frames"], m["low_1pct_fps"], m["low_0_1pct_fps"])
        inputs.append(RunInput(index=index, config=config, capture=capture,
                               metrics=metrics, ranks=ranks, chart=chart))
        facts.append(RunFacts(
            index=index, title=run["title"], resolution=run["resolution"], recorded=True,
            fluidity_score=m["fluidity_score"], stutter=m["stutter"],
            justification=run.get("justification"), vrm_reexamination=run.get("vrm"),
            first_capture_file=first[0] if first else None,
            first_capture_declared=first_sha, first_capture_actual=first_sha,
        ))
    verdict = decide(facts, None, rules)
    record = build_record(
        certificate=CertificateInfo(id="ASD-2026-000123", issued="2026-11-29",
                                    sop="SOP-GPU-001 v1.1", languages=("en", "ru", "pt")),
        customer="Example Systems Ltd",
        card=CardInfo(vendor="Example", model="Example RTX 4070 Super 12G", gpu="AD104",
                      vram_gb=12, serial="EX4070S-0001", hardware_ray_tracing=True,
                      driver="566.14"),
        phase1=Phase1(vrm_rail_resistance="pass"),
        runs=inputs, verdict=verdict, rules=rules, fleet_runs=1234, draft=False,
    )
    (HERE / "sample.json").write_bytes(dump_record(record))
    print(record.grade.value, record.status.issuable,
          [r.metrics and r.metrics.fluidity_score for r in record.runs])


if __name__ == "__main__":
    main()
