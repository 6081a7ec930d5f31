"""Helpers for the site tests: build the site once per test module, parse its HTML links."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """What a link check needs of one HTML page: lang, links, assets, ids, alternates."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lang: str | None = None
        self.links: list[str] = []
        self.assets: list[str] = []
        self.ids: set[str] = set()
        self.alternates: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "html":
            self.lang = a.get("lang")
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "link" and a.get("rel") == "alternate" and "hreflang" in a:
            self.alternates[a["hreflang"]] = a["href"]
            self.links.append(a["href"])
        elif tag == "link" and "href" in a:
            self.assets.append(a["href"])
        if tag in ("img", "script", "iframe", "source") and "src" in a:
            self.assets.append(a["src"])


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def resolve(site: Path, page: Path, href: str) -> tuple[Path, str] | None:
    """The file (and fragment) an internal link points to; None for external or data: links."""
    parts = urlsplit(href)
    if parts.scheme in ("http", "https", "mailto", "data") or parts.netloc:
        return None
    target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
    return target, parts.fragment


class _PrintedAddress(HTMLParser):
    """The texts of `span.hash` inside a certificate's `section.verify` (hash and address)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_verify = False
        self.in_span = False
        self.spans: list[str] = []
        self.hrefs: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section" and ("class", "verify") in attrs:
            self.in_verify = True
        elif self.in_verify and tag in ("span", "a") and ("class", "hash") in attrs:
            # The printed address (a link on screen): its visible text, which must also be
            # where the link leads.
            self.in_span = True
            self.spans.append("")
            self.hrefs.append(dict(attrs).get("href"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.in_verify = False
        if tag in ("span", "a"):
            self.in_span = False

    def handle_data(self, data: str) -> None:
        if self.in_span:
            self.spans[-1] += data


def qr_targets(site: Path) -> list[tuple[Path, str, Path, str]]:
    """(certificate HTML, printed URL, registry page file, SHA-256 in the URL) per document.

    The URL is read from the document and mapped with the base the record names, never
    recomputed by certgen's own verify_url.
    """
    import json
    from urllib.parse import parse_qs, unquote, urlsplit

    out = []
    for html in sorted(site.glob("samples/*/certificate.*.html")):
        record = json.loads((html.parent / "record.json").read_bytes())
        parser = _PrintedAddress()
        parser.feed(html.read_text("utf-8"))
        # The verification address (with the record's hash) and the registry's status list.
        printed = [s.strip() for s in parser.spans if s.strip().startswith("https://")]
        urls = [u for u in printed if "?sha256=" in u]
        assert len(urls) == 1 and len(printed) == 2, html
        url = urls[0]
        assert url in parser.hrefs, (html, url, parser.hrefs)  # the link goes where it says
        base = record["issuer"]["verification_base"].rstrip("/") + "/"
        assert url.startswith(base), (html, url)
        parts = urlsplit(url[len(base):])
        assert parts.path.endswith("/") and parts.path.count("/") == 1, url
        page = site / "verify" / unquote(parts.path) / "index.html"
        out.append((html, url, page, parse_qs(parts.query)["sha256"][0]))
    return out
