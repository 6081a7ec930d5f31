"""What a customer reads on the certificate, checked where it is printed (issue 28, leftovers):
the rules named in words, column headings in words, a grade not reached shown as such and not
as a failure, "Valid until" once, one date style, nothing past the right margin, and the QR
code's alternative text in the tagged PDF.

The PDF checks read every sample certificate of the sample site (tests/conftest.py) in every
language it publishes; the template checks render tests/data/records/sample.json.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pypdf
import pytest
from babel.dates import format_date
from renderkit import structure_elements

from certgen.record import Record, load_record
from certgen.render.certificate import gate_mark, render_certificate_html, sop_name
from certgen.render.i18n import LANGUAGES

SAMPLE = Path(__file__).parent / "data" / "records" / "sample.json"
MM = 72 / 25.4
A4_PT = (210 * MM, 297 * MM)
# The certificate's column on A4: 15 mm page margins left and right, then 4 mm of the body's own
# padding (the header's rule spans exactly this); 18 mm page margins top and bottom, where only
# the running header and the page number stand (at the page area's edge).
COLUMN_PT = (19 * MM, (210 - 19) * MM)
BODY_PT = (18 * MM, (297 - 18) * MM)
TOLERANCE_PT = 0.5  # glyph boxes are rounded; a real overrun was 1–3 mm


def _certificate_pdfs(site: Path) -> list[Path]:
    found = sorted(site.glob("samples/*/certificate.*.pdf"))
    # three samples, each in every language the site publishes
    assert len(found) == 4 * len(LANGUAGES), found
    return found


def _lang(pdf: Path) -> str:
    return pdf.name.split(".")[1]


def _page_texts(pdf: Path) -> list[str]:
    reader = pypdf.PdfReader(pdf)
    return [page.extract_text() for page in reader.pages]


def _record(pdf: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((pdf.parent / "record.json").read_text("utf-8"))
    return loaded


def _render(record: dict[str, Any], lang: str) -> str:
    typed: Record = load_record(json.dumps(record, ensure_ascii=False).encode("utf-8"))
    return render_certificate_html(typed, lang, record_sha256="0" * 64)


# -------------------------------------------------------------------- the rules named in words

SOP_IN_WORDS = {"en": "SOP GPU-001, version 1.1", "ru": "SOP GPU-001, версия 1.1",
                "pt": "SOP GPU-001, versão 1.1"}


def test_a_rules_file_id_reads_as_the_sop_and_its_version() -> None:
    named = sop_name("sop-gpu-001-v1.1")
    assert named is not None and (named.procedure, named.version) == ("GPU-001", "1.1")
    named = sop_name("sop-gpu-012-v2")
    assert named is not None and (named.procedure, named.version) == ("GPU-012", "2")
    # a draft or a lab's own file is shown as it is, never guessed into words
    assert sop_name("sop-gpu-001-v1.2-draft") is None
    assert sop_name("lab-rules") is None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_page_one_names_the_sop_in_words_not_its_file_id(sample_site: Path, lang: str) -> None:
    for pdf in _certificate_pdfs(sample_site):
        if _lang(pdf) != lang:
            continue
        assert _record(pdf)["rules_version"] == "sop-gpu-001-v1.1"
        first = re.sub(r"\s+", " ", _page_texts(pdf)[0])
        assert "sop-gpu-001" not in first, pdf
        assert SOP_IN_WORDS[lang] in first, (pdf, first[:800])


# ------------------------------------------------------------------ column headings in words

@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_runs_table_headings_are_words_not_symbols(lang: str) -> None:
    html = _render(json.loads(SAMPLE.read_text("utf-8")), lang)
    head = re.search(r'<table class="runs".*?<thead>(.*?)</thead>', html, re.S)
    assert head is not None
    headings = re.sub(r"<[^>]+>", " ", head.group(1))
    assert not re.search(r"[₀₁]|\bF\b|\bg\b|\bs\b", headings), headings
    assert "FPS" in headings and ("1%" in headings or "1\u00a0%" in headings)
    assert "0.1%" in headings or "0,1" in headings


# ---------------------------------------------------- a grade not reached is not a failure

def _gates(html: str) -> list[str]:
    box = re.search(r'<ul class="gates">(.*?)</ul>\s*</div>\s*</div>', html, re.S)
    assert box is not None
    return re.findall(r"^\s*<li>(.*?)(?=\n\s*<li>|\Z)", box.group(1), re.S | re.M)


# ru binds the negation "не" to its word with a no-break space (certgen.render.i18n).
NOT_REACHED = {"en": "not reached", "ru": "не\u00a0достигнут", "pt": "não atingida"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_gates_above_the_awarded_grade_are_not_marked_as_failures(lang: str) -> None:
    """The SILVER sample misses the PLATINUM and the GOLD line: two grades not reached,
    nothing failed, so nothing red in the grade box."""
    record = json.loads(SAMPLE.read_text("utf-8"))
    assert record["grade"]["value"] == "SILVER"
    assert [g["passed"] for g in record["grade"]["reasons"]] == [False, False, True, True]
    gates = _gates(_render(record, lang))
    assert len(gates) == 4
    for gate in gates[:2]:
        assert 'class="fail"' not in gate and "✗" not in gate, gate
        assert NOT_REACHED[lang] in gate, gate
    for gate in gates[2:]:
        assert '<span class="pass">✓</span>' in gate


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_cap_from_another_phase_is_still_marked_as_failed(lang: str) -> None:
    record = json.loads(SAMPLE.read_text("utf-8"))
    cap = {"grade": "SILVER", "reason": "Phase 1 VRM rail resistance failed"}
    record["grade"]["cap"] = cap
    record["grade"]["reasons"][3] = {"gate": "grade_cap", "passed": False, "allows": "SILVER",
                                     "cap": cap}
    gates = _gates(_render(record, lang))
    assert '<span class="fail">✗</span>' in gates[3]
    assert all("✗" not in gate for gate in gates[:3])


def test_gate_marks_follow_what_the_gate_says() -> None:
    typed = load_record(SAMPLE.read_bytes())
    assert [gate_mark(g) for g in typed.grade.reasons] == [
        "not_reached", "not_reached", "passed", "passed"]


def test_the_gold_sample_shows_platinum_not_reached_in_no_red(sample_site: Path) -> None:
    for lang in LANGUAGES:
        page = sample_site / "samples" / "SAMPLE-GOLD-0002" / f"certificate.{lang}.html"
        gates = _gates(page.read_text("utf-8"))
        assert "PLATINUM" in gates[0] and NOT_REACHED[lang] in gates[0]
        assert all('class="fail"' not in gate for gate in gates), (lang, gates)


# ----------------------------------------------------------- "Valid until" once, one date style

VALID_UNTIL = {"en": "Valid until", "ru": "Действителен до", "pt": "Válido até"}


def test_valid_until_is_printed_once_on_page_one(sample_site: Path) -> None:
    for pdf in _certificate_pdfs(sample_site):
        first = _page_texts(pdf)[0]
        assert first.count(VALID_UNTIL[_lang(pdf)]) == 1, pdf


def _dates(record: dict[str, Any]) -> set[dt.date]:
    found = {dt.date.fromisoformat(record["certificate"]["issued"])}
    if record.get("issuer"):
        found.add(dt.date.fromisoformat(record["issuer"]["valid_until"]))
    for run in record["runs"]:
        if (run.get("conditions") or {}).get("tested_on"):
            found.add(dt.date.fromisoformat(run["conditions"]["tested_on"]))
    return found


def test_every_date_on_a_certificate_is_in_one_style(sample_site: Path) -> None:
    """Each date the record holds is printed in the language's long form (Babel's), never in
    its abbreviated one ("Nov 18, 2026", "18 нояб. 2026 г.", "18 de nov. de 2026")."""
    checked = 0
    for pdf in _certificate_pdfs(sample_site):
        lang = _lang(pdf)
        text = re.sub(r"\s+", " ", " ".join(_page_texts(pdf))).replace("\u00a0", " ")
        dates = _dates(_record(pdf))
        assert len(dates) >= 3, pdf  # issue, validity and at least one test date
        for day in dates:
            long = format_date(day, "long", locale=lang).replace("\u00a0", " ")
            medium = format_date(day, "medium", locale=lang).replace("\u00a0", " ")
            assert medium != long
            assert medium not in text, (pdf, medium)
            checked += long in text
    assert checked >= 3 * len(_certificate_pdfs(sample_site))


# ------------------------------------------------------------------- nothing past the margin

class Word(NamedTuple):
    """One word as pdftotext -bbox finds it (points, from the page's top left)."""

    page: int
    page_width: float
    page_height: float
    x_min: float
    y_min: float
    x_max: float
    y_max: float
    text: str


def _words(pdf: Path) -> list[Word]:
    """Every word pdftotext finds in `pdf`, with its page (1-based) and box."""
    tool = shutil.which("pdftotext")
    if tool is None:
        pytest.fail("pdftotext (Debian poppler-utils) is missing: `make test` installs it as root")
    out = subprocess.run([tool, "-bbox", str(pdf), "-"], check=True, capture_output=True,
                         text=True).stdout
    words: list[Word] = []
    page, width, height = 0, 0.0, 0.0
    for line in out.splitlines():
        found = re.search(r'<page width="([\d.]+)" height="([\d.]+)"', line)
        if found:
            page, width, height = page + 1, float(found.group(1)), float(found.group(2))
        found = re.search(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" '
                          r'yMax="([\d.]+)">(.*?)</word>', line)
        if found:
            x0, y0, x1, y1 = (float(v) for v in found.groups()[:4])
            words.append(Word(page, width, height, x0, y0, x1, y1, found.group(5)))
    return words


def test_no_word_of_any_sample_certificate_lies_outside_its_column(sample_site: Path) -> None:
    """pdftotext's box of every word in the page body lies inside the column (page margins and
    the body's padding): "Issued by" ran past it in en ("Body") and pt ("emissão)")."""
    outside: list[str] = []
    for pdf in _certificate_pdfs(sample_site):
        words = _words(pdf)
        assert len(words) > 500, pdf
        for w in words:
            assert abs(w.page_width - A4_PT[0]) < 1 and abs(w.page_height - A4_PT[1]) < 1
            if not BODY_PT[0] <= w.y_min <= BODY_PT[1]:
                continue  # the running header and footer
            if w.x_max > COLUMN_PT[1] + TOLERANCE_PT or w.x_min < COLUMN_PT[0] - TOLERANCE_PT:
                outside.append(f"{pdf.parent.name}/{pdf.name} p{w.page}: {w.text!r} at "
                               f"{w.x_min:.1f}–{w.x_max:.1f} pt (column {COLUMN_PT[0]:.1f}–"
                               f"{COLUMN_PT[1]:.1f})")
    assert outside == []


def test_no_word_of_any_sample_certificate_overlaps_another(sample_site: Path) -> None:
    """A word that cannot wrap and is wider than its cell runs over the next one (the ru and pt
    runs table once printed "Fluidity Score" across "Место в когорте"): no two word boxes on a
    page may overlap by more than half a line's height."""
    overlapping: list[str] = []
    for pdf in _certificate_pdfs(sample_site):
        words = _words(pdf)
        for i, a in enumerate(words):
            for b in words[i + 1:]:
                if b.page != a.page:
                    break  # pdftotext lists the words page by page
                across = min(a.x_max, b.x_max) - max(a.x_min, b.x_min)
                down = min(a.y_max, b.y_max) - max(a.y_min, b.y_min)
                if across > TOLERANCE_PT and down > 0.5 * min(a.y_max - a.y_min,
                                                              b.y_max - b.y_min):
                    overlapping.append(f"{pdf.parent.name}/{pdf.name} p{a.page}: {a.text!r} "
                                       f"over {b.text!r} by {across:.1f} pt")
    assert overlapping == []


# ------------------------------------------------------------------- the QR code's /Alt

QR_ALT = {"en": "verification page", "ru": "страницу проверки", "pt": "página de verificação"}


def _figures(pdf: Path) -> list[str | None]:
    """The /Alt of every Figure in the PDF's structure tree (None where it has none)."""
    data = pdf.read_bytes()
    assert "/StructTreeRoot" in pypdf.PdfReader(io.BytesIO(data)).trailer["/Root"], pdf
    return [str(node["/Alt"]) if "/Alt" in node else None
            for node in structure_elements(data) if node.get("/S") == "/Figure"]


def test_the_qr_figure_says_what_it_opens_in_the_tagged_pdf(sample_site: Path) -> None:
    for pdf in _certificate_pdfs(sample_site):
        alts = _figures(pdf)
        qr = [a for a in alts if a and "QR" in a]
        assert len(qr) == 1, (pdf, alts)
        assert QR_ALT[_lang(pdf)] in qr[0], (pdf, qr)
        assert None not in alts, (pdf, alts)  # the charts have theirs too
