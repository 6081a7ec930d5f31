"""certgen's object-stream index (certgen/support/objstreams.py, issue 43): pyHanko with it
reads every object of signed and forged files as pyHanko without it does, errors
included; verify's readers have it."""

from __future__ import annotations

import io
from pathlib import Path

import objstmcache
import pytest
from conftest import CliBuild
from forgekit40 import variants
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.reader import PdfFileReader

from certgen.support.objstreams import pdf_reader, read_from_object_stream


def _text(obj: object) -> str:
    """An object as PDF syntax (its type too): comparable across two readers."""
    out = io.BytesIO()
    obj.write_to_stream(out, None)  # type: ignore[attr-defined]
    return f"{type(obj).__name__} {out.getvalue()!r}"


def _every_object(pdf: bytes, strict: bool) -> list[str]:
    """Every seventh object number up to the trailer's /Size and the last, as this reader reads
    it (or its error): pyHanko's own reading costs a header's parse per object, so all of
    them for every file would cost minutes."""
    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=strict)
    except Exception as exc:  # a forged file pyHanko refuses to open (strict): before any object
        return [f"{type(exc).__name__}: {exc}"]
    out = []
    size = int(reader.trailer_view["/Size"])
    for number in [*range(1, size, 7), size - 1]:
        try:
            out.append(_text(reader.get_object(generic.Reference(number, 0, reader))))
        except Exception as exc:
            out.append(f"{type(exc).__name__}: {exc}")
    return out


def test_every_object_of_signed_and_forged_files_reads_as_pyhanko_reads_it(
        signed_gold: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = (signed_gold / "certificate.en.pdf").read_bytes()
    # the signed file and the forgeries that put objects in a new object stream
    files = {"signed": pdf, **{name: data for name, data in variants(pdf).items()
                                if "objstm" in name or "stream" in name}}
    assert len(files) >= 5, sorted(files)
    original = objstmcache.restore_target()
    for name, data in files.items():
        for strict in (False, True):
            with monkeypatch.context() as mp:  # whatever CERTGEN_TEST_OBJSTM_CACHE says
                mp.setattr(PdfFileReader, "_get_object_from_stream",
                           read_from_object_stream)
                indexed = _every_object(data, strict)
            with monkeypatch.context() as mp:
                mp.setattr(PdfFileReader, "_get_object_from_stream", original)
                theirs = _every_object(data, strict)
            assert indexed == theirs, (name, strict)


def test_a_header_cut_short_fails_where_pyhanko_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object stream whose header says 3 objects but holds 2 pairs and then garbage."""
    original = objstmcache.restore_target()
    body = b"1 0 2 4 x y "
    objects = b"<<>> [1 2] "
    stream = generic.StreamObject({generic.NameObject("/Type"): generic.NameObject("/ObjStm"),
                                   generic.NameObject("/N"): generic.NumberObject(3),
                                   generic.NameObject("/First"): generic.NumberObject(len(body))},
                                  stream_data=body + objects)
    for strict in (False, True):
        outcomes = []
        for function in (read_from_object_stream, original):
            reader = PdfFileReader(io.BytesIO(_pdf_with(stream)), strict=strict)
            got = []
            for idnum, idx in ((1, 0), (2, 1), (7, 2)):
                try:
                    got.append(_text(function(reader, idnum, 5, idx)))
                except Exception as exc:
                    got.append(f"{type(exc).__name__}: {exc}")
            outcomes.append(got)
        assert outcomes[0] == outcomes[1], strict


def _pdf_with(stream: generic.StreamObject) -> bytes:
    """A one-page PDF whose object 5 is `stream` (uncompressed)."""
    from pyhanko.pdf_utils.writer import PdfFileWriter

    writer = PdfFileWriter()
    while writer._lastobj_id < 4:  # a fixed object number for the stream
        writer.add_object(generic.NullObject())
    ref = writer.add_object(stream)
    assert ref.idnum == 5, ref
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_verify_reads_with_the_index_and_each_header_once(
        gold_build: CliBuild, monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's readers are certgen's, not only the suite's patched pyHanko: with pyHanko's own
    reading put back, verify still reads an object stream through the index; and a reader
    parses each object stream's header once, however many of its objects are read."""
    import certgen.support.objstreams as objstreams
    from certgen.verify.verdict import verify_pdf

    monkeypatch.setattr(PdfFileReader, "_get_object_from_stream", objstmcache.restore_target())
    asked: list[bool] = []  # one per object read from a stream: whether its header was parsed
    header = objstreams._header

    def counted(reader: PdfFileReader, stream: object, count: int) -> object:
        asked.append(id(stream) not in reader.__dict__.get(objstreams._HEADERS, {}))
        return header(reader, stream, count)

    monkeypatch.setattr(objstreams, "_header", counted)
    # WeasyPrint's file, as built: its objects are in object streams (a plain signature's
    # update rewrites them outside; a timestamped file keeps them, tests/test_sign_tsa.py)
    pdf = (gold_build.folder / "certificate.en.pdf").read_bytes()
    verify_pdf(pdf)
    assert asked, "verify read no object stream through certgen's reader"
    asked.clear()
    reader = pdf_reader(pdf)
    objects = int(reader.trailer_view["/Size"])
    for number in range(1, objects):
        reader.get_object(generic.Reference(number, 0, reader))
    kept = reader.__dict__[objstreams._HEADERS]
    assert objects > 100 and 1 <= len(kept) < objstreams.KEPT
    assert sum(asked) == len(kept) < len(asked)  # each header parsed once, read many times
