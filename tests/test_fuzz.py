"""Structure-aware fuzzing of every input surface: a real capture, a card.yaml, a lab.yaml, a
bundle zip, a series file, a frame-stats, CapFrameX JSON, MangoHud or benchmark CSV file, a
record.json, fleet JSON Lines and fleet database files, a whole generated bundle through the
pipeline, rules files and revocation lists, signed certificates given to `certgen verify` and the
RFC 3161 timestamps inside them, and `certgen calibrate`'s candidate rules files and fleets, each
mutated the way a hostile or unlucky lab would. Every outcome must be a success or a CertgenError whose message
is one line per problem and names the file, line or field: any other exception is a bug, and
hypothesis shrinks it to a minimal input.

Budget: 20 examples per target in the normal suite (`make test`); `make fuzz` runs
HYPOTHESIS_PROFILE=fuzz (tests/conftest.py) with 3000 per target. The fleet targets use SQLite
files (the PostgreSQL write path shares the row checks; tests/test_fleet_hostile.py runs the
classes on both backends).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator
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

from certgen.captures.detect import read_capture
from certgen.errors import (
    BundleErrors,
    CalibrationError,
    CertgenError,
    FleetImportError,
    LabError,
    RefusalError,
    RevocationsError,
    RulesError,
)
from certgen.inputs.bundle import CARD_FILE, load_bundle, parse_card
from certgen.metrics.diagnostics import compute_metrics
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
    except (BundleErrors, CalibrationError, LabError, RevocationsError, RulesError) as exc:
        # Every problem of the file at once, one line each, each naming the file (a candidate
        # rules file given to calibrate is refused as a rules file is).
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
    from certgen.inputs.lab import parse_lab

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
    from certgen.verify.revocation import parse_revocation_list

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


# --- issue 27: signed PDFs given to `certgen verify`, their timestamps, calibration inputs ------

VERIFY_EXAMPLES = max(6, BUDGET // 2)
TIMESTAMP_EXAMPLES = max(4, BUDGET // 4)
"""verify runs pyHanko's difference analysis (about 1 s a genuine one-run certificate on the
2-core machine; a damaged file is refused sooner) and a timestamped one validates its chain of
timestamps too (about 4 s): these budgets keep each target near 20 s."""

HANG_S = 60
"""One example taking longer than this is a hang (SIGALRM fails the test instead of the suite
waiting for ever); a genuine verify takes 1 to 4 s, ten times that under load."""


class _Hang(Exception):
    """Raised by SIGALRM inside an example that took longer than HANG_S."""


@functools.cache
def _signed_certificates() -> dict[str, bytes]:
    """A one-run certificate signed by the test PKI at a given time ("signed", with the CA to
    trust), and the same signed with a timestamp from a real RFC 3161 authority, PAdES B-LTA
    ("timestamped", with that authority's CA), made once per process. One run: verify's
    difference analysis grows with the square of the PDF's objects."""
    import datetime as dt
    import shutil

    from bundlekit import simple_bundle
    from pkikit import PASSPHRASE, make_pki

    from certgen.builders.certificate import build_bundle
    from certgen.inputs.lab import load_lab
    from certgen.render.sign import signing_key

    lab = load_lab(ROOT / "examples" / "lab.yaml")
    out: dict[str, bytes] = {"ca": make_pki().ca_pem}
    with tempfile.TemporaryDirectory() as folder:
        bundle = simple_bundle(Path(folder) / "bundle", [(120.0, 108.0, 90.0)])
        key = signing_key(make_pki().lab_p12, PASSPHRASE, source="lab.p12").at(
            dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC), given=True)
        built = Path(build_bundle(bundle, Path(folder) / "signed", languages=["en"], lab=lab,
                                  sign=key).folder)
        out["signed"] = (built / "certificate.en.pdf").read_bytes()
        built = Path(build_bundle(bundle, Path(folder) / "unsigned", languages=["en"],
                                  lab=lab).folder)
        out["unsigned"] = (built / "certificate.en.pdf").read_bytes()
        if shutil.which("openssl") is not None:
            from tsakit import PASSPHRASE as TSA_PASSPHRASE
            from tsakit import running_authority

            with running_authority(lab_valid_for=dt.timedelta(days=1000),
                                   signatory="A. Sample") as tsa:
                stamped_key = signing_key(tsa.lab_p12, TSA_PASSPHRASE,
                                          source="lab.p12").with_tsa(tsa.tsa_url)
                built = Path(build_bundle(bundle, Path(folder) / "stamped", languages=["en"],
                                          lab=lab, sign=stamped_key).folder)
                out["timestamped"] = (built / "certificate.en.pdf").read_bytes()
                out["tsa_ca"] = tsa.ca_pem
    return out


def _byte_ranges(pdf: bytes) -> list[tuple[int, int]]:
    """The (start, end) of every signature's /Contents hex string (what its ByteRange leaves
    out, `<` and `>` included), in file order: the signature, then any document timestamp."""
    import re

    return [(int(m.group(2)), int(m.group(3)))
            for m in re.finditer(rb"/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]", pdf)]


def _verify_cli(blob: bytes, trust: bytes, *extra: str) -> tuple[int, str, str]:
    """`certgen verify` on `blob` as a user runs it (exit code, stdout, stderr), in-process, with
    a hang turned into a failure."""
    import signal

    from certgen.cli import main

    def fire(signum: int, frame: Any) -> None:
        raise _Hang(f"verify took more than {HANG_S} s: a hang")

    with tempfile.TemporaryDirectory() as folder:
        pdf, ca = Path(folder) / "certificate.pdf", Path(folder) / "ca.pem"
        pdf.write_bytes(blob)
        ca.write_bytes(trust)
        out, err = io.StringIO(), io.StringIO()
        previous = signal.signal(signal.SIGALRM, fire)
        signal.alarm(HANG_S)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(["verify", str(pdf), "--trust", str(ca), *extra]) or 0
                except SystemExit as exc:
                    code = int(exc.code or 0)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def expect_verdict(code: int, out: str, err: str) -> None:
    """What docs/verify.md promises for any file: a verdict (a line per check, the summary
    last, exit 0 VERIFIED, 1 NOT VERIFIED, 3 VERIFIED EXCEPT) or one refusal line (exit 1),
    never a traceback or an internal error (exit 70)."""
    assert "Traceback" not in err and "internal error" not in err, err[-3000:]
    assert code in (0, 1, 3), (code, err[-2000:])
    lines = out.splitlines()
    if lines:
        summary = {0: "VERIFIED", 1: "NOT VERIFIED", 3: "VERIFIED EXCEPT"}[code]
        assert lines[-1].startswith(summary) and (code == 1 or "NOT" not in lines[-1]), lines[-1]
        for line in lines[:-1]:
            assert line.startswith(("PASS ", "FAIL ", "SKIP ")) and len(line) < 2000, line[:300]
        assert all(w.startswith("warning: ") for w in err.splitlines()), err
    else:
        assert code == 1 and err.count("\n") == 1 and err.startswith("certgen: "), err


@st.composite
def damaged_signed_pdfs(draw: st.DrawFn, pdf: bytes) -> tuple[bytes, bool]:
    """`pdf` damaged as a bad disk, a bad transfer or a forger would: (the bytes, whether a
    signed byte changed). Cut short, hex digits of a signature's /Contents changed or its DER
    zeroed from some point (a truncated CMS of the same length), bytes of the last
    cross-reference section or its startxref changed, a /ByteRange number rewritten, an
    incremental update appended (an object redefined, or junk after %%EOF), or a generic
    mutation."""
    import re

    gaps = _byte_ranges(pdf)
    kind = draw(st.sampled_from(["cut", "contents", "der-tail", "xref", "byterange", "update",
                                 "trailing", "generic"]))
    data = bytearray(pdf)
    if kind == "cut":
        return pdf[:draw(st.integers(0, len(pdf) - 1))], True
    if kind in ("contents", "der-tail"):
        start, end = draw(st.sampled_from(gaps))
        if kind == "contents":
            for _ in range(draw(st.integers(1, 4))):
                at = draw(st.integers(start + 1, end - 2))
                data[at] = draw(st.sampled_from(b"0123456789abcdefABCDEF>< \n%g"))
        else:
            at = draw(st.integers(start + 1, end - 2))
            data[at:end - 1] = b"0" * (end - 1 - at)
        return bytes(data), False
    if kind == "xref":
        last = pdf.rfind(b"startxref")
        table = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
        at = draw(st.integers(min(table, last), len(pdf) - 1))
        data[at] = draw(st.integers(0, 255))
        return bytes(data), data != bytearray(pdf)
    if kind == "byterange":
        found = list(re.finditer(rb"/ByteRange\s*\[([\d\s]+)\]", pdf))
        match = draw(st.sampled_from(found))
        numbers = match.group(1).split()
        i = draw(st.integers(0, len(numbers) - 1))
        numbers[i] = str(draw(st.one_of(st.integers(0, len(pdf) * 2),
                                         st.sampled_from([-1, 2 ** 63])))).encode()
        body = b" ".join(numbers)
        if draw(st.booleans()):  # same width: the offsets after it stay true
            body = body[:len(match.group(1))].ljust(len(match.group(1)))
        return pdf[:match.start(1)] + body + pdf[match.end(1):], True
    if kind == "update":
        from forgekit import append_update

        number = draw(st.integers(1, 12))
        body = draw(st.sampled_from([b"<< /Type /Catalog >>", b"(PLATINUM)", b"null",
                                     b"<< /Length 5 >>\nstream\nBT ET\nendstream", b"[" * 300]))
        try:
            return append_update(pdf, {number: body}), True
        except Exception:  # the helper needs a readable trailer: the update is then raw junk
            return pdf + b"\n%d 0 obj\n" % number + body + b"\nendobj\n", True
    if kind == "trailing":
        return pdf + draw(st.sampled_from([b"\n", b"%%EOF\n", b"\x00" * 100, b"junk",
                                           b"\nstartxref\n0\n%%EOF\n"])), True
    return draw(mutated(pdf)), True


@settings(FUZZ, max_examples=VERIFY_EXAMPLES)
@given(st.data())
def test_damaged_signed_certificates_end_in_a_verdict_or_one_line(data: st.DataObject) -> None:
    """Issue 27: `certgen verify` on a real signed certificate, damaged: its verdict and exit
    code, or one refusal line; and never VERIFIED once a signed byte changed."""
    made = _signed_certificates()
    blob, signed_byte_changed = data.draw(damaged_signed_pdfs(made["signed"]))
    code, out, err = _verify_cli(blob, made["ca"])
    expect_verdict(code, out, err)
    if blob != made["signed"] and signed_byte_changed:
        assert code != 0, out


def _timestamp_tokens(pdf: bytes) -> list[tuple[int, int]]:
    """The (start, end) hex-digit positions in `pdf` of every RFC 3161 timestamp token: the
    signature's own (its CMS's signature-time-stamp-token attribute) and each document
    timestamp's whole /Contents."""
    from asn1crypto import cms

    tokens = []
    for start, end in _byte_ranges(pdf):
        der = bytes.fromhex(pdf[start + 1:end - 1].decode("ascii"))
        # The zero padding after the DER is trailing data (strict=False); stripping zeros would
        # also cut a token whose signature happens to end in a zero byte.
        content = cms.ContentInfo.load(der, strict=False)
        signer = content["content"]["signer_infos"][0]
        if content["content"]["encap_content_info"]["content_type"].native == "tst_info":
            tokens.append((start + 1, start + 1 + 2 * len(content.dump())))
            continue
        for attribute in signer["unsigned_attrs"] or []:
            if attribute["type"].native == "signature_time_stamp_token":
                token = attribute["values"][0].dump()
                at = der.find(token)
                assert at >= 0
                tokens.append((start + 1 + 2 * at, start + 1 + 2 * (at + len(token))))
    return tokens


@settings(FUZZ, max_examples=TIMESTAMP_EXAMPLES)
@given(st.data())
def test_damaged_timestamp_tokens_end_in_a_verdict_or_one_line(data: st.DataObject) -> None:
    """Issue 27: the RFC 3161 tokens inside a PAdES B-LTA certificate (the signature's
    timestamp, the document timestamp), damaged byte by byte, cut short (zeroed from some
    point), or swapped for each other: a verdict or one line, never a traceback."""
    import shutil

    if shutil.which("openssl") is None:
        raise AssertionError("openssl is missing: the timestamp targets need OpenSSL's `ts`")
    made = _signed_certificates()
    pdf = made["timestamped"]
    tokens = _timestamp_tokens(pdf)
    # The signature's timestamp, the document timestamp over the first validation data and the
    # one over the CRL the build fetched after signing (tests/tsakit.py: always, by default).
    assert len(tokens) == 3, tokens
    blob = bytearray(pdf)
    kind = data.draw(st.sampled_from(["digits", "cut", "swap"]))
    start, end = data.draw(st.sampled_from(tokens))
    if kind == "digits":
        for _ in range(data.draw(st.integers(1, 6))):
            at = data.draw(st.integers(start, end - 1))
            blob[at] = data.draw(st.sampled_from(b"0123456789abcdef"))
    elif kind == "cut":
        at = data.draw(st.integers(start, end - 1))
        blob[at:end] = b"0" * (end - at)
    else:
        # Another token's first bytes over this one's, as much as fits.
        c, d = data.draw(st.sampled_from([t for t in tokens if t != (start, end)]))
        short = min(end - start, d - c)
        blob[start:start + short] = pdf[c:c + short]
    ca = made["tsa_ca"]
    code, out, err = _verify_cli(bytes(blob), ca)
    expect_verdict(code, out, err)


@functools.cache
def _calibration_fleet() -> bytes:
    """A small real fleet whose cards calibrate reviews: examples/fleet.jsonl, certified cards
    with their grades (the same file _fleet_file makes)."""
    return _fleet_file()


@FUZZ
@given(st.data())
def test_fuzzed_candidate_rules_calibrate_or_refuse_in_one_line(data: st.DataObject) -> None:
    """Issue 27: `certgen calibrate --rules CANDIDATE.yaml`: the packaged rules file as a
    candidate (a new rules_version), with hostile values and mutated bytes; read, re-graded
    over a real fleet and written as calibration.json and .csv, or refused in one line naming
    the candidate file."""
    from certgen.builders.calibration import calibrate, csv_bytes, json_bytes, read_candidate

    rules = copy.deepcopy(_RULES)
    rules["rules_version"] = "sop-gpu-001-v1.2-fuzz"
    if data.draw(st.booleans()):
        # A candidate a lab might write, at the edges: valid types, any values (lines crossed,
        # weights at 0 and 1, a Soft Limit of 0), so the re-grading itself is fuzzed too.
        gap = data.draw(st.sampled_from([0.0, 1.0, 0.5, 0.65, 1e-9, 0.7]))
        rules["fluidity_weights"] = {"consistency_gap": gap, "stutter": 1.0 - gap}
        line = st.one_of(st.sampled_from([0, 100, 88, 95, 99.99, -1, 101]),
                         st.floats(0, 100, allow_nan=False))
        rules["grade_lines"] = {"gold": data.draw(line), "platinum": data.draw(line)}
        rules["soft_limit"]["stutter"] = data.draw(st.sampled_from([0.0, 0.6, 1.0, 0.0001]))
        rules["ranking"]["min_cohort"] = data.draw(st.sampled_from([0, 1, 30, 10 ** 9]))
        text = yaml.safe_dump(rules, allow_unicode=True, sort_keys=False).encode("utf-8")
    else:
        text = _hostile_yaml(data, rules)
    with tempfile.TemporaryDirectory() as folder:
        fleet = Path(folder) / "fleet.sqlite"
        fleet.write_bytes(_calibration_fleet())
        candidate = Path(folder) / "candidate.yaml"
        candidate.write_bytes(text)

        def review() -> None:
            reviewed = calibrate(fleet, candidates=[read_candidate(candidate)])
            json_bytes(reviewed)
            csv_bytes(reviewed)

        expect_clean(review, str(candidate))


@settings(FUZZ, max_examples=max(5, BUDGET // 2))
@given(st.data())
def test_damaged_or_foreign_fleets_given_to_calibrate_refuse_in_one_line(
        data: st.DataObject) -> None:
    """Issue 27: `certgen calibrate --fleet F` where F is a fleet with damaged pages, cut short,
    or no fleet at all (random bytes, text, another application's SQLite): a review or one
    line naming the file, and the file is never written to."""
    import sqlite3

    from certgen.builders.calibration import calibrate

    kind = data.draw(st.sampled_from(["pages", "cut", "random", "text", "foreign"]))
    blob = _calibration_fleet()
    if kind == "pages":
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(100, len(blob) - 1))  # past the header: pages
            blob = blob[:at] + bytes([data.draw(st.integers(0, 255))]) + blob[at + 1:]
    elif kind == "cut":
        blob = blob[:data.draw(st.integers(0, len(blob) - 1))]
    elif kind == "random":
        blob = data.draw(st.binary(max_size=9000))
    elif kind == "text":
        blob = data.draw(st.sampled_from([b"", b"{}", b'{"cards": []}\n', b"SQLite format 3",
                                          b"SQLite format 3\x00" + b"\xff" * 200]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.sqlite"
        if kind == "foreign":
            with sqlite3.connect(path) as other:
                other.execute("CREATE TABLE runs (invoice TEXT)")
                other.execute("INSERT INTO runs VALUES (?)", (data.draw(st.text(max_size=20)),))
            other.close()
            blob = path.read_bytes()
        else:
            path.write_bytes(blob)
        expect_clean(lambda: calibrate(path), str(path))
        assert path.read_bytes() == blob  # read-only: never repaired, migrated or journalled
        assert sorted(p.name for p in Path(folder).iterdir()) == ["fleet.sqlite"]


@contextlib.contextmanager
def _mangling_proxy(tsa_url: str) -> Iterator[Any]:
    """An HTTP timestamp authority on loopback that asks the real one (`tsa_url`) and answers
    with what `server.mangle(reply)` makes of its reply: (status, content type, body)."""
    import http.server
    import threading
    import urllib.request

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            query = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            request = urllib.request.Request(tsa_url, data=query, headers={
                "Content-Type": "application/timestamp-query"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                reply = answer.read()
            status, kind, body = server.mangle(reply)  # type: ignore[attr-defined]
            server.replies.append(reply)  # type: ignore[attr-defined]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.replies = []  # type: ignore[attr-defined]
    server.url = f"http://127.0.0.1:{server.server_port}/tsa"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_hostile_timestamp_authority_replies_sign_or_refuse_in_one_line() -> None:
    """Issue 27: `build --sign … --tsa URL` where the authority's replies are damaged (bytes
    changed, cut short, an HTTP error, another content type, junk, a reply to an earlier
    request): the signature is made, or refused in one line naming --tsa; a PDF signed from a
    damaged reply must still end in a verdict when verified."""
    import datetime as dt
    import shutil

    from tsakit import PASSPHRASE as TSA_PASSPHRASE
    from tsakit import running_authority

    from certgen.render.sign import sign_pdf, signing_key

    if shutil.which("openssl") is None:
        raise AssertionError("openssl is missing: the TSA target needs OpenSSL's `ts`")
    unsigned = _signed_certificates()["unsigned"]
    with running_authority(lab_valid_for=dt.timedelta(days=1000), signatory="A. Sample") as tsa, \
            _mangling_proxy(tsa.tsa_url) as proxy:
        key = signing_key(tsa.lab_p12, TSA_PASSPHRASE, source="lab.p12").with_tsa(
            proxy.url).at(dt.datetime.now(dt.UTC), given=False)

        @settings(FUZZ, max_examples=TIMESTAMP_EXAMPLES * 2)
        @given(st.data())
        def one_reply(data: st.DataObject) -> None:
            kind = data.draw(st.sampled_from(["bytes", "cut", "status", "type", "junk",
                                              "earlier", "empty"]))
            flips = data.draw(st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)),
                                       min_size=1, max_size=4))
            cut = data.draw(st.integers(0, 10 ** 6))
            junk = data.draw(st.binary(max_size=600))

            def mangle(reply: bytes) -> tuple[int, str, bytes]:
                body = bytearray(reply)
                if kind == "bytes":
                    for at, value in flips:
                        body[at % len(body)] = value
                elif kind == "cut":
                    del body[cut % len(body):]
                elif kind == "status":
                    return 500, "text/html", b"<html>busy</html>"
                elif kind == "type":
                    return 200, "text/html", reply
                elif kind == "junk":
                    body = bytearray(junk)
                elif kind == "earlier" and proxy.replies:
                    body = bytearray(proxy.replies[0])  # its nonce answers another query
                elif kind == "empty":
                    body = bytearray()
                return 200, "application/timestamp-reply", bytes(body)

            proxy.mangle = mangle
            signed = None
            try:
                signed = sign_pdf(unsigned, key, name="A. Sample")
            except CertgenError as exc:
                text = str(exc)
                assert "\n" not in text and len(text) < 2000 and "--tsa" in text, text[:500]
            if signed is not None and kind != "type":
                # Signed from a damaged reply: whatever verify makes of it, a verdict.
                expect_verdict(*_verify_cli(signed, tsa.ca_pem))

        one_reply()
