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

from certgen.metrics import round_half_away
from certgen.record import dump_record
from certgen.render.certificate import (
    render_certificate_html,
    render_certificate_pdf,
    sanitise_markdown,
    verify_url,
)
from certgen.render.i18n import LANGUAGES

SAMPLE = Path(__file__).parent / "data" / "records" / "sample.json"


def _sample() -> dict[str, Any]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def _render(record: dict[str, Any], lang: str, **kw: Any) -> tuple[str, bytes]:
    data = dump_record(record)
    html = render_certificate_html(record, lang, record_sha256=hashlib.sha256(data).hexdigest(), **kw)
    return html, data


def _cells(html: str, cls: str) -> list[str]:
    return re.findall(rf'<td class="num {cls}">(?:<strong>)?([^<]*)', html)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_html_snapshot(lang: str, snapshot: Any) -> None:
    html, _ = _render(_sample(), lang)
    assert html == snapshot


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pdf_text_and_metadata_snapshot(lang: str, snapshot: Any) -> None:
    record = _sample()
    html, data = _render(record, lang)
    pdf = render_certificate_pdf(html, record, data, lang)
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    meta = {k: str(v) for k, v in sorted((reader.metadata or {}).items())}
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert {"metadata": meta, "pages": len(reader.pages), "text": text} == snapshot
    assert dict(reader.attachments) == {"record.json": [data]}
    assert reader.trailer["/Root"]["/Lang"] == lang


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
        ("en", "Provisional · n = 13", "DRAFT — NOT ISSUABLE"),
        ("ru", "Предварительно · n = 13", "ЧЕРНОВИК — ВЫДАВАТЬ НЕЛЬЗЯ"),
        ("pt", "Provisório · n = 13", "RASCUNHO — NÃO PODE SER EMITIDO"),
    ],
)
def test_must_show_items(lang: str, provisional: str, draft: str) -> None:
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
    assert f"https://verify.lab.example/c/ASD-2026-000123?sha256={sha}" in html
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
    assert render_certificate_pdf(html1, record, data, "ru") == render_certificate_pdf(html2, record, data, "ru")
