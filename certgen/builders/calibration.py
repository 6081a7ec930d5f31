"""`certgen calibrate`: read the fleet, review it (certgen.fleet.calibration), render the report
(certgen.render.calibration) and hand the bytes to the Writer (atomic, confined, manifest last).

Writes `calibration.json`, `calibration.csv` (kind,name,group,value: every figure) and
`calibration.<lang>.html` / `.pdf` per language.
"""

from __future__ import annotations

import csv
import ctypes
import io
import itertools
import json
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from certgen.errors import CalibrationError, RulesError
from certgen.fleet import FleetStore
from certgen.fleet.calibration import LeftOut, kept_cohorts, kept_pages, read_fleet, review
from certgen.fleet.model import Withdrawn
from certgen.model.calibration import CalibrationReview, CandidateReview, GradeChange
from certgen.render.calibration import html_name, pdf_name, render_html, render_pdf
from certgen.sop import MAX_RULES_BYTES, Rules, load_rules, parse_rules
from certgen.support.untrusted import UnreadableInput, read_limited
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
              candidates: Sequence[Rules] = (), revoked: Withdrawn | None = None
              ) -> CalibrationReview:
    """Review the fleet at `fleet` (a file or a postgresql:// URL), read-only, in one snapshot."""
    return calibrate_fleet(fleet, rules=rules, candidates=candidates, revoked=revoked)[0]


def calibrate_fleet(fleet: str | os.PathLike[str], *, rules: Rules | None = None,
                    candidates: Sequence[Rules] = (), revoked: Withdrawn | None = None
                    ) -> tuple[CalibrationReview, LeftOut]:
    """calibrate, and the certificates it left out: specimens, the ones `revoked` lists and
    those sharing a capture with another certificate (certgen.fleet.calibration.kept_pages)."""
    current = rules or load_rules()
    left = LeftOut()
    with FleetStore.open(fleet, readonly=True) as store, store.snapshot():
        shared = store.shared_captures()
        arrays = read_fleet(kept_pages(store.calibration_pages(), revoked=revoked,
                                       shared=shared, left=left), where=str(store.path))
        sizes = kept_cohorts(store.cohorts(), left)
    if arrays.cards == 0:
        also = (f" (left out: {left_out_text(left)})" if left.certificates else "")
        raise CalibrationError(f"the fleet holds no certified card: nothing to review{also}",
                               file=str(store.path))
    give_back_memory()  # the pages read, before the review's own arrays
    reviewed = review(arrays, sizes, current, candidates)
    del arrays  # all but the ids the changes name: given back before anything is rendered
    give_back_memory()
    return reviewed, left


LEFT_OUT_NAMED: Final = 5
"""How many ids of each kind left_out_text names before "and N more"."""


def left_out_text(left: LeftOut) -> str:
    """What the review left out, in one line: `2 specimens (SAMPLE-GOLD-0002, …); 1 revoked
    (…); 1 sharing a capture with another certificate (…)`."""
    parts = []
    for ids, one, many in ((left.specimen, "specimen", "specimens"),
                           (left.revoked, "revoked", "revoked"),
                           (left.shared, "sharing a capture with another certificate",
                            "sharing a capture with another certificate")):
        if not ids:
            continue
        named = ", ".join(ids[:LEFT_OUT_NAMED])
        more = f" and {len(ids) - LEFT_OUT_NAMED} more" if len(ids) > LEFT_OUT_NAMED else ""
        parts.append(f"{len(ids)} {one if len(ids) == 1 else many} ({named}{more})")
    return "; ".join(parts)


def give_back_memory() -> None:
    """Return freed memory to the system (glibc's malloc_trim). After its first large free,
    glibc raises its mmap threshold and serves the next arrays from the heap, which it keeps
    when they are freed: on a million-run fleet about 20 MB of the review's freed arrays
    stayed resident under the PDF renderer and passed the 200 MB bound. Without glibc this
    does nothing (the bound was measured on glibc)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # TypeError: no CDLL(None) on Windows
        return
    trim(0)


STREAM_ROWS: Final = 8192
"""Rows (CSV) or grade changes (JSON) made into one piece of a streamed file: large enough
that a million changes are written in a few hundred pieces, small enough to stay a few MB."""


def csv_rows(calibration: CalibrationReview) -> Iterator[tuple[str, str, str, str]]:
    """Every figure as (kind, name, group, value), in the JSON's order (a stream: a
    candidate's changes are made one at a time)."""

    def row(kind: str, name: str, group: str, value: object) -> tuple[str, str, str, str]:
        return (kind, name, group, "" if value is None else
                repr(value) if isinstance(value, float) else str(value))

    r = calibration.readiness
    for name in ("cards", "runs", "target_cards", "cohorts", "cohorts_ranked",
                 "ranking_minimum", "issued_from", "issued_to"):
        yield row("readiness", name, "", getattr(r, name))
    for k, count in r.published_ranks.items():
        yield row("published_ranks", f"min_{k}", "", count)
    for name, line in calibration.lines.items():
        yield row("line", "value", name, line.value)
        yield row("line", "fleet_percentile", name, line.fleet_percentile)
        yield row("line", "interval_low", name,
                  None if line.interval is None else line.interval[0])
        yield row("line", "interval_high", name,
                  None if line.interval is None else line.interval[1])
    yield row("soft_limit", "past_share", "", calibration.past_soft_limit)
    for grade, share in calibration.grade_shares.items():
        yield row("grade_share", grade, "", share)
    for d in calibration.distributions:
        quantiles: list[float | None] = [None] * 5 if d.quantiles is None else [*d.quantiles]
        for q, v in zip(("p5", "p25", "p50", "p75", "p95"), quantiles, strict=True):
            yield row(f"quantile_{d.figure}", q, d.group, v)
        for i, count in enumerate(d.histogram):
            yield row(f"histogram_{d.figure}", f"bar_{i:02d}", d.group, count)
    for p in calibration.sensitivity:
        for grade, share in p.grade_shares.items():
            yield row(f"sensitivity_{p.line}", f"{p.value:g}", grade, share)
    for w in calibration.weights:
        for grade, share in w.grade_shares.items():
            yield row("sensitivity_weights", f"{w.consistency_gap:g}/{w.stutter:g}", grade, share)
    for n in calibration.near_lines:
        yield row(f"near_{n.line}", n.certificate_id, n.resolution, n.tier_mean)
    for c in calibration.candidates:
        for grade, share in c.grade_shares.items():
            yield row("candidate_share", c.rules, grade, share)
        for gate, totals in c.by_gate.items():
            yield row("candidate_gate", c.rules, f"{gate} up", totals.up)
            yield row("candidate_gate", c.rules, f"{gate} down", totals.down)
        for cert, was, now, gate in c.changes.rows():
            yield ("candidate_change", c.rules, cert, f"{was}->{now} {gate}")


def csv_chunks(calibration: CalibrationReview) -> Iterator[bytes]:
    """calibration.csv in pieces of STREAM_ROWS rows."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("kind", "name", "group", "value"))
    rows = csv_rows(calibration)
    while batch := list(itertools.islice(rows, STREAM_ROWS)):
        writer.writerows(batch)
        yield out.getvalue().encode("utf-8")
        out.seek(0)
        out.truncate()
    if out.tell():  # only the header: a review always has rows, but say it whole anyway
        yield out.getvalue().encode("utf-8")


def csv_bytes(calibration: CalibrationReview) -> bytes:
    return b"".join(csv_chunks(calibration))


def json_chunks(calibration: CalibrationReview) -> Iterator[bytes]:
    """calibration.json in pieces: the bytes `json.dumps(..., indent=2)` gives the whole
    review, each candidate's `changes` (left out of the model's dump) streamed at its pinned
    place, STREAM_ROWS changes a piece. The rest of the review is a few hundred KB."""
    data = calibration.model_dump(mode="json", by_alias=True)
    marks = []
    for i, (c, dumped) in enumerate(zip(calibration.candidates, data["candidates"],
                                        strict=True)):
        # A placeholder text where the list goes: control characters never occur in a
        # review's texts (certificate ids refuse them), so it is found exactly once.
        mark = f"\x00changes {i}\x00"
        marks.append((json.dumps(mark), c.changes))
        data["candidates"][i] = {name: mark if name == "changes" else dumped[name]
                                 for name in CandidateReview.model_fields}
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    done = 0
    for mark, changes in marks:
        at = text.index(mark, done)
        line = text.rindex("\n", 0, at) + 1
        indent = " " * (len(text[line:at]) - len(text[line:at].lstrip(" ")))
        yield text[done:at].encode("utf-8")
        yield from _changes_json(changes.rows(), len(changes), indent)
        done = at + len(mark)
    yield text[done:].encode("utf-8")


def _changes_json(rows: Iterator[tuple[str, str, str, str]], count: int, indent: str
                  ) -> Iterator[bytes]:
    """A list of changes as json.dumps(indent=2) writes it under a key indented `indent`."""
    if count == 0:
        yield b"[]"
        return
    keys = [json.dumps(field.alias or name) for name, field in GradeChange.model_fields.items()]
    inner, item = indent + "    ", indent + "  "
    head = "{\n" + inner
    between = ",\n" + inner
    tail = "\n" + item + "}"
    first = True
    while batch := list(itertools.islice(rows, STREAM_ROWS)):
        parts = [] if not first else ["[\n" + item]
        for row in batch:
            if not first:
                parts.append(",\n" + item)
            first = False
            parts.append(head + between.join(f"{k}: {json.dumps(v, ensure_ascii=False)}"
                                             for k, v in zip(keys, row, strict=True)) + tail)
        yield "".join(parts).encode("utf-8")
    yield ("\n" + indent + "]").encode("utf-8")


def json_bytes(calibration: CalibrationReview) -> bytes:
    return b"".join(json_chunks(calibration))


def write_calibration(calibration: CalibrationReview, out: Path, langs: Sequence[str], *,
                      home: str | None = None) -> list[str]:
    """Render and write the review; the names written, manifest last. `home` is the site index
    the navigation links to (`{lang}` in it becomes each page's language; None for
    `certgen calibrate`). The JSON and CSV are streamed: with a candidate that changes most of
    a million grades they are hundreds of MB, never held whole."""
    rendered: list[tuple[str, bytes]] = []  # every page first: a render error writes nothing
    for lang in langs:
        html = render_html(calibration, lang, languages=tuple(langs), home=home)
        rendered.append((html_name(lang), html.encode("utf-8")))
        # The PDF comes from the print form (no links to the other languages or the site),
        # the same whatever was built beside it.
        rendered.append((pdf_name(lang), render_pdf(render_html(calibration, lang), lang=lang)))
        give_back_memory()  # the renderer's garbage, before the next language or the stream
    with Writer(out) as writer:
        writer.write_stream(JSON_NAME, json_chunks(calibration))
        writer.write_stream(CSV_NAME, csv_chunks(calibration))
        for name, data in rendered:
            writer.write(name, data)
        writer.finish({"kind": "calibration", "languages": list(langs)})
    return [JSON_NAME, CSV_NAME, *(name for name, _ in rendered)]
