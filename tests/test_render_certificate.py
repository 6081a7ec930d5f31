"""The certificate documents: content per language, snapshots, re-derivable scores, safety."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pypdf
import pytest
from babel.numbers import parse_decimal
from renderkit import ENGLISH_ONLY, KEPT_IN_ENGLISH, bundle_words, visible_text, words

from certgen.metrics.figures import round_half_away
from certgen.record import Record, dump_record, load_record
from certgen.render.certificate import (
    render_certificate_html,
    render_certificate_pdf,
    verify_url,
)
from certgen.render.i18n import LANGUAGES
from certgen.support.markup import sanitise_markdown

SAMPLE = Path(__file__).parent / "data" / "records" / "sample.json"


def _sample() -> dict[str, Any]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def _typed(record: dict[str, Any]) -> Record:
    """The test's JSON-shaped record as the typed Record the renderer reads (validated)."""
    return load_record(json.dumps(record, ensure_ascii=False).encode("utf-8"))


def _render(record: dict[str, Any], lang: str, **kw: Any) -> tuple[str, bytes]:
    typed = _typed(record)
    data = dump_record(typed)
    html = render_certificate_html(typed, lang, record_sha256=hashlib.sha256(data).hexdigest(), **kw)
    return html, data


def _cells(html: str, cls: str) -> list[str]:
    return re.findall(rf'<td class="num {cls}"[^>]*>(?:<strong>)?([^<]*)', html)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_html_snapshot(lang: str, snapshot: Any) -> None:
    html, _ = _render(_sample(), lang, languages=LANGUAGES)
    assert html == snapshot


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pdf_text_and_metadata_snapshot(lang: str, snapshot: Any) -> None:
    record = _sample()
    html, data = _render(record, lang)
    pdf = render_certificate_pdf(html, _typed(record), data, lang)
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    meta = {k: str(v) for k, v in sorted((reader.metadata or {}).items())}
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert {"metadata": meta, "pages": len(reader.pages), "text": text} == snapshot
    assert dict(reader.attachments) == {"record.json": [data]}
    assert reader.trailer["/Root"]["/Lang"] == lang


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_pdf_is_tagged_pdfa_3a_with_headings_tables_and_figures(lang: str) -> None:
    """Tagged PDF/A-3a (issue 13): a structure tree a screen reader can follow, the record still
    attached, and the document's language set."""
    from renderkit import pdf_structure

    record = _sample()
    html, data = _render(record, lang)
    pdf = render_certificate_pdf(html, _typed(record), data, lang)
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    root = reader.trailer["/Root"]
    assert bool(root["/MarkInfo"]["/Marked"])
    assert b'pdfaid:part="3" pdfaid:conformance="A"' in root["/Metadata"].get_object().get_data()
    found = pdf_structure(pdf)
    assert found["H1"] == 1 and found["H2"] >= 5
    # Every data table keeps its header cells apart from its data cells.
    assert found["Table"] >= 3 and found["TH"] >= found["Table"] and found["TD"] > found["TH"]
    assert found.get("Figure", 0) >= 1  # the QR code and the charts
    assert dict(reader.attachments) == {"record.json": [data]}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_printed_fps_figures_rederive_the_printed_score(lang: str) -> None:
    """g and s from the printed FPS give the printed % (4 decimals) and, unrounded, the score."""
    record = _sample()
    html, _ = _render(record, lang)
    weights = record["rules"]["weights"]
    rows = list(zip(_cells(html, "fps-avg"), _cells(html, "fps-low1"), _cells(html, "fps-low01"),
                    _cells(html, "gap"), _cells(html, "stutter"), _cells(html, "score"), strict=True))
    assert len(rows) == sum(1 for r in record["runs"] if r["status"] == "recorded")

    def num(text: str) -> float:
        return float(parse_decimal(text.replace("%", "").strip(), locale=lang, strict=False))

    for avg_t, low1_t, low01_t, gap_t, stutter_t, score_t in rows:
        avg, low1, low01 = num(avg_t), num(low1_t), num(low01_t)
        gap = 1 - low1 / avg
        stutter = 1 - low01 / low1
        assert Decimal(str(num(gap_t))) == Decimal(str(round_half_away(gap, 4))) * 100
        assert Decimal(str(num(stutter_t))) == Decimal(str(round_half_away(stutter, 4))) * 100
        score = round_half_away(
            100 * (1 - (weights["consistency_gap"] * gap + weights["stutter"] * stutter)), 2)
        assert num(score_t) == score


@pytest.mark.parametrize(
    ("lang", "provisional", "draft"),
    [
        ("en", "Provisional · n\u00a0=\u00a013", "DRAFT — NOT ISSUABLE"),
        ("ru", "Предварительно · n\u00a0=\u00a013", "ЧЕРНОВИК\u00a0— ВЫДАВАТЬ НЕЛЬЗЯ"),
        ("pt", "Provisório · n\u00a0=\u00a013", "RASCUNHO\u00a0— NÃO PODE SER EMITIDO"),
    ],
)
def test_must_show_items(lang: str, provisional: str, draft: str) -> None:
    """Provisional ranks with the real cohort size ("n = 13" never split over two lines), …"""
    record = _sample()
    html, data = _render(record, lang)
    assert provisional in html
    assert draft not in html
    assert hashlib.sha256(data).hexdigest() in html
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == 4
    assert "no hardware ray tracing on this GPU" in html  # not-run disclosure
    assert "034f4958bc443e6ea2f71133f8b78ee2930a41cc1cf8bee0a0df5a66360b5f25" in html  # first capture
    assert 'class="grade grade-SILVER">SILVER<' in html
    # the fleet section's cohort-mean column is a dash, never a number
    assert re.findall(r'<td class="num">—</td></tr>', html) and "cohort_mean" not in html
    record["status"] = {"issuable": False, "draft": True, "refusals": ["card.yaml: runs[1]: x"]}
    html, _ = _render(record, lang)
    assert draft in html and "card.yaml: runs[1]: x" in html


def test_never_called_empirical_nor_faulty() -> None:
    for lang in LANGUAGES:
        html, _ = _render(_sample(), lang)
        lowered = html.lower()
        for word in ("empirical", "эмпирич", "empíric", "card is faulty", "карта неисправна",
                     "placa tem defeito", "placa está com defeito"):
            assert word not in lowered


def test_verification_url_uses_the_configured_base() -> None:
    html, data = _render(_sample(), "en", verify_base="https://verify.lab.example/c/")
    sha = hashlib.sha256(data).hexdigest()
    assert verify_url("https://verify.lab.example/c/", "ASD-2026-000123", sha) in html
    assert f"https://verify.lab.example/c/ASD-2026-000123/?sha256={sha}" in html
    assert "<svg" in html.split('class="qr">', 1)[1][:200]


def test_markup_in_record_text_is_shown_as_text() -> None:
    record = _sample()
    record["customer"] = "<script>alert(1)</script>{{ 7*7 }}{% raw %}"
    record["runs"][0]["title"] = "<iframe src=x></iframe>"
    html, _ = _render(record, "en")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;{{ 7*7 }}{% raw %}" in html
    assert "<iframe" not in html and "&lt;iframe src=x&gt;" in html


@pytest.mark.parametrize(
    ("markdown", "must_not_contain"),
    [
        ("<script>alert(1)</script>ok", ["<script", "alert(1)"]),
        ("<iframe src='https://evil.example'></iframe>ok", ["<iframe", "evil.example"]),
        ("<style>body{display:none}</style>ok", ["<style", "display:none"]),
        ("[click](javascript:alert(1))", ["javascript:"]),
        ("![x](file:///etc/passwd)", ["<img", "/etc/passwd"]),
        ("![x](https://evil.example/x.png)", ["<img", "evil.example"]),
        ('<a href="file:///etc/passwd">f</a>', ["file:", "/etc/passwd"]),
        ('<p onclick="x()">p</p>', ["onclick"]),
    ],
)
def test_justification_is_sanitised(markdown: str, must_not_contain: list[str]) -> None:
    out = sanitise_markdown(markdown)
    for bad in must_not_contain:
        assert bad not in out


def test_justification_keeps_its_formatting() -> None:
    out = sanitise_markdown("**bold** and [log](https://lab.example/1)\n\n- a\n- b")
    assert "<strong>bold</strong>" in out and "<li>a</li>" in out
    assert 'href="https://lab.example/1"' in out


def test_same_record_same_html_and_pdf() -> None:
    record = _sample()
    html1, data = _render(record, "ru")
    html2, _ = _render(copy.deepcopy(record), "ru")
    assert html1 == html2
    assert render_certificate_pdf(html1, _typed(record), data, "ru") == render_certificate_pdf(html2, _typed(record), data, "ru")


# --- refusals and re-run reasons in the certificate's language -------------------------------

NBSP = "\u00a0"


def _refused(record: dict[str, Any], count: int | None = None) -> dict[str, Any]:
    """The sample as a refused draft: one refusal of each kind (the record of docs/record.md)."""
    details = [
        {"code": "rerun_first_capture_missing", "run": 3,
         "why": {"code": "stutter_over_rerun_line", "stutter": 0.611, "line": 0.6}},
        {"code": "soft_limit_missing", "run": 3,
         "missing": ["justification", "vrm_reexamination"], "stutter": 0.611, "limit": 0.6},
        {"code": "first_capture_sha256_mismatch", "run": 1, "file": "archive/first.csv",
         "sha256_declared": "a" * 64, "sha256_actual": "b" * 64},
        {"code": "soft_limit_missing", "run": 4, "missing": ["vrm_reexamination"],
         "stutter": 0.7, "limit": 0.6},
        {"code": "rerun_first_capture_missing", "run": 0,
         "why": {"code": "incomplete", "reason": None}},
    ]
    if count is not None:
        details = (details * count)[:count]
    record["status"] = {"issuable": False, "draft": True,
                        "refusals": [f"english message {i}" for i in range(len(details))],
                        "refusal_details": details}
    return record


def _refusal_items(html: str) -> list[str]:
    block = html.split('<ul class="refusals">', 1)[1].split("</ul>", 1)[0]
    return [re.sub(r"[ \t\n]+", " ", item).strip(" ") for item in re.findall(r"<li>(.*?)</li>", block, re.DOTALL)]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", [
            ("Run 4 (Forza Horizon 5 2560x1440) needed a re-run (stutter 61.10%, above the re-run "
            "line of 60.00%) but has no archived first capture: the re-run step was skipped. "
            "Archive the first capture and cite its SHA-256."),
            ("Run 4 (Forza Horizon 5 2560x1440): stutter 61.10% is above the Soft Limit of 60.00%; "
            "a justification and a Phase 1 VRM re-examination are required before this "
            "certificate can be issued."),
            (f"Run 2 (Cyberpunk 2077 3840x2160): the archived first capture archive/first.csv does "
            f"not have the SHA-256 cited in the audit trail (declared {'a' * 64}, the file has "
            f"{'b' * 64})."),
            ("Run 5 (Forza Horizon 5 3840x2160): stutter 70.00% is above the Soft Limit of 60.00%; "
            "a Phase 1 VRM re-examination is required before this certificate can be issued."),
            ("Run 1 (Cyberpunk 2077 2560x1440) needed a re-run (incomplete capture) but has no "
            "archived first capture: the re-run step was skipped. Archive the first capture and "
            "cite its SHA-256."),
        ]),
        ("ru", [
            (f"Прогон 4 (Forza Horizon 5 2560x1440) требовал повторного прогона (величина фризов "
            f"61,10{NBSP}%{NBSP}— выше порога повторного прогона 60,00{NBSP}%), но{NBSP}первая запись не"
            f"{NBSP}сохранена в{NBSP}архиве: шаг повторного прогона пропущен. Сохраните первую запись "
            f"в{NBSP}архиве и{NBSP}укажите её SHA-256."),
            (f"Прогон 4 (Forza Horizon 5 2560x1440): величина фризов 61,10{NBSP}% выше мягкого "
            f"предела 60,00{NBSP}%; до{NBSP}выдачи сертификата нужны обоснование и{NBSP}повторная "
            "проверка VRM (этап 1)."),
            (f"Прогон 2 (Cyberpunk 2077 3840x2160): SHA-256 первой записи в{NBSP}архиве "
            f"archive/first.csv не{NBSP}совпадает с{NBSP}указанным в{NBSP}журнале аудита (заявлен "
            f"{'a' * 64}, у{NBSP}файла {'b' * 64})."),
            (f"Прогон 5 (Forza Horizon 5 3840x2160): величина фризов 70,00{NBSP}% выше мягкого "
            f"предела 60,00{NBSP}%; до{NBSP}выдачи сертификата нужна повторная проверка VRM (этап 1)."),
            ("Прогон 1 (Cyberpunk 2077 2560x1440) требовал повторного прогона (неполная запись), "
            f"но{NBSP}первая запись не{NBSP}сохранена в{NBSP}архиве: шаг повторного прогона пропущен. "
            f"Сохраните первую запись в{NBSP}архиве и{NBSP}укажите её SHA-256."),
        ]),
    ],
)
def test_refusals_are_worded_from_their_codes_in_the_language(lang: str, expected: list[str]) -> None:
    html, _ = _render(_refused(_sample()), lang)
    assert _refusal_items(html) == expected
    assert "english message" not in html


@pytest.mark.parametrize(
    ("lang", "count", "heading"),
    [
        ("ru", 1, "Сертификат не\u00a0может быть выдан\u00a0— 1 причина:"),
        ("ru", 2, "Сертификат не\u00a0может быть выдан\u00a0— 2 причины:"),
        ("ru", 5, "Сертификат не\u00a0может быть выдан\u00a0— 5 причин:"),
        ("pt", 1, "O\u00a0certificado não pode ser emitido\u00a0— 1 motivo:"),
        ("pt", 3, "O\u00a0certificado não pode ser emitido\u00a0— 3 motivos:"),
        ("en", 1, "The certificate cannot be issued for 1 reason:"),
        ("en", 2, "The certificate cannot be issued for 2 reasons:"),
    ],
)
def test_refusal_count_heading_uses_the_plural_forms(lang: str, count: int, heading: str) -> None:
    html, _ = _render(_refused(_sample(), count), lang)
    assert f'<div class="refusal-count">{heading}</div>' in html
    assert len(_refusal_items(html)) == count


def test_a_refusal_without_a_known_code_falls_back_to_its_message() -> None:
    record = _refused(_sample(), 2)
    record["status"]["refusal_details"][1] = {"code": "from_a_newer_certgen", "run": 0}
    html, _ = _render(record, "ru")
    items = _refusal_items(html)
    assert items[0].startswith("Прогон 4 ") and items[1] == "english message 1"


@pytest.mark.parametrize(
    ("lang", "why"),
    [
        ("en", "stutter 61.10%, above the re-run line of 60.00%"),
        ("ru", f"величина фризов 61,10{NBSP}%{NBSP}— выше порога повторного прогона 60,00{NBSP}%"),
        ("pt", "magnitude de engasgo de 61,10%, acima da linha de nova execução de 60,00%"),
    ],
)
def test_the_rerun_reason_in_the_audit_trail_is_in_the_language(lang: str, why: str) -> None:
    record = _sample()
    html, _ = _render(record, lang)
    assert f"<td>{why}</td>" in html
    assert "stutter 0.6110 &gt; 0.60" not in html
    # an older record without why_detail still shows its English reason
    for item in record["audit"]["first_captures"]:
        del item["why_detail"]
    html, _ = _render(record, lang)
    assert "<td>stutter 0.6110 &gt; 0.60</td>" in html


@pytest.mark.parametrize(("lang", "word", "mark"), [
    ("en", "passed", ""),
    ("ru", "пройдено", " (оригинал на\u00a0английском)"),
    ("pt", "aprovada", " (original em inglês)"),
])
def test_phase1_outcome_words_are_translated(lang: str, word: str, mark: str) -> None:
    """pass/fail is translated; any other outcome is the lab's text, marked on a page in
    another language than the one it is written in."""
    record = _sample()
    html, _ = _render(record, lang)
    assert f"<dd>{word}</dd>" in html
    record["phase1"]["vrm_rail_resistance"] = {"en": "Pass", "pt": "reprovada"}
    html, _ = _render(record, lang)
    assert f"<dd>{word if lang != 'pt' else 'reprovada'}</dd>" in html
    record["phase1"]["vrm_rail_resistance"] = "rail 3 at 7% over nominal"
    html, _ = _render(record, lang)
    text = "rail 3 at 7% over nominal"
    shown = f'<span lang="en">{text}</span>' if mark else text
    note = f' <span class="original-note">{mark.strip()}</span>' if mark else ""
    assert f"<dd>{shown}{note}</dd>" in html


def _shown_words(lang: str, refused: bool) -> tuple[dict[str, Any], set[str]]:
    """The sample record (refused or not) and the Latin words its certificate shows in `lang`."""
    record = _sample()
    if refused:
        _refused(record)
    html, _ = _render(record, lang)
    return record, words(visible_text(html))


@pytest.mark.parametrize("refused", [False, True])
def test_a_russian_certificate_shows_no_english_beyond_the_glossary_and_the_bundle(refused: bool) -> None:
    record, words = _shown_words("ru", refused)
    assert sorted(words - KEPT_IN_ENGLISH - bundle_words(record)) == []


@pytest.mark.parametrize("refused", [False, True])
def test_a_portuguese_certificate_shows_no_english_sentence_words(refused: bool) -> None:
    record, words = _shown_words("pt", refused)
    assert sorted((words & ENGLISH_ONLY) - bundle_words(record)) == []


# --- languages built together: hreflang alternates and the switcher --------------------------


def test_alternates_and_switcher_name_every_language_built_in_the_run() -> None:
    html, _ = _render(_sample(), "ru", languages=["pt", "ru", "en"])
    head = html.split("</head>", 1)[0]
    assert re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', head) == [
        ("en", "certificate.en.html"), ("ru", "certificate.ru.html"),
        ("pt", "certificate.pt.html"), ("x-default", "certificate.en.html"),
    ]
    nav = html.split('<nav class="doc-nav"', 1)[1].split("</nav>", 1)[0]
    assert 'aria-label="Язык документа"' in nav
    assert re.findall(r'<a href="([^"]+)" hreflang="(\w+)" lang="\w+">([^<]+)</a>', nav) == [
        ("certificate.en.html", "en", "English"), ("certificate.pt.html", "pt", "Português")]
    assert '<span lang="ru" aria-current="page">Русский</span>' in nav
    # the same set in another order gives the same document
    assert _render(_sample(), "ru", languages=["en", "pt", "ru"])[0] == html


def test_two_languages_alternate_between_themselves_only() -> None:
    html, _ = _render(_sample(), "pt", languages=["ru", "pt"])
    assert re.findall(r'hreflang="([^"]+)" href', html) == ["ru", "pt", "x-default"]
    assert '<link rel="alternate" hreflang="x-default" href="certificate.ru.html">' in html
    assert "certificate.en.html" not in html


@pytest.mark.parametrize("languages", [None, ["en"], []])
def test_one_language_has_no_alternates_and_no_switcher(languages: list[str] | None) -> None:
    html, _ = _render(_sample(), "en", languages=languages)
    assert 'rel="alternate"' not in html and 'class="nav-langs"' not in html
    # the navigation still links the files published beside the certificate
    assert '<a href="certificate.en.pdf" type="application/pdf">PDF</a>' in html
    assert '<a href="record.json" type="application/json">record.json</a>' in html


def test_record_and_verification_links_are_for_the_screen_and_the_url_for_both() -> None:
    """On screen "the attached record.json" links the record beside the HTML; the PDF shows the
    word without a link (there it means the embedded file). The verification address is a
    link in both."""
    record = _sample()
    for lang in LANGUAGES:
        html, data = _render(record, lang, languages=LANGUAGES)
        assert html.count('<a class="screen-only" href="record.json">record.json</a>'
                          '<span class="print-only">record.json</span>') == 1, lang
        assert '<a class="hash" href="https://' in html
        reader = pypdf.PdfReader(io.BytesIO(render_certificate_pdf(html, _typed(record), data,
                                                                   lang)))
        uris = [a.get_object()["/A"].get("/URI") for page in reader.pages
                for a in page.get("/Annots") or []]
        assert uris and all(str(u).startswith("https://") for u in uris), uris
        text = "".join(page.extract_text() for page in reader.pages)
        assert text.count("record.json") == html.split("<body>", 1)[1].count(
            '<span class="print-only">record.json</span>'), lang


def test_the_switcher_is_for_the_screen_only() -> None:
    record = _sample()
    html, data = _render(record, "en", languages=LANGUAGES)
    plain, _ = _render(record, "en")
    assert "@media print { nav.doc-nav { display: none; } }" in html

    def text(doc: str) -> str:
        reader = pypdf.PdfReader(io.BytesIO(render_certificate_pdf(doc, _typed(record), data, "en")))
        return "\n".join(page.extract_text() for page in reader.pages)

    with_switcher = text(html)
    assert "Русский" not in with_switcher and "Português" not in with_switcher
    assert with_switcher == text(plain)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_ends_in_whitespace_before_its_closing_tag(lang: str) -> None:
    """WeasyPrint counts such trailing whitespace in the last line's width and can push the
    line's first word onto a line of its own (seen in the pt calibration statement)."""
    html, _ = _render(_refused(_sample()), lang, languages=LANGUAGES)
    body = html.split("<body>", 1)[1]
    trailing = re.findall(r"[^>\s][^<>]{0,30}\s+</(?:li|div|p|td|th|dd|dt|h\d|figcaption|span|strong|a)>",
                          body)
    assert trailing == []


def test_the_certificate_reads_the_capture_minimums_own_sentence() -> None:
    """certgen.render.certificate.shortfall_of reads the sentence certgen.rules.completeness
    writes as a first capture's re-run reason (issue 39), so ru/pt certificates word it in
    their language; a reader's own reason is left as written."""
    from certgen.render.certificate import shortfall_of
    from certgen.rules.completeness import Extent, shortfall
    from certgen.sop.capture_limits import DEFAULT_LIMITS

    sentence = shortfall(Extent(frames=18, seconds=0.3), DEFAULT_LIMITS)
    assert shortfall_of(sentence) == {
        "frames": "18", "seconds": "0.3", "min_seconds": f"{DEFAULT_LIMITS.min_seconds:g}",
        "min_frames": str(DEFAULT_LIMITS.min_frames)}
    assert shortfall_of("the capture ended early") is None
    assert shortfall_of(None) is None
