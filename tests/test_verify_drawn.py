"""certgen.verify.drawn: what readers draw after the signed revision (issue 40). Two engines
(PDFium, poppler's pdftoppm) must draw the final file's pages as the signed revision's, pixel
for pixel; three parsers (pyHanko, pypdf, qpdf) must read the same page tree. Built on the
plainly signed GOLD certificate with tests/forgekit40.py; tests/test_sign_tsa.py shows a genuine
B-LTA certificate passes (the check runs inside `intact`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from forgekit40 import Revision, append_revision, duplicate_xref, forged_page_content

from certgen.verify.drawn import ENGINES, drawn_problem, parsers_problem


@pytest.fixture(scope="module")
def genuine(signed_gold: Path) -> bytes:
    return (signed_gold / "certificate.en.pdf").read_bytes()


def test_nothing_after_the_signed_revision_is_nothing_to_compare(genuine: bytes) -> None:
    assert drawn_problem(genuine, len(genuine)) is None
    assert parsers_problem(genuine) is None


def test_an_overlay_every_parser_reads_alike_is_seen_by_both_engines(genuine: bytes) -> None:
    """A restated page 1 (a vector 'PLATINUM' over the badge) that every parser reads the same
    way: the engines draw it, so the drawn pages differ from the signed revision's."""
    number, body = forged_page_content(genuine)
    forged = append_revision(genuine, Revision(objects=[(number, body)]))
    assert parsers_problem(forged) is None
    assert drawn_problem(forged, len(genuine)) == (
        "PDFium draws page 1 of the file otherwise than the signed revision's")
    # poppler sees it too, on its own.
    draw = ENGINES["poppler (pdftoppm)"]
    assert draw(forged)[0] != draw(genuine)[0] and draw(forged)[1:] == draw(genuine)[1:]


def test_a_page_the_parsers_read_differently_is_named(genuine: bytes) -> None:
    """The duplicate xref entry: pyHanko keeps the last entry, pypdf and qpdf another."""
    problem = drawn_problem(duplicate_xref(genuine), len(genuine))
    assert problem is not None
    assert problem.startswith("the PDF parsers disagree: pyHanko and ")
    assert problem.endswith("read page 1's content differently")


def test_the_catalog_view_names_the_outline_s_actions() -> None:
    """What the parsers are compared on beyond the pages: the catalog's entries, an opening
    action, and each outline item's title and action (a JavaScript outline item read by one
    parser only is a disagreement)."""
    from certgen.verify.drawn import _catalog_view

    second = {"/Title": "Grade", "/A": {"/S": "/JavaScript", "/JS": "app.alert(1)"}}
    root = {"/Type": "/Catalog", "/OpenAction": [], "/Outlines": {
        "/First": {"/Title": "Certificate", "/Next": second}}}
    assert _catalog_view(root, lambda value: value) == (
        ("/OpenAction", "/Outlines", "/Type"), True,
        (("Certificate", "", ""), ("Grade", "/JavaScript", "app.alert(1)")))
