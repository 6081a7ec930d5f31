"""What a reader sees of a PDF: each page's text in reading order, the images it draws, its
annotations and any action or script, and how two such views differ."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from certgen.verify.outcome import Said

if TYPE_CHECKING:
    import pypdf
    from pypdf.generic import DictionaryObject


@dataclass(frozen=True)
class Seen:
    """What a reader sees of a PDF: each page's text in reading order and the SHA-256 of each
    image it draws, and any action or script the file carries."""

    pages: tuple[tuple[str, tuple[str, ...]], ...]
    actions: tuple[Said | str, ...]
    annotations: tuple[int, ...]


_ACTION_KEYS = ("/OpenAction", "/AA")


def seen_of(reader: pypdf.PdfReader) -> Seen:
    pages = []
    actions: list[Said | str] = []
    annotations = []
    root = cast("DictionaryObject", reader.trailer["/Root"])
    for key in _ACTION_KEYS:
        if key in root:
            actions.append(Said("the document's %(key)s", key=key))
    names = root.get("/Names")
    if names is not None and "/JavaScript" in names.get_object():
        actions.append(Said("document-level JavaScript"))
    for number, page in enumerate(reader.pages, start=1):
        text = page.extract_text() or ""
        images = tuple(hashlib.sha256(image.data).hexdigest() for image in page.images)
        pages.append((" ".join(text.split()), images))
        if "/AA" in page:
            actions.append(Said("page %(number)s's /AA", number=number))
        annots = page.get("/Annots")
        count = 0
        for annot in (annots.get_object() if annots is not None else []):
            annot = annot.get_object()
            count += 1
            action = annot.get("/A")
            kind = None if action is None else action.get_object().get("/S")
            if kind is not None and kind != "/URI":
                actions.append(Said("a %(kind)s action on page %(number)s", kind=str(kind),
                                        number=number))
            if "/AA" in annot:
                actions.append(Said("an annotation's /AA on page %(number)s", number=number))
        annotations.append(count)
    return Seen(tuple(pages), tuple(actions), tuple(annotations))


def seen_difference(signed: Seen, expected: Seen, *, signature_widgets: int) -> str | None:
    """What a reader would see differently from the record's own rendering, in English (None:
    nothing); `seen_said` gives it as a message."""
    said = seen_said(signed, expected, signature_widgets=signature_widgets)
    return None if said is None else said.render()


def seen_said(signed: Seen, expected: Seen, *, signature_widgets: int) -> Said | None:
    """What a reader would see differently from the record's own rendering (None: nothing)."""

    if signed.actions:
        action = signed.actions[0]
        return Said("the file carries %(action)s, which certgen never writes",
                    action=action)
    if len(signed.pages) != len(expected.pages):
        return Said("the PDF has %(count)s pages; the record's certificate has %(expected)s",
                    count=len(signed.pages), expected=len(expected.pages))
    for number, ((text, images), (want_text, want_images)) in enumerate(
            zip(signed.pages, expected.pages), start=1):
        if text != want_text:
            a, b = text.split(), want_text.split()
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False
                                                              ).get_opcodes():
                if op != "equal":
                    nothing = Said("'nothing'")  # as repr() quotes the words
                    shown = repr(" ".join(a[i1:i2][:6])) if a[i1:i2] else nothing
                    wanted = repr(" ".join(b[j1:j2][:6])) if b[j1:j2] else nothing
                    return Said("page %(number)s prints %(shown)s where the record's "
                                "certificate prints %(wanted)s", number=number, shown=shown,
                                wanted=wanted)
        if images != want_images:
            return Said("page %(number)s draws %(count)s image(s) that are not the %(expected)s "
                        "of the record's certificate", number=number, count=len(images),
                        expected=len(want_images))
    extra = sum(signed.annotations) - sum(expected.annotations) - signature_widgets
    if extra:
        return Said("the file has %(count)s annotation(s) more than the record's certificate",
                    count=extra)
    return None
