"""What readers draw (issue 40): the bytes after the signed revision must change nothing any
reader shows, whichever way it reads them.

- Two independent engines, PDFium (pypdfium2) and poppler (`pdftoppm`), render every page of the
  final file and of the signed revision: each engine's pages must be equal, pixel for pixel.
- Three parsers, pyHanko's, pypdf's and qpdf's (pikepdf), read the final file's page tree: the
  number of pages, each page's decoded content and its annotations (subtype, rectangle, link)
  must be the same for all three.

A disagreement names the engine or parser and the page. Only a file with bytes after its signed
revision (a timestamped one) is compared: a plainly signed file is one revision, byte for byte
certgen's render (the content check).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
from typing import TYPE_CHECKING, cast

from certgen.support.objstreams import pdf_reader
from certgen.verify.outcome import Said

if TYPE_CHECKING:
    from collections.abc import Callable

RENDER_DPI = 36
"""The resolution pages are compared at: a drawn glyph or stroke changes pixels at it; a
certificate's six pages render in about a second per engine."""
RENDER_TIMEOUT_S = 60
"""How long pdftoppm may take for one file (docs/limits.md)."""
MAX_PAGES = 100


def _pdfium_pages(pdf: bytes) -> list[bytes]:
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        if len(document) > MAX_PAGES:
            raise ValueError("too many pages")
        out = []
        for index in range(len(document)):
            page = document[index]
            bitmap = page.render(scale=RENDER_DPI / 72, may_draw_forms=True)
            out.append(bytes(bitmap.buffer))
        return out
    finally:
        document.close()


def _poppler_pages(pdf: bytes) -> list[bytes]:
    """Every page as pdftoppm draws it (binary PPMs, one after the other, on stdout)."""
    tool = shutil.which("pdftoppm")
    if tool is None:
        raise FileNotFoundError("pdftoppm")
    run = subprocess.run([tool, "-r", str(RENDER_DPI), "-l", str(MAX_PAGES), "-"], input=pdf,
                         capture_output=True, timeout=RENDER_TIMEOUT_S, check=False)
    if run.returncode != 0:
        raise ValueError(f"pdftoppm exit {run.returncode}")
    data, pages, pos = run.stdout, [], 0
    while pos < len(data):
        header = data[pos:pos + 64].split(b"\n", 3)
        if len(header) < 4 or header[0] != b"P6":
            raise ValueError("not a PPM stream")
        width, height = (int(x) for x in header[1].split())
        start = pos + len(header[0]) + len(header[1]) + len(header[2]) + 3
        end = start + width * height * 3
        pages.append(data[pos:end])
        pos = end
    return pages


ENGINES: dict[str, Callable[[bytes], list[bytes]]] = {
    "PDFium": _pdfium_pages, "poppler (pdftoppm)": _poppler_pages}


def _drawn_apart(pdf: bytes, expected: bytes,
                 count: Callable[[str, int, int], Said],
                 page: Callable[[str, int], Said]) -> Said | None:
    """Where an engine draws `pdf` otherwise than `expected`, worded by `count` (engine, pages
    drawn, pages expected) or `page` (engine, page number); an engine missing or failing is
    said as such. None: every engine draws every page alike."""
    for name, draw in ENGINES.items():
        try:
            theirs, ours = draw(pdf), draw(expected)
        except FileNotFoundError:
            return Said("what readers draw cannot be compared: %(engine)s is not installed "
                        "(Debian: poppler-utils)", engine=name)
        except Exception as exc:
            return Said("%(engine)s cannot draw the file (%(error)s)", engine=name,
                        error=type(exc).__name__)
        if len(theirs) != len(ours):
            return count(name, len(theirs), len(ours))
        for number, (a, b) in enumerate(zip(theirs, ours), start=1):
            if a != b:
                return page(name, number)
    return None


# --------------------------------------------------------------------------------------------
# The page tree as three parsers read it
# --------------------------------------------------------------------------------------------

Page = tuple[str, tuple[tuple[str, str, str], ...]]
"""(SHA-256 of the decoded content, ((subtype, rectangle, link) per annotation))."""


def _number_text(values: object) -> str:
    try:
        return " ".join(f"{float(v):g}" for v in cast("list[object]", values))  # type: ignore[arg-type]
    except Exception:
        return "?"


def _pypdf_pages(pdf: bytes) -> list[Page]:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(pdf))
    out = []
    for page in reader.pages:
        contents = page.get_contents()
        data = b"" if contents is None else contents.get_data()
        annots = []
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            action = annot.get("/A")
            uri = "" if action is None else str(action.get_object().get("/URI", ""))
            annots.append((str(annot.get("/Subtype")), _number_text(annot.get("/Rect", [])), uri))
        out.append((hashlib.sha256(data).hexdigest(), tuple(annots)))
    return out


def _pikepdf_pages(pdf: bytes) -> list[Page]:
    import pikepdf

    out = []
    with pikepdf.open(io.BytesIO(pdf)) as document:
        for page in document.pages:
            contents = page.obj.get("/Contents")
            if contents is None:
                data = b""
            elif isinstance(contents, pikepdf.Array):
                data = b"\n".join(bytes(c.read_bytes()) for c in contents)
            else:
                data = bytes(contents.read_bytes())
            annots = []
            for annot in page.obj.get("/Annots", []):
                action = annot.get("/A")
                uri = "" if action is None else str(action.get("/URI", ""))
                annots.append((str(annot.get("/Subtype")), _number_text(annot.get("/Rect", [])),
                               uri))
            out.append((hashlib.sha256(data).hexdigest(), tuple(annots)))
    return out


def _pyhanko_pages(pdf: bytes) -> list[Page]:
    from pyhanko.pdf_utils import generic

    reader = pdf_reader(pdf)
    out = []

    def leaves(node: generic.DictionaryObject) -> list[generic.DictionaryObject]:
        if node.get("/Type") == "/Page":
            return [node]
        found = []
        for kid in node.get("/Kids", []):
            found.extend(leaves(kid.get_object()))
        return found

    root = reader.root["/Pages"].get_object()
    for page in leaves(root)[:MAX_PAGES + 1]:
        contents = page.get("/Contents")
        contents = None if contents is None else contents.get_object()
        if contents is None:
            data = b""
        elif isinstance(contents, generic.ArrayObject):
            data = b"\n".join(c.get_object().data for c in contents)
        else:
            data = contents.data
        annots = []
        for ref in page.get("/Annots", []):
            annot = ref.get_object()
            action = annot.get("/A")
            uri = "" if action is None else str(action.get_object().get("/URI", ""))
            annots.append((str(annot.get("/Subtype")), _number_text(annot.get("/Rect", [])), uri))
        out.append((hashlib.sha256(data).hexdigest(), tuple(annots)))
    return out


PARSERS: dict[str, Callable[[bytes], list[Page]]] = {
    "pyHanko": _pyhanko_pages, "pypdf": _pypdf_pages, "qpdf (pikepdf)": _pikepdf_pages}

MAX_OUTLINE_ITEMS = 1000


def _catalog_view(root: object, resolve: Callable[[object], object]) -> tuple[object, ...]:
    """The catalog's keys, whether it opens with an action, and each top-level outline item's
    title and action (kind, target), from any of the three parsers (through `resolve`)."""
    catalog = cast("dict[str, object]", resolve(root))
    keys = tuple(sorted(str(k) for k in catalog.keys()))
    items: list[tuple[str, str, str]] = []
    outlines = catalog.get("/Outlines")
    node = None if outlines is None else cast("dict[str, object]", resolve(outlines)).get("/First")
    while node is not None and len(items) < MAX_OUTLINE_ITEMS:
        item = cast("dict[str, object]", resolve(node))
        action = item.get("/A")
        kind = target = ""
        if action is not None:
            act = cast("dict[str, object]", resolve(action))
            kind = str(act.get("/S", ""))
            target = str(act.get("/URI", act.get("/JS", "")))[:200]
        items.append((str(item.get("/Title", "")), kind, target))
        node = item.get("/Next")
    return keys, "/OpenAction" in catalog, tuple(items)


def _catalogs(pdf: bytes) -> dict[str, tuple[object, ...]]:
    import pikepdf
    import pypdf

    def get(value: object) -> object:
        return value.get_object() if hasattr(value, "get_object") else value

    out = {"pyHanko": _catalog_view(pdf_reader(pdf).root, get),
           "pypdf": _catalog_view(pypdf.PdfReader(io.BytesIO(pdf)).trailer["/Root"], get)}
    with pikepdf.open(io.BytesIO(pdf)) as document:
        out["qpdf (pikepdf)"] = _catalog_view(document.Root, lambda value: value)
    return out


def parsers_problem(pdf: bytes) -> str | None:
    """Where pyHanko, pypdf and qpdf read the file's pages differently, in English (None: they
    agree)."""
    said = parsers_said(pdf)
    return None if said is None else said.render()


def parsers_said(pdf: bytes) -> Said | None:
    """Where pyHanko, pypdf and qpdf read the file's pages differently (None: they agree)."""
    read: dict[str, list[Page]] = {}
    for name, parse in PARSERS.items():
        try:
            read[name] = parse(pdf)
        except Exception as exc:
            return Said("%(parser)s cannot read the file's pages (%(error)s)", parser=name,
                        error=type(exc).__name__)
    try:
        catalogs = _catalogs(pdf)
    except Exception as exc:
        return Said("a parser cannot read the file's catalog (%(error)s)",
                    error=type(exc).__name__)
    (first_parser, catalog), *rest = catalogs.items()
    for name, theirs_catalog in rest:
        if theirs_catalog != catalog:
            return Said("%(first)s and %(other)s read the catalog or the outline differently "
                        "(its entries, an opening action, an outline item's title or action)",
                        first=first_parser, other=name)
    (first, pages), *others = read.items()
    for name, theirs in others:
        if len(theirs) != len(pages):
            return Said("%(first)s reads %(count)s pages, %(other)s %(other_count)s",
                        first=first, count=len(pages), other=name, other_count=len(theirs))
        for number, (a, b) in enumerate(zip(pages, theirs), start=1):
            if a[0] != b[0]:
                return Said("%(first)s and %(other)s read page %(number)s's content "
                            "differently", first=first, other=name, number=number)
            if a[1] != b[1]:
                return Said("%(first)s and %(other)s read page %(number)s's annotations "
                            "differently", first=first, other=name, number=number)
    return None


def drawn_difference(pdf: bytes, expected: bytes) -> Said | None:
    """Where either engine draws `pdf` otherwise than `expected` (None: every page alike)."""
    return _drawn_apart(
        pdf, expected,
        lambda name, count, wanted: Said("%(engine)s draws %(count)s pages where this "
                                         "certgen's rendering has %(expected)s", engine=name,
                                         count=count, expected=wanted),
        lambda name, number: Said("%(engine)s draws page %(number)s otherwise than this "
                                  "certgen's rendering of the record", engine=name,
                                  number=number))


def drawn_problem(pdf: bytes, sig_end: int) -> str | None:
    """drawn_said in English."""
    said = drawn_said(pdf, sig_end)
    return None if said is None else said.render()


def drawn_said(pdf: bytes, sig_end: int) -> Said | None:
    """Why what readers draw of the file is not the signed revision's, or the parsers disagree
    (None: every engine draws the same pages and every parser reads the same page tree)."""
    if sig_end >= len(pdf):
        return None
    disagree = parsers_said(pdf)
    if disagree is not None:
        return Said("the PDF parsers disagree: %(problem)s", problem=disagree)
    return _drawn_apart(
        pdf, pdf[:sig_end],
        lambda name, count, signed: Said("%(engine)s draws %(count)s pages of the file and "
                                         "%(signed)s of the signed revision", engine=name,
                                         count=count, signed=signed),
        lambda name, number: Said("%(engine)s draws page %(number)s of the file otherwise than "
                                  "the signed revision's", engine=name, number=number))
