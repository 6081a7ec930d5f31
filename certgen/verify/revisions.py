"""Nothing after the signature but certgen's own long-term validation bytes (issue 40).

A timestamped certificate is the signed revision followed by the revisions pyHanko appends for
PAdES B-LTA: validation data (the document security store, /DSS) and document timestamps. Readers
disagree on what a loosely written update means (a classic xref table listing an object twice, a
copy of the file's own `startxref … %%EOF` before a short xref without one), so the bytes after
the signed revision are read here by a strict reader of certgen's own, not by a tolerant one:

- each revision is a run of `N 0 obj … endobj` objects, then one cross-reference section (a
  classic table with its trailer, or a cross-reference stream, never both), then `startxref`
  pointing at that section and `%%EOF`; one end of line after it, and nothing after the last;
- the section lists exactly the revision's objects, each once, at its offset (object 0 free);
  no object stream; the trailer keeps the signed /Root, /Info and the first /ID, /Prev points
  at the previous section;
- an object of an earlier revision may be restated only where a DSS or a document timestamp
  changes it, compared key by key: the catalog (/DSS, the ESIC extension), the AcroForm's
  /Fields (the new timestamp fields appended), a page's /Annots (their widgets appended), the
  document information's /ModDate, the XMP packet's modification dates, an earlier /DSS;
- a new object is the DSS, a VRI dictionary, a certificate, CRL or OCSP stream the DSS lists, a
  document timestamp's field (an invisible widget) or its /DocTimeStamp dictionary, or the
  revision's cross-reference stream; each is referred to where pyHanko puts it (no orphan);
- every revision adds validation data or a document timestamp.

Anything else is named: the revision (counted from the signed one) and the object.
"""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from certgen.verify.outcome import Said, verbatim

if TYPE_CHECKING:
    from pypdf import PdfReader

MAX_DEPTH = 32
"""The deepest nesting of arrays and dictionaries read (pyHanko writes three or four)."""
MAX_REVISIONS = 64
"""The most revisions after the signed one (certgen writes two or three per timestamp)."""


class Refused(Exception):
    """The bytes after the signed revision are not certgen's own (the message says why)."""

    def __init__(self, said: Said) -> None:
        super().__init__(said.render())
        self.said = said


# --------------------------------------------------------------------------------------------
# PDF syntax, strictly
# --------------------------------------------------------------------------------------------


class Name(str):
    """A PDF name, without its slash (strings are bytes, so the two never compare equal)."""

    __slots__ = ()


@dataclass(frozen=True)
class Ref:
    """An indirect reference `N G R`."""

    number: int
    generation: int


@dataclass(frozen=True)
class Stream:
    """A stream object: its dictionary and its raw (still encoded) data."""

    dictionary: dict[Name, object]
    data: bytes

    def decoded(self) -> bytes:
        """The data, inflated when /Filter is /FlateDecode (the only filter pyHanko writes)."""
        filters = self.dictionary.get(Name("Filter"))
        if filters is None or filters == []:
            return self.data
        if filters in (Name("FlateDecode"), [Name("FlateDecode")]) \
                and Name("DecodeParms") not in self.dictionary:
            try:
                return zlib.decompressobj().decompress(self.data, 64 << 20)
            except zlib.error:
                raise Refused(Said("a stream's data cannot be inflated")) from None
        raise Refused(Said("a stream with the filter %(filters)s, which certgen never writes after"
                           " signing", filters=repr(filters)))


_WHITE = b"\x00\t\n\x0c\r "
_DELIMITERS = b"()<>[]{}/%"
_REGULAR_END = re.compile(rb"[\x00\t\n\x0c\r ()<>\[\]{}/%]")
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)")
_INT = re.compile(rb"\d+")
_OBJ = re.compile(rb"(\d+) (\d+) obj")
_REF_TAIL = re.compile(rb"[\x00\t\n\x0c\r ]+(\d+)[\x00\t\n\x0c\r ]+R(?=[\x00\t\n\x0c\r ()<>\[\]{}/%]|$)")


class Lexer:
    """Reads PDF objects from `data`, at `pos`; refuses what it does not know."""

    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos

    def skip_space(self) -> None:
        data, pos = self.data, self.pos
        while pos < len(data) and data[pos] in _WHITE:
            pos += 1
        if pos < len(data) and data[pos] == ord("%"):
            raise Refused(Said("a comment at byte %(pos)s, which certgen never writes after "
                               "signing", pos=pos))
        self.pos = pos

    def expect(self, word: bytes) -> None:
        self.skip_space()
        if not self.data.startswith(word, self.pos):
            raise Refused(Said("expected %(word)s at byte %(pos)s", word=repr(word.decode()),
                               pos=self.pos))
        self.pos += len(word)

    def value(self, depth: int = 0) -> object:
        if depth > MAX_DEPTH:
            raise Refused(Said("objects nested more than %(max_depth)s deep", max_depth=MAX_DEPTH))
        self.skip_space()
        data, pos = self.data, self.pos
        if pos >= len(data):
            raise Refused(Said("the file ends inside an object"))
        head = data[pos]
        if data.startswith(b"<<", pos):
            self.pos += 2
            out: dict[Name, object] = {}
            while True:
                self.skip_space()
                if self.data.startswith(b">>", self.pos):
                    self.pos += 2
                    return out
                key = self.value(depth + 1)
                if not isinstance(key, Name):
                    raise Refused(Said("a dictionary key that is not a name at byte %(pos)s",
                                       pos=self.pos))
                if key in out:
                    raise Refused(Said("the key /%(key)s twice in one dictionary at byte %(pos)s",
                                       key=key, pos=self.pos))
                out[key] = self.value(depth + 1)
        if head == ord("["):
            self.pos += 1
            items: list[object] = []
            while True:
                self.skip_space()
                if self.data.startswith(b"]", self.pos):
                    self.pos += 1
                    return items
                items.append(self.value(depth + 1))
        if head == ord("/"):
            end = _REGULAR_END.search(data, pos + 1)
            stop = len(data) if end is None else end.start()
            raw = data[pos + 1:stop]
            self.pos = stop
            try:
                text = re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]),
                              raw).decode("utf-8")
            except UnicodeDecodeError:
                raise Refused(Said("a name that is not UTF-8 at byte %(pos)s", pos=pos)) from None
            return Name(text)
        if head == ord("("):
            return self._literal()
        if head == ord("<"):
            close = data.find(b">", pos)
            if close < 0:
                raise Refused(Said("an unterminated hex string at byte %(pos)s", pos=pos))
            digits = bytes(b for b in data[pos + 1:close] if b not in _WHITE)
            self.pos = close + 1
            try:
                return bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode("ascii"))
            except ValueError:
                raise Refused(Said("a hex string with other characters at byte %(pos)s", pos=pos)) from None
        for word, meaning in ((b"true", True), (b"false", False), (b"null", None)):
            if data.startswith(word, pos) and (pos + len(word) == len(data)
                                               or data[pos + len(word)] in _WHITE + _DELIMITERS):
                self.pos = pos + len(word)
                return meaning
        number = _NUMBER.match(data, pos)
        if number is None:
            raise Refused(Said("an unknown token at byte %(pos)s", pos=pos))
        self.pos = number.end()
        token = number.group()
        if b"." in token:
            return float(token)
        # `N G R`: a reference; lookahead without consuming when it is not one.
        after = _REF_TAIL.match(data, self.pos)
        if after is not None and token.isdigit():
            self.pos = after.end()
            return Ref(int(token), int(after.group(1)))
        return int(token)

    def _literal(self) -> bytes:
        data, pos = self.data, self.pos + 1
        out = bytearray()
        depth = 1
        while pos < len(data):
            byte = data[pos]
            if byte == ord("\\"):
                pos += 1
                if pos >= len(data):
                    break
                escaped = data[pos]
                simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("f"): 12,
                          ord("("): 40, ord(")"): 41, ord("\\"): 92}
                if escaped in simple:
                    out.append(simple[escaped])
                    pos += 1
                elif 0x30 <= escaped <= 0x37:
                    digits = re.match(rb"[0-7]{1,3}", data[pos:pos + 3])
                    assert digits is not None
                    out.append(int(digits.group(), 8) & 0xFF)
                    pos += len(digits.group())
                elif escaped in b"\r\n":  # a line continuation
                    pos += 2 if data[pos:pos + 2] == b"\r\n" else 1
                else:
                    out.append(escaped)
                    pos += 1
                continue
            if byte == ord("("):
                depth += 1
            elif byte == ord(")"):
                depth -= 1
                if depth == 0:
                    self.pos = pos + 1
                    return bytes(out)
            out.append(byte)
            pos += 1
        raise Refused(Said("an unterminated string at byte %(pos)s", pos=self.pos))


def read_object(data: bytes, pos: int) -> tuple[int, object, int]:
    """(object number, value, the offset after `endobj`) of the object `N 0 obj` at `pos`."""
    match = _OBJ.match(data, pos)
    if match is None:
        raise Refused(Said("expected an object at byte %(pos)s", pos=pos))
    number, generation = int(match.group(1)), int(match.group(2))
    if generation != 0:
        raise Refused(Said("object %(number)s has generation %(generation)s; certgen writes 0",
                           number=number, generation=generation))
    lexer = Lexer(data, match.end())
    value = lexer.value()
    lexer.skip_space()
    if data.startswith(b"stream", lexer.pos):
        if not isinstance(value, dict):
            raise Refused(Said("object %(number)s: a stream without a dictionary", number=number))
        start = lexer.pos + len(b"stream")
        if data.startswith(b"\r\n", start):
            start += 2
        elif data.startswith(b"\n", start):
            start += 1
        else:
            raise Refused(Said("object %(number)s: `stream` is not followed by an end of line",
                               number=number))
        length = value.get(Name("Length"))
        if not isinstance(length, int) or isinstance(length, bool) or length < 0 \
                or start + length > len(data):
            raise Refused(Said("object %(number)s: its stream's /Length is not a direct length "
                               "within the file", number=number))
        lexer.pos = start + length
        lexer.expect(b"endstream")
        value = Stream(value, data[start:start + length])
    lexer.expect(b"endobj")
    return number, value, lexer.pos


# --------------------------------------------------------------------------------------------
# Revisions and their cross-reference sections
# --------------------------------------------------------------------------------------------


@dataclass
class Revision:
    """One revision after the signed one, as read."""

    number: int
    """1 for the first revision after the signed one."""
    start: int
    end: int
    objects: dict[int, object] = field(default_factory=dict)
    offsets: dict[int, int] = field(default_factory=dict)
    trailer: dict[Name, object] = field(default_factory=dict)
    xref_at: int = 0
    xref_number: int | None = None
    """The object number of its cross-reference stream (None: a classic table)."""

    def where(self) -> Said:
        return Said("revision %(number)s after the signed one (bytes %(start)s–%(end)s)",
                    number=self.number, start=self.start, end=self.end)


_EOL = re.compile(rb"\r\n|\n|\r")
_TABLE_ENTRY = re.compile(rb"(\d{10}) (\d{5}) ([nf])(?: \r| \n|\r\n)")
_SUBSECTION = re.compile(rb"(\d+) (\d+)[\x00\t\x0c\r\n ]*")
_TAIL = re.compile(rb"[\x00\t\x0c\r\n ]*startxref(?:\r\n|\n|\r)(\d+)(?:\r\n|\n|\r)%%EOF")


def _entries_of_table(data: bytes, pos: int, where: Said
                      ) -> tuple[list[tuple[int, int, int, str]], int]:
    """(number, offset, generation, n|f) per entry of the table at `pos` (after `xref`), and
    the offset of `trailer`."""
    entries: list[tuple[int, int, int, str]] = []
    while True:
        while pos < len(data) and data[pos] in _WHITE:
            pos += 1
        if data.startswith(b"trailer", pos):
            return entries, pos
        head = _SUBSECTION.match(data, pos)
        if head is None:
            raise Refused(Said("%(where)s: its xref table cannot be read at byte %(pos)s",
                               where=where, pos=pos))
        first, count = int(head.group(1)), int(head.group(2))
        pos = head.end()
        for index in range(count):
            entry = _TABLE_ENTRY.match(data, pos)
            if entry is None:
                raise Refused(Said("%(where)s: xref entry %(number)s is not 20 bytes as the "
                                   "standard writes it", where=where, number=first + index))
            entries.append((first + index, int(entry.group(1)), int(entry.group(2)),
                            entry.group(3).decode()))
            pos = entry.end()


def _entries_of_stream(xref: Stream, where: Said) -> list[tuple[int, int, int, str]]:
    """(number, offset, generation, n|f) per entry of a cross-reference stream; an entry in an
    object stream (type 2) is refused."""
    widths = xref.dictionary.get(Name("W"))
    size = xref.dictionary.get(Name("Size"))
    if not (isinstance(widths, list) and len(widths) == 3
            and all(isinstance(w, int) and 0 <= w <= 8 for w in widths)) \
            or not isinstance(size, int):
        raise Refused(Said("%(where)s: its cross-reference stream has no readable /W and /Size",
                           where=where))
    index = xref.dictionary.get(Name("Index"), [0, size])
    if not (isinstance(index, list) and len(index) % 2 == 0
            and all(isinstance(i, int) and i >= 0 for i in index)):
        raise Refused(Said("%(where)s: its cross-reference stream's /Index cannot be read",
                           where=where))
    w0, w1, w2 = cast("list[int]", widths)
    row = w0 + w1 + w2
    data = xref.decoded()
    entries = []
    pos = 0
    for first, count in zip(index[0::2], index[1::2]):
        for number in range(first, first + count):
            if pos + row > len(data):
                raise Refused(Said("%(where)s: its cross-reference stream is shorter than its "
                                   "/Index", where=where))
            kind = int.from_bytes(data[pos:pos + w0], "big") if w0 else 1
            a = int.from_bytes(data[pos + w0:pos + w0 + w1], "big")
            b = int.from_bytes(data[pos + w0 + w1:pos + row], "big")
            pos += row
            if kind == 2:
                raise Refused(Said("%(where)s: object %(number)s is in an object stream (object "
                                   "%(stream)s); certgen writes none after signing", where=where,
                                   number=number, stream=a))
            if kind not in (0, 1):
                raise Refused(Said("%(where)s: object %(number)s has an xref entry of type "
                                   "%(kind)s", where=where, number=number, kind=kind))
            entries.append((number, a, b, "n" if kind == 1 else "f"))
    if pos != len(data):
        raise Refused(Said("%(where)s: its cross-reference stream holds more than its /Index lists",
                           where=where))
    return entries


def read_revisions(pdf: bytes, start: int) -> list[Revision]:
    """The revisions from `start` (the end of the signed revision) to the end of the file, read
    strictly (see the module doc); Refused names the revision and what is wrong."""

    revisions: list[Revision] = []
    eol = _EOL.match(pdf, start)  # the signed range may end before its %%EOF's end of line
    pos = start if eol is None or pdf[start - 1:start] in (b"\n", b"\r") else eol.end()
    while pos < len(pdf):
        if len(revisions) >= MAX_REVISIONS:
            raise Refused(Said("more than %(max_revisions)s revisions follow the signed one",
                               max_revisions=MAX_REVISIONS))
        rev = Revision(len(revisions) + 1, pos, pos)
        where = Said("revision %(number)s after the signed one (from byte %(pos)s)",
                     number=rev.number, pos=pos)
        xref_stream: Stream | None = None
        while True:
            if pdf.startswith(b"xref", pos):
                break
            if pdf.startswith(b"startxref", pos) or pdf.startswith(b"trailer", pos):
                raise Refused(Said("%(where)s: `%(value)s` at byte %(pos)s without a "
                                   "cross-reference section before it", where=where,
                                   value='startxref' if pdf[pos] == ord('s') else 'trailer',
                                   pos=pos))
            try:
                number, value, after = read_object(pdf, pos)
            except Refused as exc:
                raise Refused(Said("%(where)s: %(reason)s", where=where, reason=exc.said)) from None
            if number in rev.objects:
                raise Refused(Said("%(where)s: object %(number)s is defined twice", where=where,
                                   number=number))
            rev.objects[number] = value
            rev.offsets[number] = pos
            pos = after
            while pos < len(pdf) and pdf[pos] in _WHITE:
                pos += 1
            if isinstance(value, Stream) and value.dictionary.get(Name("Type")) == "XRef":
                xref_stream = value
                rev.xref_number = number
                rev.xref_at = rev.offsets[number]
                rev.trailer = value.dictionary
                break
        if xref_stream is None:
            rev.xref_at = pos
            entries, pos = _entries_of_table(pdf, pos + len(b"xref"), where)
            lexer = Lexer(pdf, pos + len(b"trailer"))
            trailer = lexer.value()
            if not isinstance(trailer, dict):
                raise Refused(Said("%(where)s: its trailer is not a dictionary", where=where))
            rev.trailer = trailer
            pos = lexer.pos
        else:
            entries = _entries_of_stream(xref_stream, where)
        tail = _TAIL.match(pdf, pos)
        if tail is None:
            raise Refused(Said("%(where)s: its cross-reference section is not followed by "
                               "`startxref`, its offset and `%%%%EOF`", where=where))
        if int(tail.group(1)) != rev.xref_at:
            raise Refused(Said("%(where)s: `startxref %(offset)s` does not point at its own "
                               "cross-reference section (byte %(xref_at)s)", where=where,
                               offset=int(tail.group(1)), xref_at=rev.xref_at))
        pos = tail.end()
        eol = _EOL.match(pdf, pos)
        pos = pos if eol is None else eol.end()
        rev.end = pos
        where = rev.where()
        listed: dict[int, tuple[int, int, str]] = {}
        for number, offset, generation, kind in entries:
            if number in listed:
                raise Refused(Said("%(where)s: its cross-reference section lists object %(number)s"
                                   " twice (readers disagree on which entry counts)", where=where,
                                   number=number))
            listed[number] = (offset, generation, kind)
        for number, (offset, generation, kind) in listed.items():
            if kind == "f":
                if number != 0:
                    raise Refused(Said("%(where)s: its cross-reference section frees object "
                                       "%(number)s", where=where, number=number))
                continue
            if rev.offsets.get(number) != offset or generation != 0:
                raise Refused(Said("%(where)s: its cross-reference section points object "
                                   "%(number)s at byte %(offset)s, where this revision does not "
                                   "define it", where=where, number=number, offset=offset))
        missing = sorted(set(rev.objects) - set(listed))
        if missing:
            raise Refused(Said("%(where)s: object %(missing)s is defined but not in its "
                               "cross-reference section", where=where, missing=missing[0]))
        if not rev.objects:
            raise Refused(Said("%(where)s: it defines no object", where=where))
        revisions.append(rev)
    return revisions


# --------------------------------------------------------------------------------------------
# What the revisions may say
# --------------------------------------------------------------------------------------------


def from_pypdf(value: object, depth: int = 0) -> object:
    """A value read by pypdf (from the signed revision) in this module's form."""
    from pypdf.generic import (
        ArrayObject,
        BooleanObject,
        DictionaryObject,
        FloatObject,
        IndirectObject,
        NameObject,
        NullObject,
        NumberObject,
        StreamObject,
    )

    if depth > MAX_DEPTH:
        raise Refused(Said("objects of the signed revision nested too deep"))
    if isinstance(value, IndirectObject):
        return Ref(value.idnum, value.generation)
    if isinstance(value, StreamObject):
        entries = {Name(str(k)[1:]): from_pypdf(v, depth + 1) for k, v in value.items()}
        return Stream(entries, bytes(value._data))
    if isinstance(value, DictionaryObject):
        return {Name(str(k)[1:]): from_pypdf(v, depth + 1) for k, v in value.items()}
    if isinstance(value, ArrayObject):
        return [from_pypdf(v, depth + 1) for v in value]
    if isinstance(value, NameObject):
        return Name(str(value)[1:])
    if isinstance(value, BooleanObject):
        return bool(value)
    if isinstance(value, NullObject) or value is None:
        return None
    if isinstance(value, FloatObject):
        return float(value)
    if isinstance(value, NumberObject):
        return int(value)
    original = getattr(value, "original_bytes", None)
    if isinstance(original, bytes):
        return original
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


def _same(a: object, b: object) -> bool:
    """Equal as PDF values (a number equal as a number, a real written another way included)."""
    if isinstance(a, int | float) and isinstance(b, int | float) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, Stream) and isinstance(b, Stream):
        return _same(a.dictionary, b.dictionary) and a.data == b.data
    return type(a) is type(b) and a == b


_XMP_DATES = re.compile(rb'\s*xmp:(?:ModifyDate|MetadataDate)="[^"]*"'
                        rb'|<xmp:(ModifyDate|MetadataDate)>[^<]*</xmp:\1>')
_ESIC = {Name("Type"): Name("DeveloperExtensions"), Name("BaseVersion"): Name("1.7"),
         Name("ExtensionLevel"): 1}
_FIELD_KEYS = {"FT", "T", "Type", "Subtype", "F", "Rect", "P", "TU", "V"}
_STAMP_KEYS = {"Type", "Filter", "SubFilter", "Contents", "ByteRange"}
_DSS_KEYS = {"Type", "Certs", "CRLs", "OCSPs", "VRI"}
_VRI_KEYS = {"Type", "Cert", "CRL", "OCSP", "TU", "TS"}
_DATA_KEYS = {"Length", "Filter"}
_TRAILER_KEYS = {"Size", "Root", "Info", "ID", "Prev"}
_XREF_KEYS = _TRAILER_KEYS | {"Type", "W", "Index", "Filter", "Length"}


def _refs(value: object) -> list[Ref]:
    return [v for v in value if isinstance(v, Ref)] if isinstance(value, list) else []


class _State:
    """The objects as of the revision being read: the signed revision's (through pypdf) and
    those the revisions read so far define."""

    def __init__(self, signed: PdfReader, size: int) -> None:
        self.signed = signed
        self.size = size
        self.defined: dict[int, object] = {}
        self.dss: set[int] = set()
        """Object numbers of DSS dictionaries a revision after the signed one defined."""

    def get(self, number: int) -> object:
        if number in self.defined:
            return self.defined[number]
        try:
            return from_pypdf(self.signed.get_object(number))
        except Refused:
            raise
        except Exception:
            return None


def _key_problem(what: Said, old: dict[Name, object], new: dict[Name, object],
                 may_change: dict[str, object]) -> Said | None:
    """Which key of `new` differs from `old` beyond the ones `may_change` allows (a check per
    key: returns None when the change is allowed)."""
    for key in sorted(set(old) | set(new)):
        if key in may_change:
            continue
        if key not in new:
            return Said("%(what)s loses /%(key)s", what=what, key=key)
        if key not in old:
            return Said("%(what)s gains /%(key)s", what=what, key=key)
        if not _same(old[key], new[key]):
            return Said("%(what)s changes /%(key)s", what=what, key=key)
    return None


def _appended(old: object, new: object, allowed: set[int]) -> bool:
    """`new` is the array `old` with only references to `allowed` objects appended."""
    before = old if isinstance(old, list) else [] if old is None else None
    if before is None or not isinstance(new, list) or len(new) < len(before):
        return False
    if not _same(new[:len(before)], before):
        return False
    return all(isinstance(v, Ref) and v.number in allowed for v in new[len(before):])


def lta_revisions_problem(pdf: bytes, sig_end: int) -> str | None:
    """lta_revisions_said in English."""
    said = lta_revisions_said(pdf, sig_end)
    return None if said is None else said.render()


def lta_revisions_said(pdf: bytes, sig_end: int) -> Said | None:
    """Why the bytes after the signed revision (which ends at `sig_end`) are not certgen's own
    validation data and document timestamps (None: they are); see the module doc."""
    import pypdf

    try:
        signed = pypdf.PdfReader(io.BytesIO(pdf[:sig_end]))
        trailer: Any = signed.trailer  # pypdf's PdfObject: indexed as the standard lays it out
        root_ref = Ref(trailer.raw_get("/Root").idnum, 0)
        info_raw = trailer.raw_get("/Info") if "/Info" in trailer else None
        info_ref = None if info_raw is None else Ref(info_raw.idnum, 0)
        first_id = from_pypdf(trailer["/ID"][0]) if "/ID" in trailer else None
        size = int(trailer["/Size"])
        prev_xref = int(re.findall(rb"startxref\s+(\d+)", pdf[:sig_end])[-1])
    except Exception as exc:
        return Said("the signed revision's trailer cannot be read (%(error)s)",
                    error=type(exc).__name__)
    try:
        revisions = read_revisions(pdf, sig_end)
        state = _State(signed, size)
        signed_root = state.get(root_ref.number)
        if not isinstance(signed_root, dict):
            return Said("the signed revision's catalog cannot be read")
        for rev in revisions:
            _check_revision(rev, state, root_ref, info_ref, first_id, prev_xref,
                            cast("dict[Name, object]", signed_root))
            prev_xref = rev.xref_at
    except Refused as exc:
        return exc.said
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        # A shape the reader did not foresee is a refusal too, never a traceback.
        return Said("the revisions after the signed one cannot be read (%(error)s)",
                    error=type(exc).__name__)
    return None


def _check_revision(rev: Revision, state: _State, root_ref: Ref, info_ref: Ref | None,
                    first_id: object, prev_xref: int,
                    signed_root: dict[Name, object]) -> None:
    where = rev.where()
    trailer = rev.trailer
    allowed = _XREF_KEYS if rev.xref_number is not None else _TRAILER_KEYS
    extra = sorted(set(trailer) - allowed)
    if extra:
        raise Refused(Said("%(where)s: its trailer has /%(extra)s, which certgen never writes",
                           where=where, extra=extra[0]))
    if trailer.get(Name("Root")) != root_ref:
        raise Refused(Said("%(where)s: its trailer names another catalog than the signed "
                           "revision's", where=where))
    if trailer.get(Name("Info")) != info_ref:
        raise Refused(Said("%(where)s: its trailer names other document information", where=where))
    ids = trailer.get(Name("ID"))
    if first_id is not None and not (isinstance(ids, list) and len(ids) == 2
                                     and _same(ids[0], first_id)):
        raise Refused(Said("%(where)s: its trailer changes the document's /ID", where=where))
    if trailer.get(Name("Prev")) != prev_xref:
        raise Refused(Said("%(where)s: its trailer's /Prev does not point at the previous "
                           "revision's cross-reference section", where=where))
    size = trailer.get(Name("Size"))
    top = max(rev.objects) + 1
    if not isinstance(size, int) or size != max(top, state.size):
        raise Refused(Said("%(where)s: its trailer's /Size %(size)s is not %(expected)s", where=where,
                           size=str(size), expected=max(top, state.size)))

    new = {n for n in rev.objects if n >= state.size and n != rev.xref_number}
    # What the new objects are, and where they must be referred to from.
    dss_new = {n for n in new if _is(rev.objects[n], "DSS", _DSS_KEYS, type_optional=True)}
    stamps = {n for n in new if _is(rev.objects[n], "DocTimeStamp", _STAMP_KEYS)}
    fields = {n for n in new if _is_stamp_field(rev.objects[n], stamps)}
    vri = {n for n in new if _is(rev.objects[n], "VRI", _VRI_KEYS, type_optional=True)}
    data = {n for n in new if isinstance(rev.objects[n], Stream)
            and set(cast("Stream", rev.objects[n]).dictionary) <= _DATA_KEYS}
    other = sorted(new - dss_new - stamps - fields - vri - data)
    if other:
        raise Refused(Said("%(where)s: object %(other)s (%(kind)s) is neither validation data nor"
                           " a document timestamp", where=where, other=other[0],
                           kind=_kind(rev.objects[other[0]])))
    referred: set[int] = set()
    changed_dss = False

    for number in sorted(set(rev.objects) - new - {rev.xref_number}):
        if number < state.size:
            old = state.get(number)
        else:  # a number at or above the previous /Size that is not new: cannot happen
            old = None
        value = rev.objects[number]
        what = Said("%(where)s: object %(number)s", where=where, number=number)
        if number == root_ref.number:
            if not isinstance(value, dict) or not isinstance(old, dict):
                raise Refused(Said("%(what)s (the catalog) is not a dictionary", what=what))
            problem = _key_problem(Said("%(what)s (the catalog)", what=what), old, value,
                                   {"DSS": None, "Extensions": None})
            if problem:
                raise Refused(problem)
            extensions_old = old.get(Name("Extensions"), {})
            extensions_new = value.get(Name("Extensions"), {})
            if not (isinstance(extensions_old, dict) and isinstance(extensions_new, dict)) \
                    or _key_problem(Said("%(what)s (the catalog's /Extensions)", what=what), extensions_old,
                                    extensions_new, {"ESIC": None}) \
                    or not (_same(extensions_new.get(Name("ESIC")), extensions_old.get(Name("ESIC")))
                            or _same(extensions_new.get(Name("ESIC")), _ESIC)):
                raise Refused(Said("%(what)s (the catalog): its /Extensions are not the signed "
                                   "ones with PAdES's ESIC entry", what=what))
            dss = value.get(Name("DSS"))
            if dss != old.get(Name("DSS")):
                if not isinstance(dss, Ref) or dss.number not in dss_new | state.dss:
                    raise Refused(Said("%(what)s (the catalog): its /DSS is not a validation data "
                                       "store of a revision after the signed one", what=what))
                changed_dss = True
            if isinstance(dss, Ref):
                referred.add(dss.number)
        elif number in state.dss:
            if not _is(value, "DSS", _DSS_KEYS, type_optional=True):
                raise Refused(Said("%(what)s restates the validation data store as something else",
                                   what=what))
            changed_dss = True
            dss_new.add(number)
        elif isinstance(old, dict) and _acroform_of(signed_root, state) == number:
            if not isinstance(value, dict):
                raise Refused(Said("%(what)s (the AcroForm) is not a dictionary", what=what))
            problem = _key_problem(Said("%(what)s (the AcroForm)", what=what), old, value, {"Fields": None})
            if problem:
                raise Refused(problem)
            if not _appended(old.get(Name("Fields")), value.get(Name("Fields")), fields):
                raise Refused(Said("%(what)s (the AcroForm): its /Fields are not the signed ones "
                                   "with this revision's document timestamp fields appended",
                                   what=what))
            referred.update(r.number for r in _refs(value.get(Name("Fields"))))
        elif isinstance(old, dict) and old.get(Name("Type")) == "Page":
            if not isinstance(value, dict):
                raise Refused(Said("%(what)s (a page) is not a dictionary", what=what))
            problem = _key_problem(Said("%(what)s (a page)", what=what), old, value, {"Annots": None})
            if problem:
                raise Refused(problem)
            if not _appended(old.get(Name("Annots")), value.get(Name("Annots")), fields):
                raise Refused(Said("%(what)s (a page): its /Annots are not the signed ones with "
                                   "this revision's document timestamp widgets appended (an "
                                   "annotation was added or restated)", what=what))
            referred.update(r.number for r in _refs(value.get(Name("Annots")))
                            if r.number in fields)
        elif info_ref is not None and number == info_ref.number:
            if not isinstance(value, dict) or not isinstance(old, dict):
                raise Refused(Said("%(what)s (the document information) is not a dictionary",
                                   what=what))
            problem = _key_problem(Said("%(what)s (the document information)", what=what), old, value,
                                   {"ModDate": None})
            if problem:
                raise Refused(Said("%(problem)s (readers show it)", problem=problem))
        elif isinstance(old, Stream) and old.dictionary.get(Name("Type")) == "Metadata" \
                and signed_root.get(Name("Metadata")) == Ref(number, 0):
            if not isinstance(value, Stream):
                raise Refused(Said("%(what)s (the XMP metadata) is not a stream", what=what))
            problem = _key_problem(Said("%(what)s (the XMP metadata)", what=what), old.dictionary,
                                   value.dictionary, {"Length": None})
            if problem or _XMP_DATES.sub(b"", old.decoded()) != _XMP_DATES.sub(b"",
                                                                               value.decoded()):
                raise Refused(Said("%(what)s: the XMP metadata is changed beyond its modification "
                                   "dates (readers show it)", what=what))
        else:
            raise Refused(Said("%(what)s (%(kind)s) of an earlier revision is redefined; only the"
                               " catalog, the AcroForm, a page's /Annots, the document "
                               "information's date, the XMP dates and the validation data store "
                               "may change after signing", what=what, kind=_kind(old)))

    # Every new object is referred to where pyHanko puts it.
    for number in dss_new:
        store = rev.objects.get(number)
        if isinstance(store, dict):
            for key in ("Certs", "CRLs", "OCSPs"):
                referred.update(r.number for r in _refs(store.get(Name(key))))
            table = store.get(Name("VRI"))
            if isinstance(table, dict):
                for entry in table.values():
                    if isinstance(entry, Ref):
                        referred.add(entry.number)
    for number in vri:
        entry = rev.objects[number]
        if isinstance(entry, dict):
            for key in ("Cert", "CRL", "OCSP"):
                referred.update(r.number for r in _refs(entry.get(Name(key))))
    for number in fields:
        stamp = cast("dict[Name, object]", rev.objects[number]).get(Name("V"))
        if isinstance(stamp, Ref):
            referred.add(stamp.number)
    orphans = sorted(new - referred)
    if orphans:
        raise Refused(Said("%(where)s: object %(orphans)s (%(kind)s) is referred to by nothing "
                           "certgen writes (an orphan object)", where=where, orphans=orphans[0],
                           kind=_kind(rev.objects[orphans[0]])))
    if not stamps and not changed_dss:
        raise Refused(Said("%(where)s: it adds neither validation data nor a document timestamp",
                           where=where))
    state.size = max(state.size, size)
    state.dss |= dss_new
    state.defined.update({n: v for n, v in rev.objects.items() if n != rev.xref_number})


def _acroform_of(root: dict[Name, object], state: _State) -> int | None:
    form = root.get(Name("AcroForm"))
    return form.number if isinstance(form, Ref) else None


def _is(value: object, kind: str, keys: set[str], *, type_optional: bool = False) -> bool:
    if not isinstance(value, dict) or not set(value) <= keys:
        return False
    stated = value.get(Name("Type"))
    return stated == kind or (type_optional and stated is None)


def _is_stamp_field(value: object, stamps: set[int]) -> bool:
    """A document timestamp's field: an invisible (zero-area) widget, no action, whose value is
    a /DocTimeStamp of this revision."""
    if not isinstance(value, dict) or not set(value) <= _FIELD_KEYS:
        return False
    rect = value.get(Name("Rect"))
    target = value.get(Name("V"))
    return (value.get(Name("FT")) == "Sig" and value.get(Name("Subtype")) == "Widget"
            and isinstance(rect, list) and len(rect) == 4
            and all(isinstance(x, int | float) and x == 0 for x in rect)
            and isinstance(target, Ref) and target.number in stamps)


def _kind(value: object) -> Said:
    """A few words on what an object is, for a refusal."""
    dictionary = value.dictionary if isinstance(value, Stream) else value
    if isinstance(dictionary, dict):
        for key in ("Type", "Subtype", "S", "FT"):
            stated = dictionary.get(Name(key))
            if isinstance(stated, Name):
                return verbatim(f"/{key} /{stated}")
        return Said("a stream") if isinstance(value, Stream) else Said("a dictionary")
    return verbatim(type(value).__name__) if value is not None else Said("nothing")
