"""The suite's text cache (tests/textcache.py, issue 43): a hit gives what pypdf extracts, and
a page that differs in anything the extraction reads is extracted again."""

from __future__ import annotations

import io

import pypdf
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
)
from textcache import TextCache, page_key


def _pdf(texts: list[bytes], encoding: str = "/WinAnsiEncoding") -> bytes:
    """A PDF with one page per text, all in one shared Helvetica (its /Encoding given)."""
    writer = pypdf.PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
        NameObject("/Encoding"): NameObject(encoding)}))
    for text in texts:
        page = writer.add_blank_page(200, 100)
        stream = DecodedStreamObject()
        stream.set_data(b"BT /F1 12 Tf 10 50 Td (" + text + b") Tj ET")
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
            {NameObject("/F1"): font})})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _pages(pdf: bytes) -> list[pypdf.PageObject]:
    return list(pypdf.PdfReader(io.BytesIO(pdf)).pages)


def _real() -> TextCache:
    real = TextCache()
    real.enabled = False  # pypdf's extraction itself (the suite's cache is installed around it)
    return real


def test_a_hit_is_the_text_pypdf_extracts_and_a_changed_page_is_read_again() -> None:
    pdf = _pdf([b"Grade GOLD", b"SHA-256 abc", b"Grade GOLD"])
    real = _real()
    cache = TextCache(extract=real)
    cache.enabled = True  # this test is about the cache, whatever CERTGEN_TEST_TEXT_CACHE says
    first = [cache(page) for page in _pages(pdf)]
    assert first == [real(page) for page in _pages(pdf)]
    assert "Grade GOLD" in first[0] and "SHA-256 abc" in first[1]
    # Pages 1 and 3 are the same objects (one shared font): one extraction, then a hit.
    assert (cache.extractions, cache.hits) == (2, 1)
    # The same pages from another reader (as another verification reads them): all hits.
    assert [cache(page) for page in _pages(pdf)] == first
    assert (cache.extractions, cache.hits) == (2, 4)

    # Another text on the page is read again, and gives the new text.
    changed = _pages(_pdf([b"Grade SILVER"]))[0]
    assert cache(changed) == real(changed) and "SILVER" in cache(changed)
    assert cache.extractions == 3
    # The same content in another encoding (what the codes map to) is another page too.
    encoded = _pages(_pdf([b"Grade GOLD"], encoding="/MacRomanEncoding"))[0]
    assert page_key(encoded) != page_key(_pages(pdf)[0])
    # So is a different page size (an inherited or own /MediaBox: the layout the text is in).
    page = _pages(pdf)[0]
    key = page_key(page)
    page[NameObject("/MediaBox")] = ArrayObject([NumberObject(0)] * 2 + [NumberObject(300)] * 2)
    assert page_key(page) != key


def test_arguments_and_a_disabled_cache_read_for_real() -> None:
    calls: list[tuple[object, ...]] = []

    def extract(page: pypdf.PageObject, *args: object, **kwargs: object) -> str:
        calls.append(args + tuple(kwargs.items()))
        return "text"

    cache = TextCache(extract=extract)
    cache.enabled = True
    page = _pages(_pdf([b"x"]))[0]
    assert cache(page, extraction_mode="layout") == "text"
    assert cache(page, extraction_mode="layout") == "text"
    assert len(calls) == 2 and cache.hits == 0
    cache.enabled = False
    cache(page)
    cache(page)
    assert len(calls) == 4 and cache.hits == 0
