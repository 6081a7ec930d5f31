"""The registry's pages in memory: one page per certificate and language (certgen.registry).

Layout of the registry root (the folder served at the laboratory's verification base):

    <id>/index.html            the page in the certificate's first language (what the QR opens)
    <id>/<lang>/index.html     the page in en, ru and pt (a language switcher links them)
    <id>/certificate.<lang>.pdf
    registry.css               templates/site.css and templates/registry.css
    index.json                 every entry (certgen.registry.registry_index)

Pure functions of the entries; every link is relative to the page that holds it. Card names,
laboratory text and revocation reasons reach the template as data only (autoescaped).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, cast

from certgen.registry import SOFTWARE_FOLDER, RegistryEntry, pdf_path
from certgen.render.certificate import local_text
from certgen.render.html import render_template
from certgen.render.i18n import LANGUAGE_NAMES, LANGUAGES
from certgen.render.nav import doc_nav
from certgen.render.site import rel
from certgen.support.paths import templates_dir

if TYPE_CHECKING:
    from certgen.registry import PublishedWheel

CSS_PATH = "registry.css"
"""The registry's one stylesheet, relative to the registry root."""


def page_path(certificate_id: str, lang: str | None = None) -> str:
    """A page's file, relative to the registry root (None: the default-language page)."""
    if lang is None:
        return f"{certificate_id}/index.html"
    return f"{certificate_id}/{lang}/index.html"


def default_language(entry: RegistryEntry) -> str:
    """The language of `<id>/index.html`: the certificate's first one (English if none)."""
    return next((lang for lang in entry.languages if lang in LANGUAGES), "en")


def registry_css() -> str:
    """templates/site.css, the shared navigation's nav.css, then templates/registry.css."""

    folder = templates_dir()
    return "".join((folder / name).read_text(encoding="utf-8")
                   for name in ("site.css", "nav.css", "registry.css"))


def verify_command(entry: RegistryEntry, *, crl: bool = False) -> str:
    """The complete `certgen verify` command for a certificate of this registry: the lab's CA
    (ca.pem), the timestamp authority's root for a timestamped one, the registry's signed list
    and, where the registry publishes it, the CA's CRL (issue 40)."""
    parts = ["certgen verify certificate.pdf --trust ca.pem"]
    if entry.signature is not None and entry.signature.timestamped:
        parts.append("--tsa-trust tsa-root.pem")
    parts.append("--revocations index.json")
    if crl:
        parts.append("--crl ca.crl")
    return " ".join(parts)


def render_registry_page(entry: RegistryEntry, lang: str, *, at: str, as_of: dt.date,
                         home: str | None = None, software: PublishedWheel | None = None,
                         crl: bool = False) -> str:
    """The page of one certificate in `lang`, to be written at registry path `at`.

    `home` is the site's index relative to the registry root (None: the registry is
    published on its own and the header links nowhere).
    """

    context: dict[str, Any] = {
        "entry": entry,
        "as_of": as_of,
        "alternates": [
            {"lang": other, "name": LANGUAGE_NAMES[other],
             "href": rel(at, page_path(entry.id, other))}
            for other in LANGUAGES
        ],
        "x_default": rel(at, page_path(entry.id)),
        "css_href": rel(at, CSS_PATH),
        "index_href": rel(at, "index.json"),
        "ca_href": rel(at, "ca.pem"),
        "command": verify_command(entry, crl=crl),
        # The certgen wheel published beside the registry (certgen.distribution), if any.
        "software": None if software is None else {
            "name": software.name, "sha256": software.sha256,
            "href": rel(at, f"{SOFTWARE_FOLDER}/{software.name}"),
            "sums_href": rel(at, f"{SOFTWARE_FOLDER}/SHA256SUMS"),
        },
        # The shared navigation (certgen.render.nav): home, this page in each language, the PDFs.
        "nav": doc_nav(
            home=None if home is None else rel(at, home),
            languages=[(other, rel(at, page_path(entry.id, other))) for other in LANGUAGES],
            files=[(f"PDF ({pdf_lang})", rel(at, pdf_path(entry.id, pdf_lang)))
                   for pdf_lang in entry.languages],
        ),
        "pdfs": [
            {"lang": pdf_lang, "name": LANGUAGE_NAMES[pdf_lang],
             "href": rel(at, pdf_path(entry.id, pdf_lang))}
            for pdf_lang in entry.languages
        ],
        # "ASUS TUF RTX 4070", but never "Illustrative Illustrative …" when the model says it.
        "card_name": entry.model if entry.model.startswith(entry.vendor)
        else f"{entry.vendor} {entry.model}",
        "role": local_text(entry.signatory_role, lang),
        # lab.yaml's {en, ru, pt} text has the record's shape (local_text reads en/ru/pt).
        "reason": local_text(None if entry.revocation is None
                             else cast(Any, entry.revocation.reason), lang),
    }
    return render_template("registry.html.j2", context, lang)
