"""Pagination of every PDF the sample site publishes, measured from the PDFs (tests/pagekit.py).

Documents: the sample certificates and the sample reports (before/after and series, the
calibration review) in every language the site builds, and the explainers. Measured from the
sample site the session builds once (conftest.sample_site); nothing here reads certgen's CSS.

- Fill of a page: how far down its content reaches, (lowest content bottom − band top) / band
  height, where content is what the PDF tags as the document's own (text runs, pictures and
  paths inside marked content of the structure tree; not artifacts such as backgrounds and
  borders, nor the @page margin boxes: running header, page number) and the band is the
  document's usable height: from the highest content top on any of its pages to as far above
  the bottom edge (bottom margin taken equal to the top one), or lower where content reaches.
  No page but the last may be under 35 % full: a break that leaves two thirds of a page empty
  moved a block that would have fitted, or kept too much together.
- A heading (H1–H6 in the structure tree) is followed on its page by at least two lines of
  body text (text below its last line that is not a heading or a table's header cell) or by a
  figure: it is never the last thing on a page, nor left with a single row or line of what it
  introduces.
- A table or list that runs on from one page to the next (the last thing on a page and the
  first on the next are in a table, or in a list) has at least two lines of its body on each
  of the two pages: no lone row at a page's foot, and no lone row carried over to the next
  page (the SILVER certificate's last page once held one audit row and the verification box).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pagekit import Mark, Page, content_band, fill, lone_rows, read_pages, stranded_headings

MIN_FILL = 0.35


def documents(site: Path) -> list[Path]:
    """The site's PDFs, each once (verify/ holds copies of the samples' certificates)."""
    found = [*site.glob("samples/*/certificate.*.pdf"), *site.glob("reports/*/report.*.pdf"),
             *site.glob("calibration/calibration.*.pdf"), *site.glob("*/explainers/*.pdf")]
    return sorted(found)


def problems(path: Path) -> list[str]:
    """One line per page that breaks a rule of the module docstring."""
    pages = read_pages(path)
    band = content_band(pages)
    out = []
    for page in pages:
        share = fill(page, band)
        if page.number < len(pages) and share < MIN_FILL:
            out.append(f"p{page.number}/{len(pages)} is {share:.0%} full")
        for heading in stranded_headings(page):
            out.append(f"p{page.number}: {heading} is followed by less than two lines")
    return out + lone_rows(pages)


@pytest.fixture(scope="module")
def site(sample_site: Path) -> Path:
    return sample_site


def test_the_site_publishes_the_documents_measured(site: Path) -> None:
    """Every sample certificate and report in en, ru and pt, and the explainers, are found (a
    renamed folder must not empty the check below)."""
    names = [p.relative_to(site).as_posix() for p in documents(site)]
    for lang in ("en", "ru", "pt"):
        for sample in ("PLATINUM-0001", "GOLD-0002", "SILVER-0003"):
            assert f"samples/SAMPLE-{sample}/certificate.{lang}.pdf" in names
        for report in ("change", "series", "inside-floor"):
            assert f"reports/{report}/report.{lang}.pdf" in names
        assert f"calibration/calibration.{lang}.pdf" in names
        assert sum(n.startswith(f"{lang}/explainers/") for n in names) >= 7


PAGE_ONE = ("page1-grade", "page1-grade-end", "page1-issuer", "page1-issuer-end")
"""The anchors (named destinations) around the page-1 contract's blocks in a certificate: the
grade box (the badge and why it was given) and the issuer block (who issued it, and the
verification address with a pointer to the QR code)."""

WHY = {"en": "Why this grade", "ru": "Почему этот класс", "pt": "Por que esta classificação"}
ISSUED_BY = {"en": "Issued by", "ru": "Кем выдан", "pt": "Emitido por"}


def page_one_problems(path: Path, lang: str, cert: str) -> list[str]:
    """What page 1 of a certificate PDF lacks of the page-1 contract: a block whose start or
    end anchor is not on page 1, or a text page 1 does not say (the grade, "Why this grade",
    "Issued by", the lab, the verification address)."""
    import re

    from pagekit import destinations, page_texts

    where = destinations(path)
    out = [f"{name} is on page {where[name][0]}" if name in where else f"{name} is missing"
           for name in PAGE_ONE if where.get(name, (0, 0.0))[0] != 1]
    first = re.sub(r"\s+", " ", page_texts(path)[0])
    joined = first.replace(" ", "")  # an address may break across lines
    grade = cert.split("-")[1]
    for text in (grade, WHY[lang], ISSUED_BY[lang], "Sample Frame-Pacing Laboratory"):
        if text not in first:
            out.append(f"page 1 does not say {text!r}")
    if f"/verify/{cert}/?sha256=" not in joined:
        out.append("page 1 does not give the verification address")
    return out


def test_page_one_of_every_sample_certificate_holds_grade_reason_issuer_and_verification(
        site: Path) -> None:
    """Issue 39, the page-1 contract: in every language and sample, page 1 holds the grade
    badge and the whole box saying why it was given, the whole "Issued by" block, and the
    verification address with the pointer to the QR code (the published RU SILVER had its
    grade on page 2; the RU GOLD grade box split across pages 2 and 3). Each block starts and
    ends on page 1 (its anchors), and page 1's text says what the block should."""
    found = {}
    for path in sorted(site.glob("samples/*/certificate.*.pdf")):
        lang, cert = path.name.split(".")[1], path.parent.name
        found[(cert, lang)] = page_one_problems(path, lang, cert)
    # Every sample (four since issue 42's frame-generation sample), each in en, ru and pt.
    assert len(found) >= 12 and len(found) % 3 == 0 and \
        {lang for _, lang in found} == {"en", "ru", "pt"}
    assert {key: lines for key, lines in found.items() if lines} == {}


def test_the_page_one_check_finds_a_grade_pushed_to_page_two(tmp_path: Path) -> None:
    """The check on a PDF made for it: a tall specimen box pushes the grade box (kept whole)
    to page 2, as it did on the RU SILVER sample; the issuer block is missing."""
    import weasyprint

    html = """<html lang="en"><head><style>@page { size: A4; margin: 50pt; }
      .box { break-inside: avoid; height: 300pt; }</style></head><body>
      <div style="height: 500pt">SPECIMEN</div>
      <div class="box" id="page1-grade">SILVER Why this grade<div id="page1-grade-end"></div></div>
      </body></html>"""
    path = tmp_path / "certificate.en.pdf"
    weasyprint.HTML(string=html).write_pdf(path)
    assert page_one_problems(path, "en", "SAMPLE-SILVER-0003") == [
        "page1-grade is on page 2", "page1-grade-end is on page 2", "page1-issuer is missing",
        "page1-issuer-end is missing", "page 1 does not say 'SILVER'",
        "page 1 does not say 'Why this grade'", "page 1 does not say 'Issued by'",
        "page 1 does not say 'Sample Frame-Pacing Laboratory'",
        "page 1 does not give the verification address"]


def test_no_page_is_left_under_a_third_full_and_no_heading_or_row_is_left_alone(
        site: Path) -> None:
    found = {p.relative_to(site).as_posix(): problems(p) for p in documents(site)}
    bad = {name: lines for name, lines in found.items() if lines}
    assert bad == {}


# --------------------------------------------------------------------------- the measures


def _page(*marks: Mark, number: int = 1) -> Page:
    return Page(number, 842.0, marks)


def _line(top: float, *roles: str) -> Mark:
    return Mark(top, top + 10.0, True, roles or ("P", "Part", "Document"), top + 8.0)


def test_the_measures_on_pages_made_for_them() -> None:
    """Fill and stranded headings on hand-made pages, against numbers worked out by hand."""
    full = _page(_line(50.0), _line(780.0))
    short = _page(_line(50.0), _line(240.0), number=2)
    band = content_band([full, short])
    assert (band.top, band.bottom) == (50.0, 792.0)  # bottom margin = top margin
    assert fill(short, band) == pytest.approx((250.0 - 50.0) / 742.0)
    assert fill(_page(), band) == 0.0
    # Artifacts (no roles) count for nothing.
    assert fill(_page(Mark(50.0, 780.0, False, ())), band) == 0.0

    heading = ("H2", "Sect", "Part", "Document")
    one_row = _page(_line(600.0, *heading), _line(615.0, "TD", "TR", "Table"))
    assert stranded_headings(one_row) == ["H2 at 600 pt"]
    header_only = _page(_line(600.0, *heading), _line(615.0, "TH", "TR", "Table"),
                        _line(630.0, "TD", "TR", "Table"))
    assert stranded_headings(header_only) == ["H2 at 600 pt"]
    two_rows = _page(_line(600.0, *heading), _line(615.0), _line(630.0))
    assert stranded_headings(two_rows) == []
    # Two cells of one row are one line.
    one_line = _page(_line(600.0, *heading), _line(615.0), _line(615.2))
    assert stranded_headings(one_line) == ["H2 at 600 pt"]
    figure = _page(_line(600.0, *heading),
                   Mark(615.0, 700.0, False, ("Figure", "P", "Part", "Document")))
    assert stranded_headings(figure) == []


def _row(top: float, table: int, row: int) -> Mark:
    roles = ("Span", "TD", "TR", "TBody", "Table", "Part", "Document")
    return Mark(top, top + 10.0, True, roles, top + 8.0, (row * 10 + 1, row * 10, row, 99, table,
                                                          2, 1))


def test_a_lone_row_on_either_side_of_a_page_break_is_found() -> None:
    """A table whose part on each page is a different structure element (as WeasyPrint tags
    them): one row carried over, or one row left behind, is reported; two on each side is not.
    Rows of a table that ends on its page do not count."""
    two = _page(_line(50.0), _row(700.0, 5, 1), _row(715.0, 5, 2))
    one_over = _page(_row(50.0, 6, 3), _line(80.0), number=2)
    assert lone_rows([two, one_over]) == ["p2: a single line of the table that runs from p1 to p2"]
    one_left = _page(_line(50.0), _row(760.0, 5, 1))
    two_over = _page(_row(50.0, 6, 2), _row(65.0, 6, 3), number=2)
    assert lone_rows([one_left, two_over]) == [
        "p1: a single line of the table that runs from p1 to p2"]
    assert lone_rows([two, two_over]) == []
    ended = _page(_line(50.0), _row(760.0, 5, 1), _line(775.0))
    assert lone_rows([ended, one_over]) == []


def test_the_measures_read_a_pdf_weasyprint_made(tmp_path: Path) -> None:
    """A two-page tagged PDF whose first page ends with a heading and whose second page holds
    one line: the reader finds the heading, the page numbers of the margin boxes are not
    content, and the fills are what the layout says (a 100 pt block of text in a 742 pt
    band is about 13 %)."""
    import weasyprint

    html = """<html lang="en"><head><style>
      @page { size: A4; margin: 50pt; @bottom-right { content: counter(page); } }
      body { font: 10pt/12pt sans-serif; margin: 0; } p { margin: 0; }
      .tall { height: 700pt; } .short { height: 88pt; }
      h2 { font-size: 10pt; line-height: 12pt; margin: 0; }
    </style></head><body><main>
      <div class="tall"><p>first</p></div><h2>Heading at the foot</h2>
      <div style="break-before: page" class="short"><p>one</p><p>two</p></div>
      <p>last</p>
    </main></body></html>"""
    path = tmp_path / "two.pdf"
    weasyprint.HTML(string=html).write_pdf(path, pdf_variant="pdf/a-3a")
    pages = read_pages(path)
    assert len(pages) == 2
    # The page numbers (at 810 pt and below) are drawn but are not content.
    assert any(m.top > 800.0 for m in pages[1].marks)
    assert all(m.bottom < 792.0 for p in pages for m in p.content)
    [heading] = stranded_headings(pages[0])
    assert heading.startswith("H2 at 75")  # the heading's line, 750 pt from the top
    assert stranded_headings(pages[1]) == []
    band = content_band(pages)
    assert band.top == pytest.approx(50.0, abs=1.0)
    # Page 2: "one", "two", an 88 pt block, "last": 100 pt from the band's top.
    assert fill(pages[1], band) == pytest.approx(100.0 / (842.0 - 2 * 50.0), abs=0.01)
    # Page 2 is the last page: under a third full is allowed there; no table crosses a page.
    assert problems(path) == [f"p1: {heading} is followed by less than two lines"]
