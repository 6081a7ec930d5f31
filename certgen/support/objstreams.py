"""pyHanko's PDF reader with each object stream's header read once per reader.

pyHanko 0.38's `PdfFileReader._get_object_from_stream` parses an object stream's header (its
pairs of object number and offset) from the start for every object it fetches from the stream.
A certificate keeps about 700 objects in one stream, and validating a timestamped file walks
every object of every revision several times (`_load_reverse_xref_cache`): verifying GOLD's
timestamped certificate spent more than half its time re-reading that one header
(bench/bench_verify.py measures it).

`pdf_reader` returns a reader whose `_get_object_from_stream` is `read_from_object_stream`:
pyHanko's own steps in pyHanko's order, with the parsed header kept on the reader for its
newest `KEPT` streams. The same object comes from the same offset, and a damaged header fails
at the same pair with the same error (pyHanko's NullObject, its strict error, or the stream's
own error raised again), including a header damaged after the pair asked for, which pyHanko
never reaches and neither does this. Nothing else of pyHanko changes.
tests/test_objstm_cache.py compares the two on every object of signed, timestamped and forged
files.
"""

from __future__ import annotations

import functools
import io
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyhanko.pdf_utils.reader import PdfFileReader

KEPT = 32
"""How many object streams' headers a reader keeps (the newest): a file of many streams is read
as pyHanko reads it, one header parse per stream at least."""

_HEADERS = "_certgen_object_stream_headers"
"""The reader's attribute that holds its kept headers."""

_Header = tuple[Any, bytes, list[tuple[int, int]], BaseException | None]
"""(the stream object, its decoded data, the pairs read, the error that ended the reading)."""


def _header(reader: PdfFileReader, stream: Any, count: int) -> _Header:
    from pyhanko.pdf_utils import generic, misc
    from pyhanko.pdf_utils.decode_limits import DecodePurpose

    kept: OrderedDict[int, _Header] = reader.__dict__.setdefault(_HEADERS, OrderedDict())
    known = kept.get(id(stream))
    if known is not None and known[0] is stream:  # the stream object itself, kept alive here
        kept.move_to_end(id(stream))
        return known
    data = stream.read_data(DecodePurpose.OBJECT_STREAM)
    stream_data = io.BytesIO(data)
    pairs: list[tuple[int, int]] = []
    failure: BaseException | None = None
    skip: Any = misc.read_non_whitespace  # pyHanko's own, untyped
    number: Any = generic.NumberObject.read_from_stream
    for _ in range(count):  # pyHanko's reading of the pairs, once
        try:
            skip(stream_data, seek_back=True)
            objnum = number(stream_data)
            skip(stream_data, seek_back=True)
            offset = number(stream_data)
            skip(stream_data, seek_back=True)
        except Exception as exc:  # ValueError is pyHanko's "corrupted"; any other it raised
            failure = exc
            break
        pairs.append((int(objnum), int(offset)))
    header = (stream, data, pairs, failure)
    kept[id(stream)] = header
    while len(kept) > KEPT:
        kept.popitem(last=False)
    return header


def read_from_object_stream(reader: PdfFileReader, idnum: int, stmnum: int, idx: int) -> Any:
    """Object `idnum` from object stream `stmnum` (at index `idx`), as pyHanko reads it."""
    from pyhanko.pdf_utils import generic, misc
    from pyhanko.pdf_utils.misc import PdfStrictReadError
    from pyhanko.pdf_utils.reader import logger

    stream = generic.Reference(stmnum, 0, reader).get_object()
    assert isinstance(stream, generic.StreamObject)
    assert stream["/Type"] == "/ObjStm"
    if not (0 <= idx < stream["/N"]):
        if reader.strict:
            raise PdfStrictReadError("Object stream does not contain index")
        return generic.NullObject()
    _, data, pairs, failure = _header(reader, stream, stream["/N"])
    first_object = stream["/First"]
    for i in range(stream["/N"]):
        if i >= len(pairs):  # where pyHanko's reading of the header stops
            if isinstance(failure, ValueError):
                if reader.strict:
                    raise PdfStrictReadError("Object stream header possibly corrupted")
                return generic.NullObject()
            assert failure is not None
            raise failure
        objnum, offset = pairs[i]
        if objnum != idnum:
            continue
        if reader.strict and idx != i:
            raise PdfStrictReadError("Object is in wrong index.")
        stream_data = io.BytesIO(data)
        stream_data.seek(first_object + offset)
        try:
            obj = generic.read_object(stream_data, generic.Reference(idnum, 0, reader))
        except (misc.PdfStreamError, misc.PdfReadError) as e:
            logger.warning(f"Invalid stream (index {i}) within object {idnum} 0: {e}")
            if reader.strict:
                raise PdfStrictReadError(f"Can't read object stream: {e}")  # noqa: B904 (as pyHanko)
            obj = generic.NullObject()
        if isinstance(obj, (generic.StreamObject, generic.IndirectObject)):
            if reader.strict:
                raise PdfStrictReadError("Encountered forbidden object type in object stream")
            return obj
        skip: Any = misc.read_non_whitespace  # pyHanko's own, untyped (generic re-exports it)
        skip(stream_data, seek_back=True, allow_eof=True)
        return obj
    if reader.strict:
        raise PdfStrictReadError("Object not found in stream, this is a fatal error in strict mode")
    return generic.NullObject()


@functools.cache
def _reader_class() -> type[PdfFileReader]:
    from pyhanko.pdf_utils.reader import PdfFileReader

    class IndexedReader(PdfFileReader):
        """pyHanko's reader, each object stream's header read once (this module)."""

        _get_object_from_stream = read_from_object_stream

    return IndexedReader


def pdf_reader(pdf: bytes, *, strict: bool = False) -> PdfFileReader:
    """pyHanko's reader over `pdf`, object streams' headers read once (see above)."""
    return _reader_class()(io.BytesIO(pdf), strict=strict)
