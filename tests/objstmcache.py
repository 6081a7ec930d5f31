"""The suite's object-stream index (issue 43) for the readers the tests make themselves.

certgen's verify reads PDFs with `certgen.support.objstreams.pdf_reader`: pyHanko's reader with
each object stream's header read once per reader. The tests also open many certificates with
pyHanko's own `PdfFileReader` (forgeries, checks of what a build wrote); `install()` gives
every `PdfFileReader` of the session certgen's same reading
(`certgen.support.objstreams.read_from_object_stream`). Nothing else of pyHanko changes.
CERTGEN_TEST_OBJSTM_CACHE=0 turns it off for a run. tests/test_objstm_cache.py compares it with
pyHanko's own on every object of signed, timestamped and forged files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pyhanko.pdf_utils.reader import PdfFileReader

from certgen.support.objstreams import read_from_object_stream

_ORIGINAL: Callable[..., Any] = PdfFileReader._get_object_from_stream
"""pyHanko's own function, as imported (before install())."""


def restore_target() -> Callable[..., Any]:
    """pyHanko's own `_get_object_from_stream` (what tests/test_objstm_cache.py compares with)."""
    return _ORIGINAL


def enabled() -> bool:
    return os.environ.get("CERTGEN_TEST_OBJSTM_CACHE", "1") != "0"


def install() -> Callable[..., Any]:
    """Put certgen's indexed reading in place of pyHanko's; returns what it replaced."""
    replaced: Callable[..., Any] = PdfFileReader._get_object_from_stream
    PdfFileReader._get_object_from_stream = read_from_object_stream  # type: ignore[method-assign]
    return replaced


def restore(replaced: Callable[..., Any]) -> None:
    PdfFileReader._get_object_from_stream = replaced  # type: ignore[method-assign]
