"""Where things are drawn on the pages of a tagged PDF, read from the PDF itself (pypdf).

What the page-fill test (tests/test_page_fill.py) measures, kept apart so it can be checked on
PDFs built for the purpose. Everything is read from the file, nothing from certgen's CSS:

- Each page's content stream is interpreted just far enough to know where every text run
  (Tj/TJ/'/") and every painted path or XObject lies vertically, and inside which marked
  content it is drawn (BDC … EMC).
- A run's marked-content id (MCID) leads through the structure tree's ParentTree to its
  structure element (P, TD, TH, H2, …) and that element's ancestors. What is drawn outside any
  MCID, or inside /Artifact (backgrounds, borders, running headers, page numbers), is not
  content here: only what a screen reader would read counts.
- A text run's vertical extent is its baseline minus 0.25 em to plus 0.9 em (about DejaVu
  Sans' descender and cap height): enough to say which line is lower, not a glyph's ink.

Coordinates are points from the top of the page, downwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from pypdf import PdfReader
from pypdf.generic import IndirectObject

HEADINGS = frozenset({"H", "H1", "H2", "H3", "H4", "H5", "H6"})

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _mul(m: Matrix, n: Matrix) -> Matrix:
    """m then n (PDF row-vector convention: a point p maps to p·m·n)."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + b * c2, a * b2 + b * d2, c * a2 + d * c2, c * b2 + d * d2,
            e * a2 + f * c2 + e2, e * b2 + f * d2 + f2)


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return (a * x + c * y + e, b * x + d * y + f)


@dataclass(frozen=True)
class Mark:
    """One thing drawn on a page: a text run or a painted shape, and whose content it is."""

    top: float
    bottom: float
    text: bool
    roles: tuple[str, ...]
    """Structure types from the element that owns the MCID up to the root, ("P", "Sect", …);
    empty for artifacts and for what is drawn outside marked content."""
    baseline: float | None = None
    elements: tuple[Any, ...] = ()
    """The same elements' identities (object numbers), to tell two rows or tables apart."""

    @property
    def content(self) -> bool:
        return bool(self.roles)

    @property
    def heading(self) -> bool:
        return any(r in HEADINGS for r in self.roles)

    @property
    def header_cell(self) -> bool:
        return "TH" in self.roles


@dataclass(frozen=True)
class Page:
    number: int
    """1-based."""
    height: float
    marks: tuple[Mark, ...]

    @property
    def content(self) -> tuple[Mark, ...]:
        return tuple(m for m in self.marks if m.content)


def _role_map(reader: PdfReader) -> dict[str, str]:
    root = reader.trailer["/Root"]["/StructTreeRoot"].get_object()
    roles = root.get("/RoleMap")
    return {str(k)[1:]: str(v)[1:] for k, v in roles.get_object().items()} if roles else {}


def _number_tree(node: Any, out: dict[int, Any]) -> None:
    node = node.get_object()
    nums = node.get("/Nums")
    if nums is not None:
        for i in range(0, len(nums), 2):
            out[int(nums[i])] = nums[i + 1]
    for kid in node.get("/Kids", []):
        _number_tree(kid, out)


def _key(ref: Any) -> Any:
    return (ref.idnum, ref.generation) if isinstance(ref, IndirectObject) else id(ref)


def _roles(element: Any, role_map: dict[str, str]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The structure types from `element` up to the root; () when the element hangs from a
    branch the tree does not link (WeasyPrint tags the @page margin boxes, running headers and
    page numbers, that way: their elements name a parent that does not list them)."""
    out, keys = [], []
    for _ in range(64):
        node = element.get_object()
        kind = node.get("/S")
        if kind is None or node.get("/Type") == "/StructTreeRoot":
            break
        name = str(kind)[1:]
        out.append(role_map.get(name, name))
        keys.append(_key(element))
        parent = node.get("/P")
        if parent is None:
            break
        kids = parent.get_object().get("/K")
        kids = kids if isinstance(kids, list) else [kids]
        if _key(element) not in {_key(k) for k in kids if isinstance(k, IndirectObject)}:
            if parent.get_object().get("/Type") != "/StructTreeRoot":
                return (), ()
        element = parent
    return tuple(out), tuple(keys)


_OPEN_TEXT = {b"Tj", b"TJ", b"'", b'"'}
_PAINT = {b"S", b"s", b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"}
_TOKEN = re.compile(
    rb"(?P<ws>[\s]+)|(?P<comment>%[^\r\n]*)|(?P<dopen><<)|(?P<dclose>>>)|(?P<hex><[^>]*>)|"
    rb"(?P<aopen>\[)|(?P<aclose>\])|(?P<name>/[^\s/\[\]()<>{}%]*)|"
    rb"(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))|(?P<lit>\()|(?P<op>[A-Za-z'\"*][A-Za-z0-9*]*)")


def _literal_end(data: bytes, pos: int) -> int:
    """The index after the literal string that starts at data[pos] == '('."""
    depth, i = 0, pos
    while i < len(data):
        c = data[i]
        if c == 0x5C:  # backslash: the next byte is escaped
            i += 2
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


class _Marker:
    def __init__(self, kind: str) -> None:
        self.kind = kind


def operations(data: bytes) -> Iterator[tuple[list[Any], bytes]]:
    """(operands, operator) of a content stream. Numbers become floats, names str ("/MCID"),
    strings bytes, arrays lists, dictionaries dicts. A tokenizer of its own: pypdf's
    ContentStream builds an object per token and took a minute over the sample site."""
    operands: list[Any] = []
    pos, size = 0, len(data)
    while pos < size:
        m = _TOKEN.match(data, pos)
        if m is None:
            pos += 1  # a byte no token starts with: skip it
            continue
        kind = m.lastgroup
        if kind == "lit":
            end = _literal_end(data, pos)
            operands.append(data[pos + 1:end - 1])
            pos = end
            continue
        pos = m.end()
        text = m.group()
        if kind in ("ws", "comment"):
            continue
        if kind == "num":
            operands.append(float(text))
        elif kind == "name":
            operands.append(text.decode("latin-1"))
        elif kind == "hex":
            operands.append(text)
        elif kind in ("aopen", "dopen"):
            operands.append(_Marker(kind))
        elif kind in ("aclose", "dclose"):
            opener = "aopen" if kind == "aclose" else "dopen"
            i = len(operands) - 1
            while i >= 0 and not (isinstance(operands[i], _Marker) and operands[i].kind == opener):
                i -= 1
            items = operands[i + 1:]
            del operands[max(i, 0):]
            operands.append(items if kind == "aclose" else dict(zip(items[::2], items[1::2])))
        elif text == b"BI":  # an inline image: skip its data up to EI
            end = data.find(b"EI", data.find(b"ID", pos))
            pos = size if end < 0 else end + 2
            operands = []
        else:
            yield operands, text
            operands = []


def read_pages(path: Path) -> list[Page]:
    """Every page of a tagged PDF with what is drawn on it (see the module docstring)."""
    reader = PdfReader(str(path))
    role_map = _role_map(reader)
    parents: dict[int, Any] = {}
    struct_root = reader.trailer["/Root"]["/StructTreeRoot"].get_object()
    if "/ParentTree" in struct_root:
        _number_tree(struct_root["/ParentTree"], parents)
    cache: dict[Any, tuple[tuple[str, ...], tuple[Any, ...]]] = {}
    pages = []
    for number, page in enumerate(reader.pages, start=1):
        height = float(page.mediabox.height)
        index = page.get("/StructParents")
        owners = parents.get(int(index)) if index is not None else None
        owners = owners.get_object() if owners is not None else []

        def roles_of(mcid: int | None, owners: Any = owners
                     ) -> tuple[tuple[str, ...], tuple[Any, ...]]:
            if mcid is None or mcid >= len(owners):
                return (), ()
            ref = owners[mcid]
            key = _key(ref)
            if key not in cache:
                cache[key] = _roles(ref, role_map)
            return cache[key]

        resources = page.get("/Resources")
        contents = page.get_contents()
        data = contents.get_data() if contents is not None else b""
        pages.append(Page(number, height, tuple(_interpret(data, resources, roles_of, height))))
    return pages


def _interpret(data: bytes, resources: Any, roles_of: Any, height: float) -> list[Mark]:
    ctm = _IDENTITY
    stack: list[Matrix] = []
    tm = tlm = _IDENTITY
    leading = 0.0
    size = 0.0
    tags: list[tuple[bool, int | None]] = []  # (artifact, mcid) per open marked content
    path_points: list[tuple[float, float]] = []
    marks: list[Mark] = []
    resources = resources.get_object() if resources is not None else {}
    xobjects = resources.get("/XObject")
    xobjects = xobjects.get_object() if xobjects is not None else {}
    properties = resources.get("/Properties")
    properties = properties.get_object() if properties is not None else {}

    def owner() -> tuple[tuple[str, ...], tuple[Any, ...]]:
        if any(artifact for artifact, _ in tags):
            return (), ()
        mcid = next((m for _, m in reversed(tags) if m is not None), None)
        return roles_of(mcid)

    def add_box(points: list[tuple[float, float]], text: bool,
                baseline: float | None = None) -> None:
        ys = [height - y for _, y in points]
        roles, elements = owner()
        marks.append(Mark(min(ys), max(ys), text, roles, baseline, elements))

    for operands, op in operations(data):
        if op == b"q":
            stack.append(ctm)
        elif op == b"Q":
            ctm = stack.pop() if stack else _IDENTITY
        elif op == b"cm":
            ctm = _mul(tuple(operands), ctm)  # type: ignore[arg-type]
        elif op == b"BT":
            tm = tlm = _IDENTITY
        elif op == b"Tm":
            tm = tlm = tuple(operands)  # type: ignore[assignment]
        elif op in (b"Td", b"TD"):
            tx, ty = operands
            if op == b"TD":
                leading = -ty
            tm = tlm = _mul((1, 0, 0, 1, tx, ty), tlm)
        elif op == b"TL":
            leading = operands[0]
        elif op == b"T*":
            tm = tlm = _mul((1, 0, 0, 1, 0, -leading), tlm)
        elif op == b"Tf":
            size = operands[1]
        elif op in _OPEN_TEXT:
            if op in (b"'", b'"'):
                tm = tlm = _mul((1, 0, 0, 1, 0, -leading), tlm)
            full = _mul(tm, ctm)
            points = [_apply(full, 0, -0.25 * size), _apply(full, 0, 0.9 * size)]
            add_box(points, True, height - _apply(full, 0, 0)[1])
        elif op == b"re":
            x, y, w, h = operands
            path_points += [_apply(ctm, x, y), _apply(ctm, x + w, y + h)]
        elif op in (b"m", b"l", b"c", b"v", b"y"):
            path_points += [_apply(ctm, operands[i], operands[i + 1])
                            for i in range(0, len(operands) - 1, 2)]
        elif op in _PAINT:
            if path_points:
                add_box(path_points, False)
            path_points = []
        elif op == b"n":
            path_points = []
        elif op == b"Do":
            xobject = xobjects.get(operands[0])
            xobject = xobject.get_object() if xobject is not None else None
            if xobject is not None and xobject.get("/Subtype") == "/Form":
                x0, y0, x1, y1 = (float(v) for v in xobject["/BBox"])
                m = tuple(float(v) for v in xobject.get("/Matrix", _IDENTITY))
                full = _mul(m, ctm)  # type: ignore[arg-type]
                add_box([_apply(full, x0, y0), _apply(full, x1, y1)], False)
            else:
                add_box([_apply(ctm, 0, 0), _apply(ctm, 1, 1)], False)
        elif op in (b"BMC", b"BDC"):
            tag = operands[0] if operands else ""
            mcid = None
            if op == b"BDC" and len(operands) > 1:
                props = operands[1]
                if isinstance(props, str):
                    named = properties.get(props)
                    props = {str(k): v for k, v in named.get_object().items()} if named else {}
                if isinstance(props, dict) and "/MCID" in props:
                    mcid = int(props["/MCID"])
            tags.append((tag == "/Artifact", mcid))
        elif op == b"EMC":
            if tags:
                tags.pop()
    return marks


# --------------------------------------------------------------------------- the measures


@dataclass(frozen=True)
class Band:
    """The part of the page a document's content occupies: from the highest top to the lowest
    bottom of its content over all of its pages (so the margins are what the document itself
    leaves empty, whatever its stylesheet says)."""

    top: float
    bottom: float

    @property
    def height(self) -> float:
        return self.bottom - self.top


def content_band(pages: list[Page]) -> Band:
    """From the highest content top of the document to as far above the page's bottom edge
    (the bottom margin taken as equal to the top one), or to the lowest content bottom if a
    page reaches further down."""
    marks = [m for p in pages for m in p.content]
    top = min(m.top for m in marks)
    return Band(top, max(max(p.height for p in pages) - top, max(m.bottom for m in marks)))


def fill(page: Page, band: Band) -> float:
    """How far down the page its content reaches, as a share of the document's content band:
    (lowest content bottom − band top) / band height. An empty page is 0."""
    content = page.content
    if not content:
        return 0.0
    return max(0.0, (max(m.bottom for m in content) - band.top) / band.height)


def _lines(marks: list[Mark]) -> int:
    """Distinct text lines: baselines more than 2 pt apart (cells of one row are one line)."""
    baselines = sorted({round(m.baseline, 1) for m in marks if m.baseline is not None})
    count, last = 0, None
    for b in baselines:
        if last is None or b - last > 2.0:
            count += 1
        last = b
    return count


def stranded_headings(page: Page, *, lines: int = 2) -> list[str]:
    """Headings of `page` that are followed on it by fewer than `lines` lines of body text
    (text below the heading's last line that is not a heading or a table's header cell).

    Each heading is named by its structure type and where its first line is."""
    content = page.content
    out = []
    # A heading's runs: its lines (and the spans inside it), one after the other down the page.
    heading_runs = sorted((m for m in content if m.heading and m.text), key=lambda m: m.top)
    groups: list[list[Mark]] = []
    for m in heading_runs:
        if groups and m.top - max(x.bottom for x in groups[-1]) < 4.0 and \
                _kind(groups[-1][0]) == _kind(m):
            groups[-1].append(m)
        else:
            groups.append([m])
    for group in groups:
        bottom = max(m.bottom for m in group)
        below = [m for m in content
                 if not m.heading and not m.header_cell and m.top >= bottom - 1.0]
        figure = any("Figure" in m.roles for m in below)
        if not figure and _lines([m for m in below if m.text]) < lines:
            out.append(f"{_kind(group[0])} at {group[0].top:.0f} pt")
    return out


def _kind(m: Mark) -> str:
    return next(r for r in m.roles if r in HEADINGS)



def _rows(page: Page, outer: str, table: Any) -> int:
    """Lines of body text (outside THead) of one table or list on a page."""
    return _lines([m for m in page.content if table in m.elements and m.text
                   and "THead" not in m.roles[:m.elements.index(table)]])


def _innermost(mark: Mark, outer: str) -> Any:
    return next((e for r, e in zip(mark.roles, mark.elements) if r == outer), None)


def lone_rows(pages: list[Page]) -> list[str]:
    """Where a table or a list runs on from one page to the next (the last thing on a page and
    the first on the next are in a table, or in a list), each of the two pages holds at least
    two lines of its body (a row of one line alone is a widow or an orphan). WeasyPrint makes a new structure element for each
    page's part of a table, so the two parts are found by position, not by identity."""
    out = []
    for before, after in pairwise(pages):
        if not before.content or not after.content:
            continue
        last = max(before.content, key=lambda m: m.bottom)
        first = min(after.content, key=lambda m: m.top)
        for outer, kind in (("Table", "table"), ("L", "list")):
            a, b = _innermost(last, outer), _innermost(first, outer)
            if a is None or b is None:
                continue
            for page, table in ((before, a), (after, b)):
                if _rows(page, outer, table) < 2:
                    out.append(f"p{page.number}: a single line of the {kind} that runs from "
                               f"p{before.number} to p{after.number}")
    return out


def destinations(path: Path) -> dict[str, tuple[int, float]]:
    """The PDF's named destinations (WeasyPrint makes one per element id): name -> (page
    number, 1-based; the anchor's height above the page's bottom edge, in points)."""
    reader = PdfReader(path)
    out = {}
    for name, dest in reader.named_destinations.items():
        out[str(name)] = (reader.get_destination_page_number(dest) + 1, float(dest.top or 0.0))
    return out


def page_texts(path: Path) -> list[str]:
    """Each page's text as pypdf extracts it (for what a page says, not where)."""
    return [page.extract_text() or "" for page in PdfReader(path).pages]
