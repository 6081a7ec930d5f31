"""record.json → certificate HTML (one language) → PDF. Pure: bytes in memory, no disk writes.

The templates display; this module prepares what they cannot safely or simply do:
- the justification Markdown, rendered then sanitised with nh3 (no script, iframe, style,
  images at all, only http(s)/mailto links), as markup;
- one frame-time chart per recorded run (inline SVG, certgen's own drawing; one scale for the
  runs of a tier), with its one-sentence text alternative (SVG <desc> and the caption);
- the verification URL and its QR code (segno, SVG), with the record's SHA-256.
Nothing from the bundle becomes a template: record values only ever reach templates as data.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import quote

from certgen.errors import RenderError
from certgen.metrics.diagnostics import P99_MIN_SAMPLES, displayed_beside_graded
from certgen.model import (
    CapturesGpuDiffer,
    CaptureTooOld,
    CaptureTooShort,
    CaptureUsedTwice,
    ConditionMissing,
    DateAfterIssue,
    FirstCaptureIdentical,
    FirstCaptureSha256Mismatch,
    GateReason,
    LabText,
    ProvenanceMismatch,
    Recorded,
    RerunFirstCaptureMissing,
    SampleCertificate,
    SoftLimitMissing,
    Status,
    TierLineGate,
    ToolErratumRefusal,
    text_for,
)
from certgen.record import Chart, Record, Run, frame_ms
from certgen.render import i18n
from certgen.render.charts import ChartWords, chart_scale, chart_text, frame_time_chart
from certgen.render.html import render_template
from certgen.render.nav import doc_nav
from certgen.render.pdf import html_to_pdf
from certgen.rules import agreement
from certgen.support.markup import sanitise_markdown
from certgen.support.software import creator_line
from certgen.support.untrusted import escape_invisible

if TYPE_CHECKING:
    from certgen.render.charts import Scale
    from certgen.render.pdf import ConfinedURLFetcher

KnownRefusal = (RerunFirstCaptureMissing | FirstCaptureSha256Mismatch | SoftLimitMissing
                | FirstCaptureIdentical | CaptureUsedTwice | ProvenanceMismatch | DateAfterIssue
                | CapturesGpuDiffer | ConditionMissing | SampleCertificate | CaptureTooShort
                | CaptureTooOld | ToolErratumRefusal)
"""A refusal the certificate words in its own language (docs/record.md, Refusals)."""
KNOWN_REFUSALS: Final = (RerunFirstCaptureMissing, FirstCaptureSha256Mismatch, SoftLimitMissing,
                         FirstCaptureIdentical, CaptureUsedTwice, ProvenanceMismatch,
                         DateAfterIssue, CapturesGpuDiffer, ConditionMissing, SampleCertificate,
                         CaptureTooShort, CaptureTooOld, ToolErratumRefusal)

DEFAULT_VERIFY_BASE = "https://certificates.example.org/verify"
"""Where the QR code points unless `--verify-base` says otherwise: <base>/<id>/?sha256=<hash>."""

TEMPLATE = "certificate.html.j2"


def verify_url(base: str, certificate_id: str, record_sha256: str) -> str:
    """<base>/<certificate id>/?sha256=<record hash> (the id percent-encoded).

    The certificate's page in the registry (`certgen registry`, docs/registry.md) is the folder
    <id>/ under the base; its index.html compares the address's sha256 with the record's.
    """
    return f"{base.rstrip('/')}/{quote(certificate_id, safe='')}/?sha256={record_sha256}"


def status_list_url(base: str) -> str:
    """<base>/index.json: the registry's list of every certificate and its status, the file
    `certgen verify --revocations` takes (certgen.registry.registry_index)."""
    return f"{base.rstrip('/')}/index.json"


def qr_svg(url: str, title: str) -> str:
    """The verification URL as an inline SVG QR code (segno, error correction M).

    `title` (plain text; segno escapes it) becomes the SVG's <title>: the browser's accessible
    name for the code and, in the tagged PDF, the /Alt of its Figure (WeasyPrint takes it)."""
    import segno

    code = segno.make(url, error="m", micro=False)
    return str(code.svg_inline(scale=2, border=2, dark="#111111", light="#ffffff", omitsize=False,
                               title=title))


@dataclass(frozen=True)
class SopName:
    """A rules file's id (sop-gpu-001-v1.1) as a reader names it: "SOP GPU-001", version 1.1."""

    procedure: str
    """The procedure's number as the SOP writes it, e.g. GPU-001."""
    version: str
    """The version as written, e.g. 1.1 (a version, not a decimal number: never localised)."""


_RULES_ID: Final = re.compile(r"sop-([a-z]+-[0-9]+)-v([0-9]+(?:\.[0-9]+)*)")


_SHORTFALL = re.compile(
    r"(?P<frames>\d+) frames over (?P<seconds>[0-9.e+-]+) s, below the minimum to be graded "
    r"\(at least (?P<min_seconds>[0-9.e+-]+) s and (?P<min_frames>\d+) frames")


def shortfall_of(reason: str | None) -> dict[str, str] | None:
    """The figures of a first capture's re-run reason when it is certgen's own "below the
    capture minimum" sentence (certgen.rules.completeness.shortfall, issue 39), so the
    certificate words it in its language; None for any other reason (a reader's, shown as
    written). The record holds the sentence, not its figures: a structured reason is a later
    record key (tests/test_render_certificate.py holds this reading to shortfall's wording)."""
    found = None if reason is None else _SHORTFALL.match(reason)
    return None if found is None else found.groupdict()


def sop_name(rules_version: str) -> SopName | None:
    """The SOP a rules file id names, or None when the id is not of that form (a draft or a
    lab's own rules file): the certificate then shows the id as it is."""
    found = _RULES_ID.fullmatch(rules_version)
    if found is None:
        return None
    return SopName(procedure=found.group(1).upper(), version=found.group(2))


GateMark = Literal["passed", "not_reached", "failed"]
"""How the grade box marks a gate: ✓, a neutral dash, or a red ✗."""


def gate_mark(gate: GateReason) -> GateMark:
    """A tier-line gate that did not pass names a grade the card did not reach, which is not a
    fault: it is marked neutrally. Only a gate that reports something missing or failed (no
    measured tier, another SOP phase capping the grade) is marked as failed."""
    if gate.passed:
        return "passed"
    if isinstance(gate, TierLineGate):
        return "not_reached"
    return "failed"


def build_date(record: Record) -> dt.datetime:
    """The document date: the certificate's issue date (never the clock)."""
    try:
        day = i18n.parse_date(record.certificate.issued)
    except ValueError:
        raise RenderError("record.json: certificate.issued: expected a date YYYY-MM-DD, got "
                          f"{record.certificate.issued!r}") from None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def _chart(run: Run, chart: Chart, lang: str, scale: Scale) -> tuple[str, str]:
    """A run's chart (SVG) and its one-sentence text alternative, on its own scale."""

    _ = i18n.gettext_for(lang)
    title = _("Frame time over the capture: %(title)s, %(resolution)s") % {
        "title": run.title, "resolution": run.resolution}
    labels = {"mean_label": _("mean"), "low1_label": _("1%% low") % {},
              "low01_label": _("0.1%% low") % {}}
    words = ChartWords(
        sentence=_("Frame times over %(seconds)s s: %(mean_label)s %(mean)s ms, %(low1_label)s "
                   "%(low1)s ms, %(low01_label)s %(low01)s ms; frames took from %(fastest)s to "
                   "%(slowest)s ms."),
        baseline=_("The frame-time axis starts at %(start)s ms, not at zero."),
    )
    text = chart_text(chart, lang, words, scale, **labels)
    svg = frame_time_chart(
        chart, lang,
        x_label=_("capture time, s"), y_label=_("frame time, ms"),
        low_1pct_label=labels["low1_label"], low_0_1pct_label=labels["low01_label"],
        mean_label=labels["mean_label"], title=title, description=text,
        element_id=f"chart-{run.index}", unit=_("ms"), scale=scale,
    )
    return svg, text


def with_mean(run: Run) -> Chart:
    """The run's chart; a record of an older certgen has no `mean_ms`, so it is taken from the
    run's own average FPS by the record's rule (record.frame_ms), as a new record would hold."""

    assert run.chart is not None
    if run.chart.mean_ms is not None or run.metrics is None:
        return run.chart
    return run.chart.model_copy(update={"mean_ms": frame_ms(run.metrics.avg_fps)})


def run_scales(runs: Iterable[Run]) -> dict[int, Scale]:
    """One chart scale per run, by run index (issue 42): the frame-time axis fits the run's own
    frames and lines, so a steady run's spread is as visible as a spiky one's (a shared tier
    axis drew a 2.7-8.2 ms run as a flat line on 0-100 ms); the time axis is shared by the runs
    of a tier, so the same x is the same second of capture."""

    by_tier: dict[str, list[Run]] = {}
    for run in runs:
        if run.chart is not None and run.chart.buckets:
            by_tier.setdefault(run.resolution, []).append(run)
    scales: dict[int, Scale] = {}
    for tier_runs in by_tier.values():
        time_axis = chart_scale([with_mean(r) for r in tier_runs])
        for r in tier_runs:
            own = chart_scale([with_mean(r)])
            scales[r.index] = replace(own, seconds=time_axis.seconds,
                                                  step_x=time_axis.step_x)
    return scales


@dataclass(frozen=True)
class Shown:
    """Lab-written text as a document in one language shows it: the text, whether it is
    another language's, and which (the document then says "original in English")."""

    text: str
    fallback: bool
    source: str = "en"
    """The language the text is written in (en, ru or pt)."""


def local_text(value: LabText | None, lang: str) -> Shown:
    """The text of `value` for `lang`: its own, else the English, else the first given (en, ru,
    pt; record.text_for), marked as such when it is not `lang`'s. A plain string is English."""
    if value is None:
        return Shown("", False)
    text, source = text_for(value, lang)
    return Shown(text, source != lang, source)


# --------------------------------------------------------------------------------------------
# What a capture recorded beside what card.yaml declares (certgen.rules.agreement's rules)
# --------------------------------------------------------------------------------------------

RECORDED_SHOWN: Final = ("gpu", "driver", "os", "cpu", "ram", "motherboard", "resolution",
                         "captured_at", "game")
"""The `Recorded` keys card.yaml declares a value for, in the order the certificate shows them
(runtime, tool and tool_version have no declared counterpart and are not compared here)."""


def display_key(text: str) -> str:
    """How the certificate compares values for which certgen.rules.agreement has no rule (the game
    name against the run's title): case and runs of whitespace ignored, nothing else."""
    return " ".join(text.split()).casefold()


def _memory_text(memory_gb: float) -> str:
    return f"{int(memory_gb) if memory_gb.is_integer() else memory_gb} GB"


def declared_values(record: Record, run: Run) -> dict[str, tuple[str, ...]]:
    """What card.yaml declares for each key of RECORDED_SHOWN, as the record holds it: the
    value the certificate prints first, then any other form that counts as the same (the GPU
    may be recorded as the card's chip or its model); an empty tuple where nothing is stated."""
    ts = record.test_system
    tested_on = run.conditions.tested_on if run.conditions else None

    def stated(*values: str | None) -> tuple[str, ...]:
        return tuple(v for v in values if v is not None)

    return {
        "gpu": stated(record.card.gpu, record.card.model),
        "driver": stated(record.card.driver),
        "os": stated(ts.os if ts else None),
        "cpu": stated(ts.cpu if ts else None),
        "ram": stated(None if ts is None or ts.memory_gb is None else _memory_text(ts.memory_gb)),
        "motherboard": stated(ts.motherboard if ts else None),
        "resolution": stated(run.resolution),
        "captured_at": stated(tested_on),
        "game": stated(run.title),
    }


def reads_the_same(key: str, recorded: str, declared: tuple[str, ...]) -> bool:
    """Whether a recorded value agrees with what card.yaml declares, by the same rule that
    decides whether a certificate can be issued (certgen.rules.agreement): RTX 2080 Ti is not RTX
    2080, 32,803,468 kB of MemTotal is 32 GB, r418_77 is a 418 driver. Where a rule cannot read
    a value (it says None), or for the game name, the values must read the same apart from
    case and spacing. Nothing declared never agrees."""
    if not declared:
        return False
    first = declared[0]
    verdict: bool | None
    if key == "gpu":
        verdict = agreement.gpu_agrees(recorded, declared)
    elif key == "resolution":
        verdict = agreement.resolution_agrees(recorded, first)
    elif key == "driver":
        verdict = agreement.driver_agrees(recorded, first)
    elif key == "os":
        verdict = agreement.os_agrees(recorded, first)
    elif key == "cpu":
        verdict = agreement.cpu_agrees(recorded, first)
    elif key == "ram":
        gb = agreement.ram_gb(first)
        verdict = None if gb is None else agreement.ram_agrees(recorded, gb)
    elif key == "motherboard":
        verdict = agreement.board_agrees(recorded, first)
    elif key == "captured_at":
        day, tested_on = agreement.captured_date(recorded), agreement.captured_date(first)
        verdict = (None if day is None or tested_on is None
                   else agreement.dates_agree(day, tested_on))
    else:
        verdict = None
    if verdict is not None:
        return verdict
    return any(display_key(recorded) == display_key(form) for form in declared)


@dataclass(frozen=True)
class Difference:
    """One recorded value that does not read as what card.yaml declares."""

    key: str
    """A key of RECORDED_SHOWN."""
    recorded: str
    """As the capture wrote it, invisible and bidi characters escaped (untrusted text)."""
    declared: str | None
    """As card.yaml states it (the first declared form), or None: not stated."""


@dataclass(frozen=True)
class RecordedView:
    """A capture's recorded values held against the declared ones, for the certificate."""

    compared: int
    """How many values the capture records that card.yaml could declare."""
    differences: tuple[Difference, ...]
    """Those that do not read the same, in RECORDED_SHOWN order."""

    @property
    def agrees(self) -> bool:
        """Something was recorded and all of it reads as declared (the certificate shows ✓)."""
        return self.compared > 0 and not self.differences


def recorded_view(recorded: Recorded, declared: Mapping[str, tuple[str, ...]]) -> RecordedView:
    """What `recorded` says beside `declared` (declared_values): only what differs."""
    differences: list[Difference] = []
    compared = 0
    for key in RECORDED_SHOWN:
        value = getattr(recorded, key)
        if value is None:
            continue
        compared += 1
        forms = declared.get(key, ())
        if not reads_the_same(key, value, forms):
            differences.append(Difference(key=key, recorded=escape_invisible(value),
                                          declared=forms[0] if forms else None))
    return RecordedView(compared=compared, differences=tuple(differences))


def recorded_views(record: Record) -> tuple[dict[int, RecordedView], dict[int, RecordedView]]:
    """Per run index: its capture's view, and its archived first capture's (runs of a record
    without `recorded`, written by an older certgen, have none)."""
    runs: dict[int, RecordedView] = {}
    firsts: dict[int, RecordedView] = {}
    for run in record.runs:
        declared = declared_values(record, run)
        if run.recorded is not None:
            runs[run.index] = recorded_view(run.recorded, declared)
        if run.first_capture is not None and run.first_capture.recorded is not None:
            firsts[run.index] = recorded_view(run.first_capture.recorded, declared)
    return runs, firsts


@dataclass(frozen=True)
class RefusalItem:
    """One refusal for the template: its English message and, when known, its detail."""

    message: str
    detail: KnownRefusal | None


def refusal_items(status: Status) -> list[RefusalItem]:
    """Each refusal with its English message and its structured form (or None).

    The template words a refusal from its detail in the document's language; a refusal
    without a known detail (an older record, a new code) falls back to its English message.
    """
    details = status.refusal_details
    items = []
    for i, message in enumerate(status.refusals):
        detail = details[i] if i < len(details) else None
        known = detail if isinstance(detail, KNOWN_REFUSALS) else None
        items.append(RefusalItem(message=message, detail=known))
    return items


def html_file_name(lang: str) -> str:
    """The file name of a certificate's HTML in one language (the switcher links to siblings)."""
    return f"certificate.{lang}.html"


def pdf_file_name(lang: str) -> str:
    """The file name of a certificate's PDF in one language (published beside the HTML)."""
    return f"certificate.{lang}.pdf"


RECORD_FILE = "record.json"
"""The record as the writer publishes it, beside every certificate document."""


def alternates(lang: str, languages: Iterable[str] | None) -> list[dict[str, str]]:
    """The sibling documents of the same certificate built in the same run, one per language
    (the document's own language included), in the fixed order of i18n.LANGUAGES.

    Empty when only one language is built: there is nothing to switch to.
    """
    built = i18n.language_set([*(languages or ()), lang])
    if len(built) < 2:
        return []
    return [{"lang": other, "name": i18n.LANGUAGE_NAMES[other], "href": html_file_name(other)}
            for other in built]


def certificate_context(
    record: Record,
    lang: str,
    *,
    record_sha256: str,
    verify_base: str,
    languages: Iterable[str] | None = None,
    signed: bool = False,
    home: str | None = None,
) -> dict[str, object]:
    """What certificate.html.j2 reads: the record, plus prepared markup (see module doc).

    `signed`: the PDF is signed for the issuing lab (certgen.render.sign); the verification
    block then names its signatory, otherwise it says the certificate is not signed.
    """
    if signed and record.issuer is None:
        raise RenderError("a signed certificate needs an issuer: build it with a lab profile")
    from markupsafe import Markup

    status = record.status
    url = verify_url(verify_base, record.certificate.id, record_sha256)
    _ = i18n.gettext_for(lang)
    charts: dict[int, Markup] = {}
    chart_texts: dict[int, str] = {}
    justifications: dict[int, tuple[Markup, Shown]] = {}
    provenance_notes: dict[int, tuple[Markup, Shown]] = {}
    scales = run_scales(record.runs)
    for run in record.runs:
        if run.chart is not None and run.index in scales:
            svg, chart_texts[run.index] = _chart(run, with_mean(run), lang, scales[run.index])
            charts[run.index] = Markup(svg)
        soft = run.soft_limit
        if soft is not None and soft.raised:
            shown = local_text(soft.justification, lang)
            justifications[run.index] = (Markup(sanitise_markdown(shown.text)), shown)
        if run.provenance_note is not None:
            shown = local_text(run.provenance_note, lang)
            provenance_notes[run.index] = (Markup(sanitise_markdown(shown.text)), shown)
    runs_by_index = {run.index: run for run in record.runs}
    run_views, first_views = recorded_views(record)
    siblings = alternates(lang, languages)
    default = "en" if any(a["lang"] == "en" for a in siblings) else (
        siblings[0]["lang"] if siblings else lang)
    return {
        "alternates": siblings,
        "nav": doc_nav(home=None if home is None else home.format(lang=lang),
                       languages=[(a["lang"], a["href"]) for a in siblings],
                       files=[("PDF", pdf_file_name(lang)), (RECORD_FILE, RECORD_FILE)]),
        "record_file": RECORD_FILE,
        "x_default": html_file_name(default),
        "record": record,
        "certificate": record.certificate,
        "card": record.card,
        "grade": record.grade,
        "runs": record.runs,
        "runs_by_index": runs_by_index,
        "recorded_runs": [r for r in record.runs if r.status == "recorded"],
        "not_run_runs": [r for r in record.runs if r.status != "recorded"],
        "soft_limit_runs": [r for r in record.runs
                            if r.soft_limit is not None and r.soft_limit.raised],
        "draft": status.draft or not status.issuable,
        "specimen": status.specimen,
        "issuer": record.issuer,
        "local": lambda value: local_text(value, lang),
        "refusals": refusal_items(status),
        # The runs whose capture is below the minimum to be graded (a chip beside the run).
        "below_minimum": {d.run for d in status.refusal_details
                          if isinstance(d, CaptureTooShort)},
        "charts": charts,
        "chart_texts": chart_texts,
        "justifications": justifications,
        "provenance_notes": provenance_notes,
        "recorded_views": run_views,
        "first_recorded_views": first_views,
        "scope": record.certificate.scope,
        "record_sha256": record_sha256,
        "signatory": record.issuer.signatory.name if signed and record.issuer else None,
        "signer_sha256": record.issuer.signatory.certificate_sha256
        if signed and record.issuer else None,
        "verify_url": url,
        "status_url": status_list_url(verify_base),
        "qr_svg": Markup(qr_svg(url, _("QR code: opens this certificate's verification page"))),
        "rules_name": sop_name(record.rules_version),
        "shortfall_of": shortfall_of,
        "gate_marks": [gate_mark(gate) for gate in record.grade.reasons],
        "p99_min_samples": P99_MIN_SAMPLES,
        # Issue 42: runs whose display showed another rate than the graded one (page 1).
        "displayed_differs": [
            (run, found) for run in record.runs
            if (found := displayed_beside_graded(run.metrics, run.frame_diagnostics)) is not None],
        "document_date": build_date(record).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def render_certificate_html(
    record: Record,
    lang: str,
    *,
    record_sha256: str,
    verify_base: str = DEFAULT_VERIFY_BASE,
    languages: Iterable[str] | None = None,
    signed: bool = False,
    home: str | None = None,
) -> str:
    """The certificate of `record` in `lang` as one self-contained HTML document.

    `languages` are the languages built in the same run: the document declares them as
    hreflang alternates (certificate.<lang>.html beside it) and shows a language switcher on
    screen (hidden in print). None or a single language: no alternates, no switcher.
    `signed`: the PDF made from it will be signed (the verification block says by whom).
    The navigation (screen only) links the PDF and record.json the writer publishes beside
    the HTML, and `home` when given: the site index, relative to the certificate, with
    `{lang}` standing for the document's language (the site builder passes
    "../../{lang}/index.html").
    """

    context = certificate_context(record, lang, record_sha256=record_sha256,
                                  verify_base=verify_base, languages=languages, signed=signed,
                                  home=home)
    return render_template(TEMPLATE, context, lang)


def certificate_print_html(record: Record, lang: str, *, record_sha256: str, verify_base: str,
                           signed: bool) -> str:
    """The print form of the certificate: the HTML its PDF is rendered from. It is
    render_certificate_html with no sibling languages and no site home, screen-only links that
    print hides, so the PDF is a function of the record, the language, the address and whether
    it is signed, never of what was built beside it. `certgen verify` renders this same form
    from the attached record (certgen.verify.content)."""

    return render_certificate_html(record, lang, record_sha256=record_sha256,
                                   verify_base=verify_base, signed=signed)


def certificate_title(record: Record, lang: str) -> str:
    """The PDF title: translated "Frame-pacing certificate" and the certificate id."""
    _ = i18n.gettext_for(lang)
    return str(_("Frame-pacing certificate %(id)s") % {"id": record.certificate.id})


def render_certificate_pdf(
    html: str, record: Record, record_bytes: bytes, lang: str, *,
    fetcher: ConfinedURLFetcher | None = None,
) -> bytes:
    """The PDF/A-3b of a rendered certificate, with record.json attached (relationship Data)."""

    _ = i18n.gettext_for(lang)
    return html_to_pdf(
        html,
        lang=lang,
        title=certificate_title(record, lang),
        author=(record.issuer.name if record.issuer is not None
                else _("certgen, SOP-GPU-001 certification")),
        attachments=[("record.json", record_bytes, _("The certificate record (record.json)"))],
        created=build_date(record),
        fetcher=fetcher,
        generator=None if record.software is None else software_line(record),
    )


def software_line(record: Record) -> str:
    """The PDF's Creator: the record's `software` as one line (certgen.support.software.creator_line,
    the same line a process writes of its own stack)."""

    s = record.software
    assert s is not None
    return creator_line(s)
