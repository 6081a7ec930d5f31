"""HTML → PDF with WeasyPrint, confined to the templates folder, reproducible to the byte.

- Fonts: the project's `templates/fonts.conf` is the only fontconfig configuration
  (FONTCONFIG_FILE is set before WeasyPrint reads it); it lists only `templates/fonts/`
  (DejaVu: Latin, Portuguese accents, Cyrillic), so the system's fonts cannot change a PDF.
- Fetching: `ConfinedURLFetcher` serves files under `templates/` and data: URLs and refuses
  everything else (other file:// paths, http(s), symlinks leading out, encoded dot segments).
  It keeps a log of what it served and refused, which tests read.
- Errors: a refusal that stops the rendering (WeasyPrint lets a few fetches, such as an
  @color-profile source, fail the whole document) is a RenderError, the document's fault; any
  other exception out of WeasyPrint is a bug in certgen or WeasyPrint and propagates unchanged.
- Output: A4 (from the print CSS), tagged PDF/A-3a (a structure tree of headings, tables and
  figures that screen readers follow), attachments with relationship Data and explicit dates, title / author / language metadata, the Creator naming the software stack
  (certgen.support.software: certgen, Python, WeasyPrint, pydyf, Pango, HarfBuzz), creation and modification dates from the
  caller (the bundle's date or SOURCE_DATE_EPOCH), never the clock.
"""

from __future__ import annotations

import datetime as dt
import io
import mimetypes
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from certgen.errors import RenderError
from certgen.support.paths import templates_dir
from certgen.support.software import creator_line, current_software

if TYPE_CHECKING:
    from weasyprint.document import Document
    from weasyprint.text.fonts import FontConfiguration
    from weasyprint.urls import URLFetcher, URLFetcherResponse

FONTS_CONF_NAME = "fonts.conf"


def fonts_conf() -> Path:
    """The project's fontconfig file (templates/fonts.conf)."""
    return templates_dir() / FONTS_CONF_NAME


def _use_project_fonts() -> None:
    # fontconfig reads FONTCONFIG_FILE each time WeasyPrint builds a FontConfiguration, and
    # once at library load: set it before importing WeasyPrint and before every render.
    os.environ["FONTCONFIG_FILE"] = str(fonts_conf())


_use_project_fonts()

_DOT_SEGMENT = re.compile(r"%2e|%2f|%5c", re.IGNORECASE)


@dataclass(frozen=True)
class FetchEntry:
    """One fetch decision: `served` or `refused`, the URL, and why when refused."""

    verdict: str
    url: str
    reason: str = ""


class ConfinedURLFetcher:
    """Serves only files under the templates folder and data: URLs; refuses the rest.

    `log` lists every decision in order; `served()` and `refused()` filter it. WeasyPrint asks
    it through `for_weasyprint()`, so that importing this module does not import WeasyPrint
    (a second or more of start-up that `certgen check` and the API's readers never need).
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or templates_dir()).resolve()
        self.log: list[FetchEntry] = []
        # The refusals raised, by identity: WeasyPrint re-raises them wrapped (a URLFetchingError
        # whose context is ours), and only those may become a user's RenderError.
        self._refusals: list[ValueError] = []

    def served(self) -> list[str]:
        """URLs served, in order."""
        return [e.url for e in self.log if e.verdict == "served"]

    def refused(self) -> list[str]:
        """URLs refused, in order."""
        return [e.url for e in self.log if e.verdict == "refused"]

    def caused_by_refusal(self, error: BaseException) -> bool:
        """Whether `error` is, or was raised while handling, one of this fetcher's refusals."""
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            if any(current is refusal for refusal in self._refusals):
                return True
            seen.add(id(current))
            current = current.__cause__ or current.__context__
        return False

    def _refuse(self, url: str, reason: str) -> ValueError:
        self.log.append(FetchEntry("refused", url, reason))
        # A plain ValueError: WeasyPrint quotes its type name in the message users see.
        refusal = ValueError(f"certgen refused to fetch {url[:80]!r}: {reason}")
        self._refusals.append(refusal)
        return refusal

    def for_weasyprint(self) -> URLFetcher:
        """A WeasyPrint URL fetcher that serves only what this one allows, logged here."""
        from weasyprint.urls import URLFetcher

        confined = self

        class _Asking(URLFetcher):  # type: ignore[misc]
            def fetch(self, url: str, headers: Mapping[str, str] | None = None
                      ) -> URLFetcherResponse:
                return confined._fetch(url, headers, super().fetch)

        asking: URLFetcher = _Asking(allowed_protocols=("file", "data"), allow_redirects=False)
        return asking

    def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> URLFetcherResponse:
        """The answer WeasyPrint would get for `url`; refusals raise ValueError."""
        return self._fetch(url, headers, self.for_weasyprint().fetch)

    def _fetch(self, url: str, headers: Mapping[str, str] | None,
               fetch_data: Callable[[str, Mapping[str, str] | None], URLFetcherResponse],
               ) -> URLFetcherResponse:
        from weasyprint.urls import URLFetcherResponse

        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme == "data":
            response = fetch_data(url, headers)
            self.log.append(FetchEntry("served", url[:64]))
            return response
        if scheme != "file":
            raise self._refuse(url, "only files under templates/ and data: URLs are served")
        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            raise self._refuse(url, "remote file host")
        if _DOT_SEGMENT.search(parts.path) or ".." in parts.path.split("/"):
            raise self._refuse(url, "encoded or dot path segments")
        raw = Path(unquote(parts.path))
        try:
            resolved = raw.resolve(strict=True)
        except (OSError, RuntimeError):
            raise self._refuse(url, "no such file") from None
        if not resolved.is_relative_to(self.root) or not resolved.is_file():
            raise self._refuse(url, "outside templates/ (or a symlink leading out)")
        body = resolved.read_bytes()
        mime = mimetypes.guess_type(resolved.name)[0] or "application/octet-stream"
        if resolved.suffix == ".ttf":
            mime = "font/ttf"
        self.log.append(FetchEntry("served", url))
        return URLFetcherResponse(url, body, {"Content-Type": mime})


Attachment = tuple[str, bytes, str]
"""(file name, bytes, description) of a PDF attachment."""

_FONT_CONFIG: FontConfiguration | None = None


def _font_config() -> FontConfiguration:
    # One FontConfiguration per process: it only knows the project fonts, and building it
    # (a fontconfig scan) costs more than a small certificate's layout.
    global _FONT_CONFIG
    if _FONT_CONFIG is None:
        _use_project_fonts()
        from weasyprint.text.fonts import FontConfiguration

        _FONT_CONFIG = FontConfiguration()
    return _FONT_CONFIG


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def _w3c(value: dt.datetime) -> str:
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


UNDATED = dt.datetime(1980, 1, 1, tzinfo=dt.UTC)
"""Stands in only where WeasyPrint cannot do without a date while a document has none (created
is None): attachment dates and the subset fonts' internal timestamps. 1980-01-01 is the ZIP
epoch, the usual "no date" of reproducible builds; it is never written as the document's date."""


def html_to_pdf(
    html: str,
    *,
    lang: str,
    title: str,
    author: str,
    attachments: list[Attachment] | tuple[Attachment, ...] = (),
    created: dt.datetime | None,
    fetcher: ConfinedURLFetcher | None = None,
    generator: str | None = None,
) -> bytes:
    """Render `html` to tagged PDF/A-3a bytes (A4 from the print CSS), deterministic for equal inputs.

    Relative URLs resolve against templates/. `created` is used for the document's creation
    and modification dates and every attachment's dates; pass the bundle's date. With None the
    document carries no date of its own (see UNDATED), never the clock's. `generator` is the
    Creator metadata naming the software that made the document (a certificate passes its
    record's `software`); by default this process's stack (certgen.support.software).
    """
    import weasyprint

    _use_project_fonts()
    fetcher = fetcher if fetcher is not None else ConfinedURLFetcher()
    asking = fetcher.for_weasyprint()
    dated = created
    created = UNDATED if created is None else created
    when = _utc(created).replace(tzinfo=None)
    # Font subsets carry timestamps from SOURCE_DATE_EPOCH: the document's own date, set only
    # for this render (a value the user set stays), so that one document's date never leaks
    # into the next one a worker process renders.
    user_epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if user_epoch is None:
        os.environ["SOURCE_DATE_EPOCH"] = str(int(_utc(created).timestamp()))
    try:
        document = weasyprint.HTML(
            string=html, base_url=templates_dir().as_uri() + "/",
            url_fetcher=asking,
        ).render(font_config=_font_config())
    except BaseException as exc:
        _restore_epoch(user_epoch)
        if fetcher.caused_by_refusal(exc):
            raise RenderError(f"PDF rendering failed: {exc}") from exc
        raise  # a bug (in certgen or WeasyPrint), not the document's fault: keep its traceback
    _keep_links_relative(document, templates_dir())
    meta = document.metadata
    meta.title = title
    meta.authors = [author]
    meta.lang = lang
    meta.created = None if dated is None else _w3c(created)
    meta.modified = None if dated is None else _w3c(created)
    if generator is None:
        generator = creator_line(current_software())
    meta.generator = generator
    # The HTML may declare attachments of its own (<link rel=attachment>): never honour them.
    meta.attachments = []
    pdf_attachments = [
        weasyprint.Attachment(
            file_obj=io.BytesIO(data),
            name=name,
            description=description,
            created=when,
            modified=when,
            relationship="Data",
            url_fetcher=asking,
        )
        for name, data, description in attachments
    ]
    try:
        out = document.write_pdf(
            pdf_variant="pdf/a-3a",
            attachments=pdf_attachments,
            uncompressed_pdf=False,
        )
    finally:
        _restore_epoch(user_epoch)
    assert isinstance(out, bytes)
    return out


def _keep_links_relative(document: Document, base: Path) -> None:
    """A link the page writes relative (to a sibling page, the site's index) stays relative in
    the PDF, as the page wrote it. WeasyPrint resolves it against the base URL, the templates
    folder: the PDF would then name the building machine's folder (file:///home/…), differ
    from one checkout to the next, and lead nowhere for the reader. A relative URI is resolved
    by the viewer against where the PDF itself was opened, as the HTML page's is."""
    for page in document.pages:
        kept = []
        for link_type, target, rectangle, box in page.links:
            if link_type == "external" and target.startswith("file:"):
                parts = urlsplit(target)
                relative = os.path.relpath(url2pathname(parts.path), base)
                target = Path(relative).as_posix() + (f"#{parts.fragment}" if parts.fragment
                                                      else "")
            kept.append((link_type, target, rectangle, box))
        page.links = kept


def _restore_epoch(user_epoch: str | None) -> None:
    """Drop the SOURCE_DATE_EPOCH html_to_pdf set, unless the user had set one."""
    if user_epoch is None:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
