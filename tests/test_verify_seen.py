"""certgen.verify.seen: what a reader sees of two PDFs compared: an action, a page more, a word
changed, an image changed or an annotation more is named; the same view is no difference."""

from __future__ import annotations

from certgen.verify.seen import Seen, seen_difference

BASE = Seen(pages=(("GOLD certificate for ACME", ("img1",)),), actions=(), annotations=(1,))


def test_the_same_view_is_no_difference() -> None:
    assert seen_difference(BASE, BASE, signature_widgets=0) is None


def test_each_difference_a_reader_sees_is_named() -> None:
    worded = Seen((("PLATINUM certificate for ACME", ("img1",)),), (), (1,))
    assert seen_difference(worded, BASE, signature_widgets=0) == (
        "page 1 prints 'PLATINUM' where the record's certificate prints 'GOLD'")
    drawn = Seen((("GOLD certificate for ACME", ("img2",)),), (), (1,))
    assert "draws 1 image(s)" in str(seen_difference(drawn, BASE, signature_widgets=0))
    acting = Seen(BASE.pages, ("the document's /OpenAction",), (1,))
    assert "/OpenAction" in str(seen_difference(acting, BASE, signature_widgets=0))
    longer = Seen(BASE.pages * 2, (), (1, 0))
    assert "2 pages" in str(seen_difference(longer, BASE, signature_widgets=0))
    annotated = Seen(BASE.pages, (), (3,))
    assert seen_difference(annotated, BASE, signature_widgets=1) == (
        "the file has 1 annotation(s) more than the record's certificate")
