"""The certificate record: plain data in, deterministic JSON out, and back (docs/record.md).

record.json is the single source every document reads. `build_record` assembles it from the
loaded bundle, the computed runs and the verdict; `dump_record` writes it byte-for-byte the same
for the same inputs (schema_version first, fixed key order, sorted listings, UTF-8 text,
2-space indent, newline at the end); `load_record` reads it back and checks its version.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from certgen import __version__
from certgen.errors import CertgenError
from certgen.metrics import round_half_away
from certgen.rules import Verdict, cohort_key, cohort_label
from certgen.sop import Rules

SCHEMA_VERSION = 1
CHART_BUCKETS = 400
"""At most this many [t_start_ms, min_ms, max_ms] buckets per run chart."""

Record = dict[str, Any]
"""A certificate record: a plain JSON-able dict in the key order of docs/record.md."""


class RecordError(CertgenError, ValueError):
    """A record.json that cannot be read (not JSON, wrong schema version, wrong shape)."""


# --------------------------------------------------------------------------------------------
# Chart series
# --------------------------------------------------------------------------------------------


def _r3(value: float) -> float:
    return round_half_away(float(value), 3)


def min_max_buckets(
    frames: npt.NDArray[np.float64],
    starts_ms: npt.NDArray[np.float64],
    duration_ms: float,
    max_buckets: int = CHART_BUCKETS,
) -> list[list[float]]:
    """[[bucket start ms, min ms, max ms], ...] over equal-time buckets (at most one a frame).

    Each frame falls in the bucket where it starts (`starts_ms`, in time order); a bucket keeps
    its shortest and longest frame, so a single spike survives. Buckets no frame starts in are
    left out. Every chart (certificates, before/after reports) is drawn from this.
    """
    if frames.size == 0 or duration_ms <= 0.0:
        return []
    count = min(max_buckets, int(frames.size))
    width = duration_ms / count
    index = np.minimum((starts_ms / width).astype(np.int64), count - 1)
    # Frames are in time order, so each bucket is a contiguous slice starting at `first`.
    first = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    mins = np.minimum.reduceat(frames, first)
    maxs = np.maximum.reduceat(frames, first)
    return [
        [_r3(int(b) * width), _r3(lo), _r3(hi)]
        for b, lo, hi in zip(index[first].tolist(), mins.tolist(), maxs.tolist(), strict=True)
    ]


def chart_series(
    frame_times_ms: npt.NDArray[np.float64],
    low_1pct_fps: float | None,
    low_0_1pct_fps: float | None,
    *,
    max_buckets: int = CHART_BUCKETS,
) -> dict[str, Any]:
    """Frame times downsampled for a chart: equal-time buckets with their min and max.

    Each frame falls in the bucket where it starts; a bucket keeps its shortest and longest
    frame, so a single spike survives the downsampling. Buckets no frame starts in (inside a
    long stall) are left out. The 1% and 0.1% lows are given as frame times (1000 / FPS).
    """
    frames = np.asarray(frame_times_ms, dtype=np.float64)
    frames = frames[frames > 0.0]
    low1 = None if not low_1pct_fps else _r3(1000.0 / low_1pct_fps)
    low01 = None if not low_0_1pct_fps else _r3(1000.0 / low_0_1pct_fps)
    if frames.size == 0:
        return {"duration_ms": 0.0, "buckets": [], "low_1pct_ms": low1, "low_0_1pct_ms": low01}
    ends = np.cumsum(frames)
    duration = float(ends[-1])
    return {
        "duration_ms": _r3(duration),
        "buckets": min_max_buckets(frames, ends - frames, duration, max_buckets),
        "low_1pct_ms": low1,
        "low_0_1pct_ms": low01,
    }


# --------------------------------------------------------------------------------------------
# Building the record
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunInput:
    """One run as the pipeline computed it (everything the record prints about it)."""

    index: int
    config: Mapping[str, Any]
    """The cohort fields of card.yaml: title, resolution, preset, ray_tracing, upscaler,
    upscaler_mode, frame_generation."""
    not_run_reason: str | None = None
    capture: Mapping[str, Any] | None = None
    """runs[].capture of the record (file, sha256, format, …)."""
    metrics: Mapping[str, Any] | None = None
    ranks: Mapping[str, Any] | None = None
    chart: Mapping[str, Any] | None = None


COHORT_FIELDS = (
    "title", "resolution", "preset", "ray_tracing", "upscaler", "upscaler_mode",
    "frame_generation",
)


def rules_json(rules: Rules) -> dict[str, Any]:
    """The `rules` block: the thresholds that were applied."""
    return {
        "sop": rules.sop,
        "weights": {"consistency_gap": rules.weight_gap, "stutter": rules.weight_stutter},
        "gold_line": rules.gold_line,
        "platinum_line": rules.platinum_line,
        "soft_limit_stutter": rules.soft_limit_stutter,
        "rerun_stutter": rules.rerun_stutter,
        "ranking_min_cohort": rules.ranking_min_cohort,
        "calibrated": rules.calibrated,
        "calibration_fleet_target": rules.calibration_fleet_target,
    }


def build_record(
    *,
    certificate: Mapping[str, Any],
    customer: str,
    card: Mapping[str, Any],
    phase1: Mapping[str, Any],
    runs: Sequence[RunInput],
    verdict: Verdict,
    rules: Rules,
    fleet: Mapping[str, Any],
    draft: bool,
) -> Record:
    """The record of one certificate, keys in the order of docs/record.md."""
    run_objs = []
    for run in runs:
        config = {k: run.config[k] for k in COHORT_FIELDS}
        soft = verdict.soft_limits[run.index]
        first = verdict.first_captures[run.index]
        run_objs.append(
            {
                "index": run.index,
                **config,
                "cohort": cohort_label(cohort_key(**config)),
                "status": "not_run" if run.capture is None else "recorded",
                "not_run_reason": run.not_run_reason,
                "capture": None if run.capture is None else dict(run.capture),
                "metrics": None if run.metrics is None else dict(run.metrics),
                "ranks": None if run.ranks is None else {k: dict(v) for k, v in run.ranks.items()},
                "soft_limit": None if soft is None else soft.as_json(),
                "first_capture": None if first is None else first.as_json(),
                "chart": None if run.chart is None else dict(run.chart),
            }
        )
    audit = {
        "captures": [
            {"run": r.index, "file": r.capture["file"], "sha256": r.capture["sha256"]}
            for r in runs
            if r.capture is not None
        ],
        "first_captures": [
            {
                "run": f.run,
                "file": f.file,
                "sha256": f.sha256_actual,
                "sha256_declared": f.sha256_declared,
                "matches": f.matches,
                "required": f.required,
                "why": f.why,
                "why_detail": f.why_detail_json(),
            }
            for f in verdict.first_captures
            if f is not None and f.file is not None
        ],
        "soft_limit": [
            {
                "run": s.run,
                "stutter": s.stutter,
                "justification": s.justification,
                "vrm_reexamination": s.vrm_reexamination,
                "satisfied": s.satisfied,
            }
            for s in verdict.soft_limits
            if s is not None and s.raised
        ],
        "not_run": [
            {"run": r.index, "reason": r.not_run_reason} for r in runs if r.capture is None
        ],
        "rules_version": rules.rules_version,
        "certgen_version": __version__,
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "certificate": dict(certificate),
        "rules_version": rules.rules_version,
        "certgen_version": __version__,
        "rules": rules_json(rules),
        "status": {
            "issuable": verdict.issuable,
            "draft": draft,
            "refusals": list(verdict.refusals),
            "refusal_details": [r.as_json() for r in verdict.refusal_details],
        },
        "customer": customer,
        "card": dict(card),
        "phase1": dict(phase1),
        "grade": verdict.grade.as_json(),
        "tiers": [t.as_json() for t in verdict.tiers],
        "runs": run_objs,
        "audit": audit,
        "fleet": dict(fleet),
        "calibration": {
            "calibrated": rules.calibrated,
            "fleet_target": rules.calibration_fleet_target,
            "statement": dict(rules.calibration_statement),
        },
    }


# --------------------------------------------------------------------------------------------
# Bytes
# --------------------------------------------------------------------------------------------


def _check_finite(value: Any, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise RecordError(f"not a finite number: {value!r}", field=path)
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, f"{path}[{i}]")


def dump_record(record: Mapping[str, Any]) -> bytes:
    """record.json bytes: schema_version first, the record's own key order, UTF-8, newline."""
    if next(iter(record), None) != "schema_version":
        raise RecordError("the first key must be schema_version", file="record.json")
    _check_finite(dict(record), "")
    text = json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False)
    return (text + "\n").encode("utf-8")


def load_record(data: bytes, *, source: str = "record.json") -> Record:
    """Read record.json bytes back into a record (same key order); checks the schema version."""
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"not a JSON record: {exc}", file=source) from None
    if not isinstance(record, dict):
        raise RecordError("expected a JSON object", file=source)
    version = record.get("schema_version")
    if version != SCHEMA_VERSION:
        raise RecordError(
            f"expected schema_version {SCHEMA_VERSION}, got {version!r}", file=source,
            field="schema_version",
        )
    return record
