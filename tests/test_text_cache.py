"""The suite's text cache (tests/textcache.py, issue 43): a hit gives what pypdf extracts, and
a page that differs in anything the extraction reads is extracted again."""

from __future__ import annotations

import io

import pypdf
from conftest import CliBuild
from pypdf.generic import DecodedStreamObject, NameObject
from textcache import TextCache, page_key


def _pages(pdf: bytes) -> list[pypdf.PageObject]:
    return list(pypdf.PdfReader(io.BytesIO(pdf)).pages)


def test_a_hit_is_the_text_pypdf_extracts_and_a_changed_page_is_read_again(
        gold_build: CliBuild) -> None:
    assert gold_build.code == 0, gold_build.stderr
    pdf = (gold_build.folder / "certificate.en.pdf").read_bytes()
    real = TextCache()
    real.enabled = False  # the extraction itself (the suite's cache is installed around it)
    cache = TextCache(extract=real)
    first = [cache(page) for page in _pages(pdf)]
    assert first == [real(page) for page in _pages(pdf)]
    assert (cache.extractions, cache.hits) == (len(first), 0)
    # The same pages from another reader (as another verification reads them): every one a hit.
    assert [cache(page) for page in _pages(pdf)] == first
    assert cache.hits == len(first)
    # Two pages of one file share fonts but not content: two keys.
    assert len({page_key(page) for page in _pages(pdf)}) == len(first)

    # A page whose content stream says more is read again, and gives the new text.
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(pdf))
    page = writer.pages[0]
    contents = page.get_contents()
    assert contents is not None
    stream = DecodedStreamObject()
    stream.set_data(contents.get_data() + b"\nq Q\n")
    page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    changed = _pages(out.getvalue())[0]
    assert page_key(changed) != page_key(_pages(pdf)[0])
    extractions = cache.extractions
    assert cache(changed) == real(changed)
    assert cache.extractions == extractions + 1

    # A changed font (what the glyphs map to) is a different page too, with the same content.
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(pdf))
    fonts = writer.pages[0]["/Resources"]["/Font"]
    font = fonts[next(iter(fonts))].get_object()
    font[NameObject("/ToUnicode")] = writer._add_object(DecodedStreamObject())
    out = io.BytesIO()
    writer.write(out)
    assert page_key(_pages(out.getvalue())[0]) != page_key(_pages(pdf)[0])


def test_arguments_and_a_disabled_cache_read_for_real(gold_build: CliBuild) -> None:
    pdf = (gold_build.folder / "certificate.en.pdf").read_bytes()
    calls: list[tuple[object, ...]] = []

    def extract(page: pypdf.PageObject, *args: object, **kwargs: object) -> str:
        calls.append(args + tuple(kwargs.items()))
        return "text"

    cache = TextCache(extract=extract)
    page = _pages(pdf)[1]
    assert cache(page, extraction_mode="layout") == "text"
    assert cache(page, extraction_mode="layout") == "text"
    assert len(calls) == 2 and cache.hits == 0
    cache.enabled = False
    cache(page)
    cache(page)
    assert len(calls) == 4 and cache.hits == 0
