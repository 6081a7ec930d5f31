"""`certgen calibrate`: read the fleet, review it (certgen.calibration), render the report
(certgen.render.calibration) and hand the bytes to the Writer (atomic, confined, manifest last).

Writes `calibration.json`, `calibration.csv` (kind,name,group,value: every figure) and
`calibration.<lang>.html` / `.pdf` per language.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from certgen.calibration import read_fleet, review
from certgen.errors import CalibrationError, RulesError
from certgen.fleet import FleetStore
from certgen.model.calibration import CalibrationReview
from certgen.render.calibration import html_name, pdf_name, render_html, render_pdf
from certgen.sop import MAX_RULES_BYTES, Rules, load_rules, parse_rules
from certgen.untrusted import UnreadableInput, read_limited
from certgen.writer import Writer

JSON_NAME: Final = "calibration.json"
CSV_NAME: Final = "calibration.csv"


def read_candidate(path: Path) -> Rules:
    """A candidate rules file, through the same strict schema as the packaged ones, and with
    weights that add up to 1 (the Fluidity Score's definition)."""
    shown = str(path)
    try:
        # The same reader and limit as the rules files on the search path: a FIFO or device
        # refused before any read, the size before reading.
        data = read_limited(path, limit=MAX_RULES_BYTES, what="a rules file")
    except UnreadableInput as exc:
        raise CalibrationError(str(exc), file=shown) from None
    try:
        # Every problem's line names the file as given (path.name named all but the first
        # by its base name only).
        rules = parse_rules(data, shown)
    except RulesError as exc:  # named by the path given, with its line and field
        raise CalibrationError(exc.message, file=shown, line=exc.line, field=exc.field) from None
    total = rules.weight_gap + rules.weight_stutter
    if not all(math.isfinite(w) and 0.0 <= w <= 1.0
               for w in (rules.weight_gap, rules.weight_stutter)) or abs(total - 1.0) > 1e-9:
        raise CalibrationError(
            f"the weights must be between 0 and 1 and add up to 1, got "
            f"{rules.weight_gap:g} + {rules.weight_stutter:g} = {total:g}",
            file=shown, field="fluidity_weights")
    return rules


def calibrate(fleet: str | os.PathLike[str], *, rules: Rules | None = None,
              candidates: Sequence[Rules] = ()) -> CalibrationReview:
    """Review the fleet at `fleet` (a file or a postgresql:// URL), read-only, in one snapshot."""
    current = rules or load_rules()
    with FleetStore.open(fleet, readonly=True) as store, store.snapshot():
        arrays = read_fleet(store.calibration_pages(), where=str(store.path))
        sizes = store.cohorts()
    if arrays.cards == 0:
        raise CalibrationError("the fleet holds no certified card: nothing to review",
                               file=str(store.path))
    return review(arrays, sizes, current, candidates)


def csv_rows(calibration: CalibrationReview) -> list[tuple[str, str, str, str]]:
    """Every figure as (kind, name, group, value), in the JSON's order."""
    rows: list[tuple[str, str, str, str]] = []

    def add(kind: str, name: str, group: str, value: object) -> None:
        rows.append((kind, name, group, "" if value is None else
                     repr(value) if isinstance(value, float) else str(value)))

    r = calibration.readiness
    for name in ("cards", "runs", "target_cards", "cohorts", "cohorts_ranked",
                 "ranking_minimum", "issued_from", "issued_to"):
        add("readiness", name, "", getattr(r, name))
    for k, count in r.published_ranks.items():
        add("published_ranks", f"min_{k}", "", count)
    for name, line in calibration.lines.items():
        add("line", "value", name, line.value)
        add("line", "fleet_percentile", name, line.fleet_percentile)
        add("line", "interval_low", name, None if line.interval is None else line.interval[0])
        add("line", "interval_high", name, None if line.interval is None else line.interval[1])
    add("soft_limit", "past_share", "", calibration.past_soft_limit)
    for grade, share in calibration.grade_shares.items():
        add("grade_share", grade, "", share)
    for d in calibration.distributions:
        quantiles: list[float | None] = [None] * 5 if d.quantiles is None else [*d.quantiles]
        for q, v in zip(("p5", "p25", "p50", "p75", "p95"), quantiles, strict=True):
            add(f"quantile_{d.figure}", q, d.group, v)
        for i, count in enumerate(d.histogram):
            add(f"histogram_{d.figure}", f"bar_{i:02d}", d.group, count)
    for p in calibration.sensitivity:
        for grade, share in p.grade_shares.items():
            add(f"sensitivity_{p.line}", f"{p.value:g}", grade, share)
    for w in calibration.weights:
        for grade, share in w.grade_shares.items():
            add("sensitivity_weights", f"{w.consistency_gap:g}/{w.stutter:g}", grade, share)
    for n in calibration.near_lines:
        add(f"near_{n.line}", n.certificate_id, n.resolution, n.tier_mean)
    for c in calibration.candidates:
        for grade, share in c.grade_shares.items():
            add("candidate_share", c.rules, grade, share)
        for ch in c.changes:
            add("candidate_change", c.rules, ch.certificate_id, f"{ch.from_}->{ch.to} {ch.gate}")
    return rows


def csv_bytes(calibration: CalibrationReview) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("kind", "name", "group", "value"))
    writer.writerows(csv_rows(calibration))
    return out.getvalue().encode("utf-8")


def json_bytes(calibration: CalibrationReview) -> bytes:
    data = calibration.model_dump(mode="json", by_alias=True)
    return (json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()


def write_calibration(calibration: CalibrationReview, out: Path, langs: Sequence[str], *,
                      home: str | None = None) -> list[str]:
    """Render and write the review; the names written, manifest last. `home` is the site index
    the navigation links to (`{lang}` in it becomes each page's language; None for
    `certgen calibrate`)."""
    files: list[tuple[str, bytes]] = [(JSON_NAME, json_bytes(calibration)),
                                      (CSV_NAME, csv_bytes(calibration))]
    for lang in langs:
        html = render_html(calibration, lang, languages=tuple(langs), home=home)
        files.append((html_name(lang), html.encode("utf-8")))
        files.append((pdf_name(lang), render_pdf(html, lang=lang)))
    writer = Writer(out)
    for name, data in files:
        writer.write(name, data)
    writer.finish({"kind": "calibration", "languages": list(langs)})
    return [name for name, _ in files]
