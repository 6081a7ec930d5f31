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
