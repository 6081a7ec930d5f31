"""What a reader sees of a PDF: each page's text in reading order, the images it draws, its
annotations and any action or script, and how two such views differ."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import pypdf
    from pypdf.generic import DictionaryObject


@dataclass(frozen=True)
class Seen:
    """What a reader sees of a PDF: each page's text in reading order and the SHA-256 of each
    image it draws, and any action or script the file carries."""

    pages: tuple[tuple[str, tuple[str, ...]], ...]
    actions: tuple[str, ...]
    annotations: tuple[int, ...]


_ACTION_KEYS = ("/OpenAction", "/AA")


def seen_of(reader: pypdf.PdfReader) -> Seen:
    pages = []
    actions: list[str] = []
    annotations = []
    root = cast("DictionaryObject", reader.trailer["/Root"])
    for key in _ACTION_KEYS:
        if key in root:
            actions.append(f"the document's {key}")
    names = root.get("/Names")
    if names is not None and "/JavaScript" in names.get_object():
        actions.append("document-level JavaScript")
    for number, page in enumerate(reader.pages, start=1):
        text = page.extract_text() or ""
        images = tuple(hashlib.sha256(image.data).hexdigest() for image in page.images)
        pages.append((" ".join(text.split()), images))
        if "/AA" in page:
            actions.append(f"page {number}'s /AA")
        annots = page.get("/Annots")
        count = 0
        for annot in (annots.get_object() if annots is not None else []):
            annot = annot.get_object()
            count += 1
            action = annot.get("/A")
            kind = None if action is None else action.get_object().get("/S")
            if kind is not None and kind != "/URI":
                actions.append(f"a {kind} action on page {number}")
            if "/AA" in annot:
                actions.append(f"an annotation's /AA on page {number}")
        annotations.append(count)
    return Seen(tuple(pages), tuple(actions), tuple(annotations))


def seen_difference(signed: Seen, expected: Seen, *, signature_widgets: int) -> str | None:
    """What a reader would see differently from the record's own rendering (None: nothing)."""

    if signed.actions:
        return f"the file carries {signed.actions[0]}, which certgen never writes"
    if len(signed.pages) != len(expected.pages):
        return (f"the PDF has {len(signed.pages)} pages; the record's certificate has "
                f"{len(expected.pages)}")
    for number, ((text, images), (want_text, want_images)) in enumerate(
            zip(signed.pages, expected.pages), start=1):
        if text != want_text:
            a, b = text.split(), want_text.split()
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False
                                                              ).get_opcodes():
                if op != "equal":
                    shown = " ".join(a[i1:i2][:6]) or "nothing"
                    wanted = " ".join(b[j1:j2][:6]) or "nothing"
                    return (f"page {number} prints {shown!r} where the record's certificate "
                            f"prints {wanted!r}")
        if images != want_images:
            return (f"page {number} draws {len(images)} image(s) that are not the "
                    f"{len(want_images)} of the record's certificate")
    extra = sum(signed.annotations) - sum(expected.annotations) - signature_widgets
    if extra:
        return f"the file has {extra} annotation(s) more than the record's certificate"
    return None
