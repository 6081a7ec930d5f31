"""Complete, valid typed records from the short dicts tests write (fleet and CLI tests).

A test names only the fields it is about (`{"certificate": {"id": "A-1"}, "runs": [...]}`);
`complete_record` fills in the rest from tests/data/records/sample.json and validates the
result as record.json (`certgen.record.load_record`), so a test's record is always one that a
real `certgen build` could have written. `record_run` does the same for one `runs[]` entry.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from certgen.model.cohort import Cohort
from certgen.record import Record, Run, load_record

SAMPLE = Path(__file__).resolve().parent / "data" / "records" / "sample.json"
_BASE: dict[str, Any] = json.loads(SAMPLE.read_bytes())
_TEMPLATE_RUN: dict[str, Any] = _BASE["runs"][0]  # a recorded run with every object filled in
_COHORT = ("title", "resolution", "preset", "ray_tracing", "upscaler", "upscaler_mode",
           "frame_generation")
_EMPTY_WHEN_NOT_RUN = ("capture", "metrics", "ranks", "soft_limit", "first_capture", "chart")


def _merged(base: Mapping[str, Any], short: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with the keys of `short` laid over it (nested objects merged, the rest replaced)."""
    out = copy.deepcopy(dict(base))
    for key, value in short.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) and value:
            out[key] = _merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def run_json(short: Mapping[str, Any], index: int = 0) -> dict[str, Any]:
    """One complete `runs[]` object as JSON data: the short run over a recorded sample run.

    A not_run run has null capture, metrics, ranks, soft_limit, first_capture and chart; the
    `cohort` line is derived from the cohort fields; `ranks` given as {} means no ranks.
    """
    short = dict(short)
    run = _merged({**_TEMPLATE_RUN, "index": index}, {k: v for k, v in short.items()
                                                      if k != "ranks"})
    if "ranks" in short:
        run["ranks"] = copy.deepcopy(short["ranks"])
    if run["status"] == "not_run":
        for key in _EMPTY_WHEN_NOT_RUN:
            run[key] = None
    if "frame_generation_mode" not in short:  # derived from frame_generation, as card.yaml does
        run.pop("frame_generation_mode", None)
    run["cohort"] = Cohort(*(run[k] for k in _COHORT), run.get("frame_generation_mode")).line()
    return run


def record_json(short: Mapping[str, Any]) -> dict[str, Any]:
    """A complete record.json object (JSON data) from a short one; the audit follows its runs."""
    short = dict(short)
    given = short.pop("runs", _BASE["runs"])
    runs = [run_json(r, i) for i, r in enumerate(given)]
    data = _merged(_BASE, short)
    # Each certificate's captures are its own files (as a real build's are): the fleet keeps
    # out a capture already behind another certificate. A run that names its capture keeps it.
    cert_id = str(data["certificate"]["id"])
    for short_run, run in zip(given, runs, strict=True):
        if run["capture"] and "sha256" not in (short_run.get("capture") or {}):
            run["capture"] = {**run["capture"], "sha256": hashlib.sha256(
                f"{cert_id}/{run['index']}".encode()).hexdigest()}
    data["runs"] = runs
    data["audit"] = {
        **data["audit"],
        "captures": [{"run": r["index"], "file": r["capture"]["file"],
                      "sha256": r["capture"]["sha256"]} for r in runs if r["capture"]],
        "first_captures": [], "soft_limit": [],
        "not_run": [{"run": r["index"], "reason": r["not_run_reason"]}
                    for r in runs if r["status"] == "not_run"],
    }
    return data


def complete_record(short: Mapping[str, Any]) -> Record:
    """A typed, validated Record from a short dict (see the module docstring)."""
    return load_record(json.dumps(record_json(short), ensure_ascii=False).encode("utf-8"))


def record_run(short: Mapping[str, Any], index: int = 0) -> Run:
    """A typed, validated `runs[]` entry from a short dict."""
    return Run.model_validate_json(json.dumps(run_json(short, index), ensure_ascii=False))


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@functools.cache
def gold_sample_record() -> Record:
    """The GOLD sample's record as the site makes it (examples/gold-rx7800xt by the pipeline,
    issued by examples/lab.yaml, ranked against examples/fleet.jsonl): what the certificate
    tour quotes (`build_page(..., sample=)`). Made once per test process."""
    import tempfile

    from certgen.builders.explainers import SAMPLE_BUNDLE
    from certgen.fleet import FleetStore
    from certgen.inputs.lab import load_lab
    from certgen.pipeline import make_record

    with tempfile.TemporaryDirectory(prefix="certgen-test-") as tmp, \
            FleetStore.open(Path(tmp) / "fleet.sqlite") as store:
        with (EXAMPLES / "fleet.jsonl").open(encoding="utf-8") as fh:
            store.import_jsonl(fh, name="examples/fleet.jsonl")
        return make_record(EXAMPLES / SAMPLE_BUNDLE, fleet=store,
                           lab=load_lab(EXAMPLES / "lab.yaml"))
