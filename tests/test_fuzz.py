"""Structure-aware fuzzing of every input surface: a real capture, a card.yaml, a lab.yaml, a
bundle zip, a series file, a frame-stats, CapFrameX JSON, MangoHud or benchmark CSV file, a
record.json, fleet JSON Lines and fleet database files, and a whole generated bundle through the
pipeline, each mutated the way a hostile or unlucky lab would. Every outcome must be a success or a CertgenError whose message
is one line per problem and names the file, line or field: any other exception is a bug, and
hypothesis shrinks it to a minimal input.

Budget: 20 examples per target in the normal suite (`make test`); `make fuzz` runs
HYPOTHESIS_PROFILE=fuzz (tests/conftest.py) with 3000 per target. The fleet targets use SQLite
files (the PostgreSQL write path shares the row checks; tests/test_fleet_hostile.py runs the
classes on both backends).
"""

from __future__ import annotations

import copy
import functools
import io
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from realdata import FILES, REAL
from strategies import (
    bundles,
    capframex_json_texts,
    cards,
    fleet_rows,
    labs,
    mangohud_texts,
    presentmon_texts,
    write_bundle,
)

from certgen.bundle import CARD_FILE, load_bundle, parse_card
from certgen.captures.detect import read_capture
from certgen.diagnostics import compute_metrics
from certgen.errors import (
    BundleErrors,
    CertgenError,
    FleetImportError,
    LabError,
    RefusalError,
    RevocationsError,
    RulesError,
)
from certgen.model import Weights

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
BUDGET = settings().max_examples if _PROFILE in ("fuzz", "long") else 20
"""Examples per target: small in the normal suite, the profile's under `make fuzz`."""

FUZZ = settings(max_examples=BUDGET, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "examples" / "gold-rx7800xt"
WEIGHTS = Weights(consistency_gap=0.7, stutter=0.3)

# Real captures, cut to their first 400 lines: mutations near the header and the first rows
# find the parser's edges; the length adds time, not coverage.
_REAL = {name: b"".join((REAL / name).read_bytes().splitlines(keepends=True)[:400])
         for name in FILES}

HOSTILE_TOKENS = [
    b"1e308", b"-1e308", b"1e-308", b"5e-324", b"NaN", b"inf", b"-0", b"0", b"", b"\x00",
    b'"', b",", b"\n", b"\r", b"\xff\xfe", b"\xe2\x80\xae", b"\xe2\x80\x8b", b"9" * 5000,
    b"x" * 140_000, b"[" * 200, b"{" * 200, b"NA", b"1_000", b"0x10", b"\t", b"\\",
]


def expect_clean(action: Callable[[], Any], name: str, *also: str) -> None:
    """Run `action`: a success, or a CertgenError of one line per problem naming where (its
    file or field, or `name` or one of `also` in its text)."""
    try:
        action()
    except FleetImportError as exc:
        # One line on the terminal: every problem (up to 20) joined by "; ", each naming its line.
        assert "\n" not in str(exc), str(exc)[:500]
        for problem in exc.errors:
            assert len(problem) < 2000, problem[:200]
            assert any(n in problem for n in (name, *also)), problem
    except (BundleErrors, LabError, RevocationsError, RulesError) as exc:
        # Every problem of the file at once, one line each, each naming the file.
        for line in str(exc).split("\n"):
            assert line.strip(), str(exc)
            assert len(line) < 2000, line[:200]
            assert any(n in line for n in (name, *also)), line
    except RefusalError as exc:
        # Every reason the certificate cannot be issued, each one line naming its field.
        for reason in exc.reasons:
            assert "\n" not in reason and len(reason) < 2000, reason[:200]
            assert CARD_FILE in reason or any(n in reason for n in (name, *also)), reason
    except CertgenError as exc:
        text = str(exc)
        assert "\n" not in text, text[:500]
        assert len(text) < 2000, text[:200]
        assert (exc.file is not None or exc.field is not None
                or any(n in text for n in (name, *also))), text


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with 1 to 3 mutations: a hostile token put in, a range deleted or repeated, a
    byte changed, the end cut."""
    for _ in range(draw(st.integers(1, 3))):
        if not data:
            data = draw(st.sampled_from(HOSTILE_TOKENS))
            continue
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "replace", "delete", "repeat", "byte", "cut"]))
        if kind in ("insert", "replace"):
            token = draw(st.sampled_from(HOSTILE_TOKENS))
            end = at if kind == "insert" else min(len(data), at + draw(st.integers(1, 12)))
            data = data[:at] + token + data[end:]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 64)):]
        elif kind == "repeat":
            piece = data[at:at + draw(st.integers(1, 200))]
            data = data[:at] + piece * draw(st.integers(2, 5)) + data[at:]
        elif kind == "byte" and at < len(data):
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
        else:
            data = data[:at]
    return data


def _measure(data: bytes, name: str, fmt: str | None = None) -> None:
    for capture in read_capture(data, name=name, format=fmt):
        compute_metrics(capture.frame_times_ms, WEIGHTS, source=name)


@FUZZ
@given(st.data())
def test_mutated_real_captures_read_or_refuse_in_one_line(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(_REAL)))
    blob = data.draw(mutated(_REAL[name]))
    expect_clean(lambda: _measure(blob, name), name)


@FUZZ
@given(st.data())
def test_mutated_generated_captures_read_or_refuse_in_one_line(data: st.DataObject) -> None:
    text = data.draw(st.one_of(presentmon_texts().map(lambda t: t[0]),
                               capframex_json_texts().map(lambda t: t[0]),
                               mangohud_texts().map(lambda t: t[0]),
                               st.just("side,kind,name,value\nbefore,frame,,16.6\n"
                                       "before,frame,,17.1\nafter,frame,,15.2\n"
                                       "after,metric,avg_fps,65.7\n")))
    blob = data.draw(mutated(text.encode("utf-8")))
    expect_clean(lambda: _measure(blob, "run.csv"), "run.csv")


@FUZZ
@given(st.data())
def test_mutated_frame_stats_read_or_refuse_in_one_line(data: st.DataObject) -> None:
    source = (ROOT / "examples" / "compare" / "series" / "runs" / "01-a.json").read_bytes()
    blob = data.draw(mutated(source[:20_000]))
    expect_clean(lambda: _measure(blob, "01-a.json"), "01-a.json")


HOSTILE_VALUES: list[Any] = [
    None, True, 0, -1, 1e308, 10 ** 120, "", " ", "\u200b", "\u202eevil", "a\x00b", "x" * 6000,
    "2026-02-30", "../x.csv", "/etc/passwd", [], {}, [[[[[[]]]]]], {"a": 1}, "ID-1\n", "\t",
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a nested mapping / list (for picking what to mutate)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.extend(_paths(item, (*prefix, i)))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    value = copy.deepcopy(value)  # HOSTILE_VALUES holds lists and dicts: never share them
    if not path:
        return value
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return doc


def _hostile_yaml(data: st.DataObject, document: Any) -> bytes:
    """A valid YAML input (card.yaml, lab.yaml) with 1-3 fields set to hostile values, and
    sometimes its bytes mutated as well."""
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(document)))
        document = _set(document, path, data.draw(st.sampled_from(HOSTILE_VALUES)))
    text = yaml.safe_dump(document, allow_unicode=True, sort_keys=False).encode("utf-8")
    if data.draw(st.booleans()):
        text = data.draw(mutated(text))
    return text


@FUZZ
@given(st.data())
def test_mutated_cards_validate_or_refuse_one_line_per_problem(data: st.DataObject) -> None:
    text = _hostile_yaml(data, data.draw(cards()))
    expect_clean(lambda: parse_card(text), CARD_FILE)


def _zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, blob in files.items():
            archive.writestr(name, blob)
    return buffer.getvalue()


_GOLD_FILES = {p.relative_to(GOLD).as_posix(): p.read_bytes()
               for p in sorted(GOLD.rglob("*")) if p.is_file()}


@FUZZ
@given(st.data())
def test_mutated_bundle_zips_load_or_refuse(data: st.DataObject) -> None:
    files = dict(_GOLD_FILES)
    extra = data.draw(st.lists(st.sampled_from([
        "a" * 300, "../evil.csv", "/abs.csv", "captures", "captures/", "card.yaml/x",
        "dir/", "dir", "C:/x.csv", "captures\\run.csv",
    ]), max_size=3))
    for name in extra:
        files[name] = b"x"
    blob = _zip_of(files)
    if data.draw(st.booleans()):
        blob = data.draw(mutated(blob))
    if data.draw(st.booleans()) and len(blob) > 10:
        # Flag bits and compression method of the first local header: encrypted, unsupported.
        at = data.draw(st.sampled_from([6, 8]))
        blob = blob[:at] + bytes([data.draw(st.sampled_from([1, 9, 12, 99]))]) + blob[at + 1:]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bundle.zip"
        path.write_bytes(blob)
        expect_clean(lambda: load_bundle(path), str(path))


@FUZZ
@given(st.data())
def test_mutated_series_files_read_or_refuse(data: st.DataObject) -> None:
    from certgen.builders.report import read_series_file

    doc: dict[str, Any] = {"series": 1, "order": "ABBA", "pairs": [
        {"before": f"runs/0{i}-a.json", "after": f"runs/0{i}-b.json"} for i in range(1, 7)],
        "description": {"en": "ReBAR off, then on", "ru": "ReBAR выключен, затем включён"}}
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        doc = _set(doc, path, data.draw(st.sampled_from(HOSTILE_VALUES)))
    text = yaml.safe_dump(doc, allow_unicode=True).encode("utf-8")
    if data.draw(st.booleans()):
        text = data.draw(mutated(text))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "series.yaml"
        path.write_bytes(text)
        expect_clean(lambda: read_series_file(path), str(path))


@functools.cache
def _gold_record() -> bytes:
    from certgen.pipeline import make_record
    from certgen.record import dump_record

    return dump_record(make_record(GOLD))


@FUZZ
@given(st.data())
def test_mutated_record_json_loads_or_refuses(data: st.DataObject) -> None:
    from certgen.record import load_record

    blob = _gold_record()
    blob = data.draw(mutated(blob[:30_000]))
    expect_clean(lambda: load_record(blob, source="record.json"), "record.json")


@settings(FUZZ, max_examples=max(5, BUDGET // 2))
@given(st.data())
def test_mutated_whole_bundles_give_a_record_or_one_line(data: st.DataObject) -> None:
    """A generated bundle with one file (card.yaml or a capture) mutated, through the whole
    pipeline to the record."""
    from certgen.pipeline import record_from_bundle

    card, files = data.draw(bundles())
    with tempfile.TemporaryDirectory() as folder:
        root = write_bundle(Path(folder) / "b", (card, files))
        target = root / data.draw(st.sampled_from(["card.yaml", *sorted(files)]))
        target.write_bytes(data.draw(mutated(target.read_bytes())))
        expect_clean(lambda: record_from_bundle(load_bundle(root)), str(root), CARD_FILE,
                     *files)


@FUZZ
@given(st.data())
def test_mutated_lab_profiles_parse_or_refuse_one_line_per_problem(data: st.DataObject) -> None:
    from certgen.lab import parse_lab

    text = _hostile_yaml(data, data.draw(labs()))
    expect_clean(lambda: parse_lab(text, source="lab.yaml"), "lab.yaml")


_RULES = yaml.safe_load((ROOT / "certgen" / "sop" / "sop-gpu-001-v1.1.yaml").read_text("utf-8"))


@FUZZ
@given(st.data())
def test_mutated_rules_files_parse_or_refuse_one_line_per_problem(data: st.DataObject) -> None:
    """Issue 27: a rules file on CERTGEN_RULES_PATH is an input surface like card.yaml."""
    from certgen.sop import parse_rules

    text = _hostile_yaml(data, copy.deepcopy(_RULES))
    expect_clean(lambda: parse_rules(text, "sop-fuzz-v1.yaml"), "sop-fuzz-v1.yaml")


_REVOCATIONS = yaml.safe_load((ROOT / "examples" / "revocations.yaml").read_text("utf-8")) + [
    {"id": "LAB-2", "date": "2027-01-02", "reason": "plain text reason"}]


@FUZZ
@given(st.data())
def test_mutated_revocation_lists_parse_or_refuse_one_line_per_problem(
        data: st.DataObject) -> None:
    """Issue 27: revocations.yaml, as `certgen registry` and `certgen verify` read it."""
    from certgen.registry import parse_revocations
    from certgen.verify import parse_revocation_list

    text = _hostile_yaml(data, copy.deepcopy(_REVOCATIONS))
    expect_clean(lambda: parse_revocations(text, source="revocations.yaml"), "revocations.yaml")
    expect_clean(lambda: parse_revocation_list(text, source="revocations.yaml"),
                 "revocations.yaml")


FLEET_HOSTILE: list[Any] = [*HOSTILE_VALUES, -0.5, 1e9 + 1, 100.01, 1.0001, 5e-324, 2 ** 63,
                            "dlss", "4K", "2560x1440\n", "1e308"]


def _fleet_use(store: Any) -> None:
    """What the commands do with a fleet: count, list cohorts, export, rank every row."""
    store.run_count()
    for cohort, _ in store.cohorts():
        store.cohort_digest([cohort])
    store.export_jsonl(io.StringIO())
    for row in store.runs():
        store.ranks_for(row.cohort, {m: row.metric(m) for m in row.as_json() if m.endswith(
            ("_fps", "_gap", "stutter", "_score"))}, "FUZZ-NEW")


@FUZZ
@given(st.data())
def test_mutated_fleet_lines_import_or_refuse(data: st.DataObject) -> None:
    import json

    from certgen.fleet import FleetStore

    rows = data.draw(st.lists(fleet_rows(), min_size=1, max_size=4))
    for _ in range(data.draw(st.integers(1, 3))):
        row = data.draw(st.sampled_from(rows))
        row[data.draw(st.sampled_from(sorted(row)))] = copy.deepcopy(
            data.draw(st.sampled_from(FLEET_HOSTILE)))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if data.draw(st.booleans()):
        text = data.draw(mutated(text))
    with tempfile.TemporaryDirectory() as folder, \
            FleetStore.open(Path(folder) / "fleet.sqlite") as store:
        stream = io.StringIO(text.decode("utf-8", errors="replace"))
        expect_clean(lambda: store.import_jsonl(stream, name="fleet.jsonl"), "fleet.jsonl")
        _fleet_use(store)  # whatever was imported reads and ranks without a traceback


@functools.cache
def _fleet_file() -> bytes:
    """A small real fleet file: two cohorts, rows with nulls, its aggregates."""
    from certgen.fleet import FleetStore

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.sqlite"
        with FleetStore.open(path) as store:
            store.import_jsonl(open(ROOT / "examples" / "fleet.jsonl", encoding="utf-8"))
        return path.read_bytes()


@settings(FUZZ, max_examples=max(5, BUDGET // 2))
@given(st.data())
def test_mutated_fleet_files_read_or_refuse(data: st.DataObject) -> None:
    """A damaged fleet file, read as `check --fleet`, `fleet cohorts` and `fleet export` read
    it (read-only): every outcome is a result or one line naming the file."""
    from certgen.fleet import FleetStore

    blob = _fleet_file()
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(100, len(blob) - 1))  # past the header: pages, not magic
        blob = blob[:at] + bytes([data.draw(st.integers(0, 255))]) + blob[at + 1:]
    if data.draw(st.booleans()):
        blob = data.draw(mutated(blob))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.sqlite"
        path.write_bytes(blob)

        def read() -> None:
            with FleetStore.open(path, readonly=True) as store:
                _fleet_use(store)

        expect_clean(read, str(path))
        assert path.read_bytes() == blob  # a read-only open never writes
