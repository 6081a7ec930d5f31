"""The suite's text cache (issue 43): pypdf's text extraction of each distinct page once per
worker.

`certgen verify` reads a signed certificate's printed text with pypdf (`extract_text`, every
page), and so does the content check of another stack's file. That parse is most of a
verification's cost (about 1.8 s of CPU for GOLD's ten pages), and the suite verifies the same
pages again and again: every re-signing of the same render (another key, another signing time,
an appended revision) changes the file's bytes but not one page.

So within a worker, `PageObject.extract_text()` called without arguments (as certgen calls it)
is kept by the SHA-256 of everything the page is made of: the page's dictionary and every
object it reaches (content streams, fonts and their programs, ToUnicode maps, XObjects,
annotations), decoded stream data included, and the inheritable attributes of its parents.
pypdf's extraction is a function of those objects only, so a page that differs in anything the
extraction could read is extracted again; a hit returns the same string.

What stays a real extraction:
- a call with any argument (a mode, a visitor, orientations);
- a page whose objects cannot be walked (a broken or hostile file: the real call, and its
  error, as before), or whose object graph is larger than `MAX_OBJECTS`;
- an extraction that raised (never kept);
- the whole run with CERTGEN_TEST_TEXT_CACHE=0.

`tests/test_text_cache.py` checks it: a hit gives the uncached text, a changed page is
extracted again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from pypdf import PageObject
from pypdf.generic import (
    ArrayObject,
    DictionaryObject,
    IndirectObject,
    StreamObject,
)

MAX_OBJECTS = 5000
"""A page reaching more objects than this is extracted for real (a hostile file's graph)."""

INHERITABLE = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")
"""What a page takes from its /Parent when it does not say it itself (PDF 32000, 7.7.3.4)."""


class _TooBig(Exception):
    pass


def page_key(page: PageObject) -> str:
    """SHA-256 of the page's own object graph (without /Parent, with the parents' inheritable
    attributes the page lacks), stream data decoded as pypdf reads it."""
    digest = hashlib.sha256()
    seen: dict[int, int] = {}  # id of a resolved object -> its number in this walk
    count = 0

    def walk(value: Any) -> None:
        nonlocal count
        if isinstance(value, IndirectObject):
            value = value.get_object()
        if isinstance(value, (DictionaryObject, ArrayObject)):
            number = seen.get(id(value))
            if number is not None:  # a shared object (a font on every page): once, then a ref
                digest.update(b"R%d;" % number)
                return
            count += 1
            if count > MAX_OBJECTS:
                raise _TooBig
            seen[id(value)] = count
        if isinstance(value, DictionaryObject):
            digest.update(b"<<")
            for key in sorted(value.keys()):
                if key == "/Parent":
                    continue
                digest.update(key.encode("utf-8", "surrogatepass") + b" ")
                walk(value.get(key))
            if isinstance(value, StreamObject):
                data = value.get_data()
                digest.update(b"stream%d:" % len(data))
                digest.update(data)
            digest.update(b">>")
        elif isinstance(value, ArrayObject):
            digest.update(b"[")
            for item in value:
                walk(item)
            digest.update(b"]")
        else:
            digest.update(type(value).__name__.encode() + b":" + repr(value).encode(
                "utf-8", "surrogatepass") + b";")

    walk(page)
    parent = page.get("/Parent")
    seen_parents = 0
    while parent is not None and seen_parents < 64:
        node = parent.get_object()
        for key in INHERITABLE:
            if key not in page and key in node:
                digest.update(b"inherited" + key.encode() + b" ")
                walk(node[key])
        parent = node.get("/Parent")
        seen_parents += 1
    return digest.hexdigest()


class TextCache:
    """A stand-in for `PageObject.extract_text` that extracts each distinct page once."""

    def __init__(self, extract: Callable[..., str] = PageObject.extract_text) -> None:
        self.extract = extract
        self.enabled = os.environ.get("CERTGEN_TEST_TEXT_CACHE", "1") != "0"
        self.texts: dict[str, str] = {}
        self.hits = 0
        self.extractions = 0

    def __call__(self, page: PageObject, *args: Any, **kwargs: Any) -> str:
        if not self.enabled or args or kwargs:
            return self.extract(page, *args, **kwargs)
        try:
            key = page_key(page)
        except Exception:  # a page pypdf cannot walk: the real call says what it says
            return self.extract(page)
        if key in self.texts:
            self.hits += 1
            return self.texts[key]
        text = self.extract(page)
        self.extractions += 1
        self.texts[key] = text
        return text

    def install(self) -> Callable[..., str]:
        """Put the cache in place of `PageObject.extract_text`; returns what it replaced."""
        replaced = PageObject.extract_text
        cache = self

        def extract_text(page: PageObject, *args: Any, **kwargs: Any) -> str:
            return cache(page, *args, **kwargs)

        extract_text.__doc__ = replaced.__doc__
        PageObject.extract_text = extract_text  # type: ignore[method-assign]
        return replaced


def restore(replaced: Callable[..., str]) -> None:
    PageObject.extract_text = replaced  # type: ignore[method-assign]

