"""The suite's object-stream index (issue 43): pyHanko reads each object stream's header once.

pyHanko's `PdfFileReader._get_object_from_stream` (pyhanko 0.x, pdf_utils/reader.py) parses an
object stream's header (its pairs of object number and offset) from the start on every object it
fetches from it. A WeasyPrint certificate keeps about 700 objects in one stream, and the
validation of a timestamped file walks every object of every revision many times
(`_load_reverse_xref_cache`), so verifying one such file cost about 3.5 s of CPU, nearly all of it
re-reading the same header (the suite verifies hundreds of them).

`install()` puts in its place the same function with the header's parse kept for the last
`KEPT` streams (by the stream object, which the reader keeps): the same loop over the same pairs
in the same order, the same object read from the same offset, the same errors (a header that
cannot be read fails at the same pair, as pyHanko does: a NullObject, or the strict error, or
the stream error raised again). Nothing else of pyHanko changes. CERTGEN_TEST_OBJSTM_CACHE=0
turns it off for a run. tests/test_objstm_cache.py compares it with pyHanko's own on every
object of signed, timestamped and forged files.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from io import BytesIO
from typing import Any

from pyhanko.pdf_utils import generic, misc
from pyhanko.pdf_utils.decode_limits import DecodePurpose
from pyhanko.pdf_utils.reader import PdfFileReader, PdfStrictReadError, logger

KEPT = 32
"""How many object streams' headers are kept (the newest), per process."""

_Header = tuple[Any, bytes, list[tuple[int, int]], BaseException | None]
"""(the stream object, its decoded data, the pairs read, the error that ended the reading)."""

_HEADERS: OrderedDict[int, _Header] = OrderedDict()


def _header(stream: generic.StreamObject, count: int) -> _Header:
    kept = _HEADERS.get(id(stream))
    if kept is not None and kept[0] is stream:
        _HEADERS.move_to_end(id(stream))
        return kept
    data = stream.read_data(DecodePurpose.OBJECT_STREAM)
    stream_data = BytesIO(data)
    pairs: list[tuple[int, int]] = []
    failure: BaseException | None = None
    for _ in range(count):  # pyHanko's own reading of the pairs, once
        try:
            misc.read_non_whitespace(stream_data, seek_back=True)
            objnum = generic.NumberObject.read_from_stream(stream_data)
            misc.read_non_whitespace(stream_data, seek_back=True)
            offset = generic.NumberObject.read_from_stream(stream_data)
            misc.read_non_whitespace(stream_data, seek_back=True)
        except Exception as exc:  # ValueError: pyHanko's "corrupted"; others it raised
            failure = exc
            break
        pairs.append((int(objnum), int(offset)))
    kept = (stream, data, pairs, failure)
    _HEADERS[id(stream)] = kept
    while len(_HEADERS) > KEPT:
        _HEADERS.popitem(last=False)
    return kept


def _get_object_from_stream(self: PdfFileReader, idnum: int, stmnum: int, idx: int) -> Any:
    stream_ref = generic.Reference(stmnum, 0, self)
    stream = stream_ref.get_object()
    assert isinstance(stream, generic.StreamObject)
    assert stream['/Type'] == '/ObjStm'
    if not (0 <= idx < stream['/N']):
        if self.strict:
            raise PdfStrictReadError("Object stream does not contain index")
        return generic.NullObject()
    _, data, pairs, failure = _header(stream, stream['/N'])
    first_object = stream['/First']
    for i in range(stream['/N']):
        if i >= len(pairs):  # where pyHanko's reading of the header stopped
            if isinstance(failure, ValueError):
                if self.strict:
                    raise PdfStrictReadError("Object stream header possibly corrupted")
                return generic.NullObject()
            assert failure is not None
            raise failure
        objnum, offset = pairs[i]
        if objnum != idnum:
            continue
        if self.strict and idx != i:
            raise PdfStrictReadError("Object is in wrong index.")
        stream_data = BytesIO(data)
        stream_data.seek(first_object + offset)
        try:
            obj = generic.read_object(stream_data, generic.Reference(idnum, 0, self))
        except (misc.PdfStreamError, misc.PdfReadError) as e:
            logger.warning(f"Invalid stream (index {i}) within object {idnum} 0: {e}")
            if self.strict:
                raise PdfStrictReadError(f"Can't read object stream: {e}")  # noqa: B904 (as pyHanko)
            obj = generic.NullObject()
        if isinstance(obj, (generic.StreamObject, generic.IndirectObject)):
            if self.strict:
                raise PdfStrictReadError("Encountered forbidden object type in object stream")
            return obj
        generic.read_non_whitespace(stream_data, seek_back=True, allow_eof=True)
        return obj
    if self.strict:
        raise PdfStrictReadError("Object not found in stream, this is a fatal error in strict mode")
    return generic.NullObject()


_ORIGINAL: Callable[..., Any] = PdfFileReader._get_object_from_stream
"""pyHanko's own function, as imported (before install())."""


def restore_target() -> Callable[..., Any]:
    """pyHanko's own `_get_object_from_stream` (what tests/test_objstm_cache.py compares with)."""
    return _ORIGINAL


def enabled() -> bool:
    return os.environ.get("CERTGEN_TEST_OBJSTM_CACHE", "1") != "0"


def install() -> Callable[..., Any]:
    """Put the indexed reading in place of pyHanko's; returns what it replaced."""
    replaced: Callable[..., Any] = PdfFileReader._get_object_from_stream
    PdfFileReader._get_object_from_stream = _get_object_from_stream  # type: ignore[method-assign]
    return replaced


def restore(replaced: Callable[..., Any]) -> None:
    PdfFileReader._get_object_from_stream = replaced  # type: ignore[method-assign]
    _HEADERS.clear()
