"""Offline verification of a certificate PDF (`certgen verify`, docs/verify.md).

Every check gives one verdict (pass, fail, or skip when its input was not given):

- signature: the PDF carries a signature, made in the name of the record's signatory;
- intact: no byte changed after signing and the last signature covers the whole file (every
  earlier one is intact too);
- trust: every signer's certificate chains to the CA given with --trust (without one the check
  fails: an unknown signer proves nothing);
- revocation: the certificate id is not in the lab's revocations.yaml (a YAML list of
  {id, date, reason}, the file the registry pages are built from), when one is given;
- record: the attached record.json is present and schema-valid (certgen.record.load_record);
- record-sha256: its SHA-256 is the one printed in the verification block;
- figures: the text of the PDF equals, figure for figure, the certificate this certgen renders
  from the attached record (same language, signatory and verification address);
- derivation: every Fluidity Score (with its gap and stutter), tier mean and the grade follow
  from the record's FPS figures under the rules file the record names (certgen.rules), and
  that file's SHA-256 is the one the record cites;
- with a bundle folder: captures (each capture's SHA-256 equal to the record's) and
  recomputed (every run's figures recomputed from its capture equal to the record's).

Nothing here reads the network or the clock (pyHanko runs with fetching off; the signer's
certificate is checked at the present time, as for any signature without a timestamp). A
warning, not a failure, says when the record was made by another software stack than this
certgen's (certgen.software): the figure check then compares with this certgen's rendering.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from certgen.errors import CertgenError

Verdict = Literal["pass", "fail", "skip"]


@dataclass(frozen=True)
class Check:
    """One check's verdict and what it found (one line of `certgen verify`)."""

    name: str
    verdict: Verdict
    detail: str

    def line(self) -> str:
        """`PASS name: detail` (FAIL, SKIP)."""
        return f"{self.verdict.upper()} {self.name}: {self.detail}"


@dataclass(frozen=True)
class Verification:
    """Every check of one certificate, in order, and the warnings."""

    source: str
    certificate_id: str | None
    checks: tuple[Check, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Every check passed or was skipped (none failed)."""
        return all(c.verdict != "fail" for c in self.checks)

    def failed(self) -> list[str]:
        """The names of the failed checks, in order."""
        return [c.name for c in self.checks if c.verdict == "fail"]

    def as_json(self) -> dict[str, Any]:
        """The `--json` form: file, certificate, ok, checks, warnings."""
        return {
            "file": self.source,
            "certificate": self.certificate_id,
            "ok": self.ok,
            "checks": [{"check": c.name, "verdict": c.verdict, "detail": c.detail}
                       for c in self.checks],
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Revocation:
    """One entry of revocations.yaml: the certificate id, the date and the reason."""

    id: str
    date: str
    reason: str


def load_revocations(path: str | Path) -> tuple[Revocation, ...]:
    """Read revocations.yaml: a YAML list of {id, date, reason}; anything else is refused with
    the file and the entry named."""
    import yaml

    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CertgenError(f"cannot read the revocation list ({exc.strerror})",
                           file=source) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CertgenError(f"invalid YAML: {exc}", file=source) from None
    if data is None:
        return ()
    if not isinstance(data, list):
        raise CertgenError("expected a list of {id, date, reason}", file=source)
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or sorted(entry) != ["date", "id", "reason"]:
            raise CertgenError("expected exactly the keys id, date, reason", file=source,
                               field=f"[{i}]")
        out.append(Revocation(str(entry["id"]), str(entry["date"]), str(entry["reason"])))
    return tuple(out)


# --------------------------------------------------------------------------------------------
# The signature
# --------------------------------------------------------------------------------------------


@dataclass
class _Signatures:
    checks: list[Check] = field(default_factory=list)
    signed: bool = False
    name: str | None = None


def _load_trust(data: bytes, source: str) -> list[Any]:
    from pyhanko.keys import load_certs_from_pemder_data

    try:
        roots = list(load_certs_from_pemder_data(data))
        for root in roots:
            _ = root.subject  # parse now, so a bad file is refused here
    except ValueError:
        raise CertgenError("expected a CA certificate (PEM or DER)", file=source) from None
    if not roots:
        raise CertgenError("expected a CA certificate (PEM or DER)", file=source)
    return roots


def _signature_checks(pdf: bytes, trust: list[Any] | None, signatory: str | None) -> _Signatures:
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    out = _Signatures()
    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=False)
        embedded = list(reader.embedded_signatures)
    except Exception as exc:  # a damaged file: pyHanko cannot even find the signatures
        out.checks.append(Check("signature", "fail", f"the PDF's structure cannot be read ({exc})"))
        return out
    if not embedded:
        out.checks.append(Check("signature", "fail", "the PDF is not signed"))
        return out
    out.signed = True
    statuses: list[Any] = []
    for sig in embedded:
        context = ValidationContext(trust_roots=trust or [], allow_fetching=False,
                                    revocation_mode="soft-fail")
        try:
            statuses.append(validate_pdf_signature(sig, context))
        except Exception as exc:
            statuses.append(exc)
    last = embedded[-1]
    name = last.sig_object.get("/Name")
    out.name = None if name is None else str(name)
    if signatory is not None and out.name != signatory:
        out.checks.append(Check("signature", "fail",
                                f"signed in the name of {out.name!r}; the record's signatory is "
                                f"{signatory!r}"))
    else:
        count = f"{len(embedded)} signatures" if len(embedded) > 1 else "signed"
        out.checks.append(Check("signature", "pass", f"{count} in the name of {out.name}"))

    broken = [i for i, s in enumerate(statuses)
              if isinstance(s, Exception) or not (s.intact and s.valid)]
    final = statuses[-1]
    if broken:
        which = ", ".join(str(i + 1) for i in broken)
        out.checks.append(Check("intact", "fail", f"signature {which} of {len(statuses)} does not "
                                "match the bytes it signs: the file was changed after signing"))
    elif isinstance(final, Exception) or final.coverage != SignatureCoverageLevel.ENTIRE_FILE:
        out.checks.append(Check("intact", "fail", "the last signature does not cover the whole "
                                "file: bytes were added after signing"))
    else:
        out.checks.append(Check("intact", "pass", "no byte changed after signing; the signature "
                                "covers the whole file"))

    if trust is None:
        out.checks.append(Check("trust", "fail", "not checked: give --trust CA.pem, the "
                                "laboratory's CA certificate"))
    else:
        untrusted = [(i, s) for i, s in enumerate(statuses)
                     if isinstance(s, Exception) or not s.trusted]
        if untrusted:
            i, s = untrusted[0]
            subject = ("" if isinstance(s, Exception)
                       else f" ({s.signing_cert.subject.human_friendly})")
            out.checks.append(Check("trust", "fail", f"signature {i + 1}'s certificate{subject} "
                                    "does not chain to the trusted CA"))
        else:
            assert not isinstance(final, Exception)
            root = final.validation_path[0] if final.validation_path is not None else None
            anchor = "" if root is None else f" ({_anchor_name(root)})"
            out.checks.append(Check("trust", "pass", f"{final.signing_cert.subject.human_friendly}"
                                    f" chains to the trusted CA{anchor}"))
    return out


def _anchor_name(root: Any) -> str:
    # A path's first element is a trust anchor (pyhanko-certvalidator), not always a certificate.
    name = getattr(root, "name", None) or getattr(getattr(root, "subject", None), "human_friendly",
                                                  None)
    return getattr(name, "human_friendly", name) or "?"


# --------------------------------------------------------------------------------------------
# The record, the printed text, the re-derivation
# --------------------------------------------------------------------------------------------


def _pdf_text(reader: Any) -> str:
    return "\n".join(page.extract_text() or "" for page in reader.pages)


def _figures(text: str) -> list[str]:
    """The tokens of a text that hold a digit (figures, dates, hashes), in order."""
    return [token for token in text.split() if any(ch.isdigit() for ch in token)]


def _compare_figures(printed: str, expected: str) -> str | None:
    """None when the printed figures are the expected ones; else what differs, first place."""
    import difflib

    a, b = _figures(printed), _figures(expected)
    if a == b:
        return None
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        shown = " ".join(a[i1:i2][:4]) or "nothing"
        wanted = " ".join(b[j1:j2][:4]) or "nothing"
        before = " ".join(a[max(0, i1 - 3):i1])
        return (f"printed {shown!r} where the record gives {wanted!r}"
                + (f" (after {before!r})" if before else ""))
    return "the printed figures differ from the record's"  # pragma: no cover (a != b)


def _printed_base(text: str, cert_id: str, sha: str) -> str | None:
    """The verification base printed before the address's own tail (`/<id>/?sha256=<sha>`, as
    certgen.render.certificate.verify_url writes it; whitespace ignored)."""
    from certgen.render.certificate import verify_url

    flat = "".join(text.split())
    tail = verify_url("", cert_id, sha)
    end = flat.find(tail)
    if end < 0:
        return None
    start = max(flat.rfind("https://", 0, end), flat.rfind("http://", 0, end))
    return flat[start:end] if start >= 0 else None


def _derivation(record: Any) -> list[str]:
    """What does not follow from the record's figures under its rules file (empty: all does)."""
    from certgen.metrics import ratios_from_fps, weights_of
    from certgen.rules import GradeCap, RunFacts, decide
    from certgen.sop import load_rules

    problems: list[str] = []
    rules = load_rules(record.rules.sop)
    if record.rules.sha256 is not None and rules.sha256 != record.rules.sha256:
        problems.append(f"the rules file {rules.file} here has SHA-256 {rules.sha256}; the record "
                        f"was graded by {record.rules.sha256}")
    weights = weights_of(rules)
    facts = []
    for run in record.runs:
        m = run.metrics
        label = f"run {run.index + 1} ({run.title} {run.resolution})"
        if m is not None:
            ratios = ratios_from_fps(m.avg_fps, m.low_1pct_fps, m.low_0_1pct_fps, weights)
            for key in ("consistency_gap", "stutter", "fluidity_score"):
                if getattr(ratios, key) != getattr(m, key):
                    problems.append(f"{label}: {key} {getattr(m, key)} does not follow from its "
                                    f"FPS figures ({getattr(ratios, key)})")
        first = run.first_capture
        facts.append(RunFacts(
            index=run.index, title=run.title, resolution=run.resolution,
            recorded=run.status == "recorded",
            fluidity_score=None if m is None else m.fluidity_score,
            stutter=None if m is None else m.stutter,
            incomplete=run.capture is not None and run.capture.incomplete,
            incomplete_reason=None if run.capture is None else run.capture.incomplete_reason,
            justification=None if run.soft_limit is None else run.soft_limit.justification,
            vrm_reexamination=None if run.soft_limit is None
            else run.soft_limit.vrm_reexamination,
            first_capture_file=None if first is None else first.file,
            first_capture_declared=None if first is None else first.sha256_declared,
            first_capture_actual=None if first is None else first.sha256_actual,
            capture_file=None if run.capture is None else run.capture.file,
            capture_sha256=None if run.capture is None else run.capture.sha256,
            first_capture_stutter=(None if first is None or first.metrics is None
                                   else first.metrics.stutter),
        ))
    cap = record.grade.cap
    verdict = decide(facts, None if cap is None else GradeCap(cap.grade, cap.reason), rules)
    by_res = {t.resolution: t for t in verdict.tiers}
    for tier in record.tiers:
        derived = by_res.get(tier.resolution)
        if derived is None or derived.mean_fluidity != tier.mean_fluidity:
            problems.append(f"tier {tier.resolution}: mean {tier.mean_fluidity} does not follow "
                            f"from its runs' scores "
                            f"({None if derived is None else derived.mean_fluidity})")
    if [t.resolution for t in verdict.tiers] != [t.resolution for t in record.tiers]:
        problems.append("the record's tiers are not its runs' resolutions")
    if verdict.grade.value != record.grade.value:
        problems.append(f"grade {record.grade.value} does not follow from the tiers "
                        f"(the rules give {verdict.grade.value})")
    return problems


def _bundle_checks(record: Any, bundle: str) -> list[Check]:
    from certgen.bundle import load_bundle
    from certgen.pipeline import record_from_bundle
    from certgen.record import RunMetrics

    root = Path(bundle)
    wrong = []
    for item in record.audit.captures:
        run = record.runs[item.run]
        label = f"run {item.run + 1} ({run.title} {run.resolution})"
        try:
            actual = hashlib.sha256((root / item.file).read_bytes()).hexdigest()
        except OSError as exc:
            wrong.append(f"{label}: {item.file}: cannot be read ({exc.strerror})")
            continue
        if actual != item.sha256:
            wrong.append(f"{label}: {item.file} has SHA-256 {actual}, the record's is {item.sha256}")
    checks = [Check("captures", "fail", "; ".join(wrong)) if wrong else
              Check("captures", "pass", f"{len(record.audit.captures)} captures match the "
                                        "record's SHA-256")]
    try:
        again = record_from_bundle(load_bundle(root), refuse=False)
    except CertgenError as exc:
        checks.append(Check("recomputed", "fail", f"the bundle cannot be read: {exc}"))
        return checks
    differ = []
    for run, fresh in zip(record.runs, again.runs):
        if run.metrics != fresh.metrics:
            keys = [k for k in RunMetrics.model_fields
                    if getattr(run.metrics, k, None) != getattr(fresh.metrics, k, None)]
            differ.append(f"run {run.index + 1} ({run.title} {run.resolution}): "
                          f"{', '.join(keys) or 'metrics'} recomputed differently")
    if len(record.runs) != len(again.runs):
        differ.append(f"the bundle has {len(again.runs)} runs, the record {len(record.runs)}")
    checks.append(Check("recomputed", "fail", "; ".join(differ)) if differ else
                  Check("recomputed", "pass", "every run's figures recomputed from its capture "
                                              "equal the record's"))
    return checks


def verify_pdf(
    pdf: bytes,
    *,
    source: str = "certificate.pdf",
    trust: bytes | None = None,
    trust_source: str = "--trust",
    revocations: Sequence[Revocation] | None = None,
    bundle: str | None = None,
) -> Verification:
    """Run every check on one certificate PDF (see the module doc); never raises for a
    failed check, only for unusable inputs (not a PDF, a bad CA file)."""
    from certgen.render.sign import require_sign_extra

    require_sign_extra()
    import pypdf

    roots = None if trust is None else _load_trust(trust, trust_source)
    # A damaged file is a failed check, not an error: the signature check says what changed.
    unreadable = None
    attachments: dict[str, list[bytes]] = {}
    text, lang = "", "en"
    try:
        reader = pypdf.PdfReader(io.BytesIO(pdf))
        attachments = dict(reader.attachments)
        catalog: Any = reader.trailer["/Root"]
        lang = str(catalog.get("/Lang", "en"))
        text = _pdf_text(reader)
    except Exception as exc:
        unreadable = f"the PDF cannot be read ({type(exc).__name__})"

    from certgen.record import RecordError, load_record

    record = None
    record_sha = None
    record_checks: list[Check] = []
    blobs = attachments.get("record.json") or []
    if unreadable is not None:
        record_checks.append(Check("record", "fail", unreadable))
    elif len(blobs) != 1:
        record_checks.append(Check("record", "fail", "no record.json attached" if not blobs
                                   else "more than one record.json attached"))
    else:
        try:
            record = load_record(blobs[0], source="record.json")
            record_sha = hashlib.sha256(blobs[0]).hexdigest()
            record_checks.append(Check("record", "pass", "record.json attached and schema-valid"))
        except RecordError as exc:
            record_checks.append(Check("record", "fail", str(exc)))

    signatory = (record.issuer.signatory.name
                 if record is not None and record.issuer is not None else None)
    sigs = _signature_checks(pdf, roots, signatory)
    checks = list(sigs.checks)
    cert_id = None if record is None else record.certificate.id

    if revocations is None:
        checks.append(Check("revocation", "skip", "no revocation list given (--revocations)"))
    elif cert_id is None:
        checks.append(Check("revocation", "fail", "no certificate id to look up (no record)"))
    else:
        hits = [r for r in revocations if r.id == cert_id]
        checks.append(Check("revocation", "fail", f"{cert_id} was revoked on {hits[0].date}: "
                            f"{hits[0].reason}") if hits else
                      Check("revocation", "pass", f"{cert_id} is not in the revocation list"))
    checks.extend(record_checks)

    warnings: list[str] = []
    if record is None or record_sha is None:
        for name in ("record-sha256", "figures", "derivation"):
            checks.append(Check(name, "fail", "no valid record.json to compare with"))
        if bundle is not None:
            checks.append(Check("captures", "fail", "no valid record.json to compare with"))
        return Verification(source, cert_id, tuple(checks), ())

    flat = "".join(text.split())
    checks.append(Check("record-sha256", "pass", f"{record_sha} is the printed SHA-256")
                  if record_sha in flat else
                  Check("record-sha256", "fail", f"the attached record.json's SHA-256 "
                        f"{record_sha} is not the one printed"))
    checks.append(_figures_check(record, record_sha, text, lang, sigs.signed))
    try:
        problems = _derivation(record)
    except CertgenError as exc:
        problems = [str(exc)]
    checks.append(Check("derivation", "fail", "; ".join(problems)) if problems else
                  Check("derivation", "pass", f"every score, tier mean and the grade "
                        f"{record.grade.value} follow from the figures under "
                        f"{record.rules.file or record.rules.sop}"))
    if bundle is not None:
        checks.extend(_bundle_checks(record, bundle))

    from certgen.software import current_software

    if record.software is not None:
        from certgen.render.certificate import software_line

        theirs, ours = software_line(record), current_software().line()
        if theirs != ours:
            warnings.append(f"the record was made by {theirs}; this is {ours}: the printed text "
                            "is compared with this certgen's rendering")
    return Verification(source, cert_id, tuple(checks), tuple(warnings))


def _figures_check(record: Any, record_sha: str, text: str, lang: str, signed: bool) -> Check:
    """Render the certificate from the record as the build did, and compare the figures."""
    import pypdf

    from certgen.render.certificate import render_certificate_html, render_certificate_pdf
    from certgen.render.i18n import LANGUAGES

    if lang not in LANGUAGES:
        return Check("figures", "fail", f"the PDF's language {lang!r} is not one certgen renders")
    base = _printed_base(text, record.certificate.id, record_sha)
    if base is None:
        return Check("figures", "fail", "the verification address with the record's SHA-256 is "
                                        "not printed")
    try:
        html = render_certificate_html(record, lang, record_sha256=record_sha, verify_base=base,
                                       signed=signed and record.issuer is not None)
        expected_pdf = render_certificate_pdf(html, record, b"", lang)
    except CertgenError as exc:
        return Check("figures", "fail", f"the record cannot be rendered: {exc}")
    expected = _pdf_text(pypdf.PdfReader(io.BytesIO(expected_pdf)))
    problem = _compare_figures(text, expected)
    count = len(_figures(expected))
    return (Check("figures", "fail", problem) if problem else
            Check("figures", "pass", f"all {count} printed figures are the record's"))
