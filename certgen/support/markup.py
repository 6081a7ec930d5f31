"""Markdown from a bundle (justifications) to safe HTML, in linear time.

One function, `sanitise_markdown`, used by the renderer (what the documents print) and by the
bundle loader (a justification that sanitises to nothing is refused, so a rule is never
satisfied by text the documents would not show).

Python-Markdown's inline link pattern is quadratic in unmatched `[`: 20,000 of them took 35 s.
Every bracket that is not part of a plain `[text](url)` link, and every `<` that does not start
something shaped like a tag, is therefore escaped first (`\\[` renders as `[` exactly as an
unmatched bracket does), and the bundle limits a justification's length (docs/limits.md): the
worst case stays well under a second.
"""

from __future__ import annotations

import html
import re

_ALLOWED_TAGS = {"p", "br", "em", "strong", "code", "ul", "ol", "li", "blockquote", "a"}
_ALLOWED_SCHEMES = {"http", "https", "mailto"}

_TOKEN = re.compile(
    r"(\\.)"                                  # an escape: kept
    r"|(`[^`\n]{0,1000}`)"                     # a code span: kept as written
    r"|(\[[^\[\]\n]{0,1000}\]\((?:[^()\s]|\([^()\s]{0,200}\)){0,2000}\))"  # a link: kept
    r"|(<[A-Za-z/!?][^<>\n]{0,500}>)"           # something shaped like a tag: kept (nh3 decides)
    r"|([\[\]])"                              # a bare bracket: escaped
    r"|(<)",                                  # a bare '<': an entity
    re.DOTALL,
)
"""What `_defuse` keeps, escapes or encodes; every alternative is bounded, so one pass is linear."""


def _defuse(text: str) -> str:
    """Escape the constructs Python-Markdown handles in quadratic time (unmatched `[` and `<`
    make it scan to the end of the paragraph for each one); the rendering is unchanged."""

    def one(match: re.Match[str]) -> str:
        if match.group(5):
            return "\\" + match.group(5)
        if match.group(6):
            return "&lt;"
        return match.group(0)

    return _TOKEN.sub(one, text)


def sanitise_markdown(text: str | None) -> str:
    """Markdown → HTML → nh3: text formatting and http(s)/mailto links only, nothing else."""
    if not text:
        return ""
    import markdown
    import nh3

    rendered = markdown.markdown(_defuse(text), extensions=[], output_format="html")
    return str(
        nh3.clean(
            rendered,
            tags=_ALLOWED_TAGS,
            clean_content_tags={"script", "style", "iframe", "object", "embed", "template"},
            attributes={"a": {"href"}},
            url_schemes=_ALLOWED_SCHEMES,
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )
    )


def visible_text(sanitised_html: str) -> str:
    """The text a reader sees in sanitised HTML: tags dropped, entities decoded, trimmed."""
    return html.unescape(re.sub(r"<[^>]*>", "", sanitised_html)).strip()
