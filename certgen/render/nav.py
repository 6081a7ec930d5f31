"""The navigation every HTML page shows on screen (templates/nav.html.j2).

One shape for certificates, reports, explainers and the site index, so a new kind of page only
builds a `DocNav`: where home is (the site index, when the page is part of a site), the same
document in each built language, and the files published beside it (PDF, CSV, record.json).
Every href is relative to the page, so the site works from a folder and from any base URL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from certgen.render.i18n import LANGUAGE_NAMES

FILE_TYPES = {"pdf": "application/pdf", "csv": "text/csv", "json": "application/json"}


@dataclass(frozen=True)
class NavLanguage:
    """The document in one language: its code, its name in that language, its href."""

    lang: str
    name: str
    href: str


@dataclass(frozen=True)
class NavFile:
    """A file that belongs to the document (label as shown, e.g. "PDF" or "record.json")."""

    label: str
    href: str
    type: str


@dataclass(frozen=True)
class DocNav:
    """What the navigation shows; empty parts are left out."""

    home: str | None = None
    languages: tuple[NavLanguage, ...] = ()
    files: tuple[NavFile, ...] = field(default_factory=tuple)


def nav_file(label: str, href: str) -> NavFile:
    """A file link, its MIME type taken from the href's extension."""
    ext = href.rsplit(".", 1)[-1].lower()
    return NavFile(label, href, FILE_TYPES.get(ext, "application/octet-stream"))


def doc_nav(*, home: str | None, languages: Iterable[tuple[str, str]] = (),
            files: Iterable[tuple[str, str]] = ()) -> DocNav:
    """A DocNav from (lang, href) and (label, href) pairs. A single language is no switcher."""

    langs = tuple(NavLanguage(lang, LANGUAGE_NAMES[lang], href) for lang, href in languages)
    return DocNav(home=home, languages=langs if len(langs) > 1 else (),
                  files=tuple(nav_file(label, href) for label, href in files))
