"""Explainer pages: Markdown in three languages, their figures filled in, rendered to HTML.

The pages under locales/<lang>/explainers/*.md never type a figure the engine can compute.
They write a placeholder instead, `{{name}}` or `{{name:fmt}}`; certgen.builders.explainers
computes every name (from certgen.metrics and the versioned rules file), and this module fills
them in and renders: it formats, it does not compute.

Formats: by default a figure keeps the decimals the engine rounds it to; `:N` forces N fixed
decimals; `:pct` shows a fraction ×100 with a percent sign. Numbers follow the page's locale
(decimal comma in ru and pt); inside formulas (`$...$`, `$$...$$`) the comma is written `{,}`
so that LaTeX does not space it as punctuation.

Formulas are LaTeX. For the browser they become MathML (latex2mathml); for the PDF they become
SVG pictures (ziamath), because WeasyPrint draws no MathML.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from certgen.errors import ExplainerError
from certgen.metrics.figures import round_half_away
from certgen.render.i18n import _percent_pattern, bind_short_words, fmt_date, fmt_pct
from certgen.support import paths

PAGES: tuple[str, ...] = ("frame-pacing", "high-fps-bad-lows", "reading-your-certificate",
                          "what-else-a-capture-measures", "refresh-cadence", "hitch-causes",
                          "calibration", "how-sure-is-a-grade")
LANGS: tuple[str, ...] = ("en", "ru", "pt")
SAMPLE_PAGES: tuple[str, ...] = ("reading-your-certificate", "how-sure-is-a-grade")
"""Pages that quote the GOLD sample's record (see sample_figures)."""
CALIBRATION_PAGES: tuple[str, ...] = ("calibration",)
"""Pages whose worked example is a fleet reviewed by certgen.fleet.calibration (calibration_figures):
its cards' grades are stated in words, so only these pages compute it (and check it)."""


def locales_dir() -> Path:
    """The locales/ folder (source checkout or the wheel's copy)."""

    return Path(paths.locales_dir())


# --------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Figure:
    """A number the engine computed, with the decimals it is shown with by default."""

    value: float
    decimals: int
    trim: bool = False
    """Drop trailing zeros (0.2500 -> 0.25) when the default format is used."""


@dataclass(frozen=True)
class Text:
    """A word or a link taken from a record (a title, an ID, a path), not a number.

    `{lang}` in it becomes the page's language (links to the same-language certificate).
    """

    text: str


@dataclass(frozen=True)
class Percent:
    """A stored fraction shown as the certificate shows it: ×100, locale percent sign."""

    fraction: float
    decimals: int = 2


@dataclass(frozen=True)
class Day:
    """A date from a record (YYYY-MM-DD), shown as the certificate shows it: the locale's long
    form ("29 November 2026", "29 ноября 2026 г.")."""

    iso: str


Value = Figure | Text | Percent | Day


# --------------------------------------------------------------------------- formatting


def format_number(fig: Figure, lang: str, fmt: str | None = None, *, math: bool = False) -> str:
    """One figure in the locale's conventions; in a formula the decimal comma is `{,}`."""
    from babel.numbers import format_decimal, format_percent

    value = fig.value
    if fmt == "pct":
        # The locale's own percent spacing (ru/pt "4,12 %"), as on the certificates.
        text = format_percent(value, format=_percent_pattern(lang, 2, trim=True), locale=lang)
    else:
        decimals = int(fmt) if fmt is not None else fig.decimals
        pattern = "0" if decimals == 0 else "0." + ("0" if (fmt is not None or not fig.trim)
                                                    else "#") * decimals
        if not math:
            pattern = "#,##" + pattern
        # With trimmed decimals ("#") a whole value keeps no separator: 0.25, 72.5, 96.
        text = format_decimal(round_half_away(value, decimals), format=pattern, locale=lang)
    if not math and text.startswith("-"):
        text = "\u2212" + text[1:]  # a negative margin carries the minus sign, as certificates do
    if math:
        text = text.replace(",", "{,}").replace("\u2212", "-").replace("%", r"\%")
        text = text.replace("\xa0", "").replace("\u202f", "")
    return text


_PLACEHOLDER = re.compile(r"\{\{\s*([a-z0-9_.]+)(?::([a-z0-9]+))?\s*\}\}")
# Code is left alone; formulas are found so that numbers inside them get the `{,}` form.
_SEGMENTS = re.compile(
    r"(?P<fence>^```.*?^```[ \t]*$)|(?P<code>`[^`\n]+`)|(?P<dmath>\$\$.+?\$\$)|"
    r"(?P<imath>(?<![\\$\w])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\w))",
    re.DOTALL | re.MULTILINE,
)


def format_value(value: Value, lang: str, fmt: str | None = None, *, math: bool = False) -> str:
    """A figure, a percentage or a text from a record, for a page in `lang`."""
    if isinstance(value, Text):
        return value.text.replace("{lang}", lang)
    if isinstance(value, Percent):
        return fmt_pct(value.fraction, lang, value.decimals)
    if isinstance(value, Day):
        return fmt_date(value.iso, lang)
    return format_number(value, lang, fmt, math=math)


def fill_placeholders(text: str, figures: dict[str, Value], lang: str, source: str) -> str:
    """Replace every {{name}} with its figure; an unknown name is an error naming the line."""

    def sub(segment: str, offset: int, math: bool) -> str:
        def one(m: re.Match[str]) -> str:
            name, fmt = m.group(1), m.group(2)
            if name not in figures:
                line = text.count("\n", 0, offset + m.start()) + 1
                raise ExplainerError(f"unknown figure {{{{{name}}}}}", file=source, line=line)
            if fmt is not None and fmt != "pct" and not fmt.isdigit():
                line = text.count("\n", 0, offset + m.start()) + 1
                raise ExplainerError(
                    f"{{{{{name}:{fmt}}}}}: format must be a digit count or 'pct'",
                    file=source, line=line,
                )
            return format_value(figures[name], lang, fmt, math=math)

        return _PLACEHOLDER.sub(one, segment)

    out: list[str] = []
    pos = 0
    for m in _SEGMENTS.finditer(text):
        out.append(sub(text[pos:m.start()], pos, False))
        kind = m.lastgroup
        if kind in ("fence", "code"):
            out.append(m.group(0))  # code is copied as written: no figure, no locale
        else:
            out.append(sub(m.group(0), m.start(), True))
        pos = m.end()
    out.append(sub(text[pos:], pos, False))
    return "".join(out)


# --------------------------------------------------------------------------- pages


@dataclass(frozen=True)
class ExplainerPage:
    """One explainer page in one language, rendered to HTML fragments."""

    slug: str
    lang: str
    title: str
    description: str
    markdown: str
    """The Markdown with every figure filled in (what the reader of the source would see)."""
    body_html: str
    """Body with formulas as MathML (for browsers)."""
    body_pdf_html: str
    """Body with formulas as SVG pictures (for WeasyPrint)."""


def source_path(slug: str, lang: str) -> Path:
    return locales_dir() / lang / "explainers" / f"{slug}.md"


def split_front_matter(text: str, source: str) -> tuple[dict[str, str], str]:
    """`---` YAML front matter (title, description) and the Markdown body."""

    if not text.startswith("---\n"):
        raise ExplainerError("expected front matter starting with '---'", file=source, line=1)
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ExplainerError("front matter is not closed by '---'", file=source, line=1)
    meta = yaml.safe_load(text[4:end]) or {}
    if not isinstance(meta, dict) or set(meta) != {"title", "description"}:
        raise ExplainerError(
            f"front matter: expected keys title, description, got {sorted(meta)!r}",
            file=source, line=1,
        )
    return {k: str(v) for k, v in meta.items()}, text[end + 5:]


def render_page(slug: str, lang: str, figures: dict[str, Value]) -> ExplainerPage:
    """Read one page, fill in its figures (computed by certgen.builders.explainers) and render
    its body twice: formulas as MathML for browsers, as SVG pictures for the PDF."""
    if slug not in PAGES or lang not in LANGS:
        raise ExplainerError(f"no explainer {slug!r} in {lang!r}")
    path = source_path(slug, lang)
    source = f"locales/{lang}/explainers/{slug}.md"
    text = path.read_text(encoding="utf-8")
    meta, body = split_front_matter(text, source)
    # The language's typesetting (no-break spaces) once the figures are in.
    filled = bind_short_words(fill_placeholders(body, figures, lang, source), lang)
    title = bind_short_words(fill_placeholders(meta["title"], figures, lang, source), lang)
    description = bind_short_words(fill_placeholders(meta["description"], figures, lang, source),
                                   lang)
    return ExplainerPage(
        slug=slug,
        lang=lang,
        title=title,
        description=description,
        markdown=filled,
        body_html=markdown_to_html(filled, "mathml", source),
        body_pdf_html=markdown_to_html(filled, "svg", source),
    )


def markdown_to_html(text: str, math_target: str, source: str) -> str:
    """Markdown -> HTML, with `$$..$$` / `$..$` formulas as MathML or SVG pictures."""
    import markdown

    formulas: list[tuple[str, bool]] = []

    def stash(m: re.Match[str]) -> str:
        kind = m.lastgroup
        if kind in ("fence", "code"):
            return m.group(0)
        display = kind == "dmath"
        tex = m.group(0)[2:-2] if display else m.group(0)[1:-1]
        formulas.append((tex.strip(), display))
        token = f"MATHTOKEN{len(formulas) - 1}X"
        return f"\n\n{token}\n\n" if display else token

    protected = _SEGMENTS.sub(stash, text)
    html = markdown.markdown(
        protected, extensions=["tables", "fenced_code", "attr_list", "toc", "sane_lists"],
        extension_configs={"toc": {"permalink": False}}, output_format="html",
    )

    def unstash(m: re.Match[str]) -> str:
        tex, display = formulas[int(m.group(1))]
        return _formula(tex, display, math_target, source)

    html = re.sub(r"<p>MATHTOKEN(\d+)X</p>", unstash, html)
    html = re.sub(r"MATHTOKEN(\d+)X", unstash, html)
    if math_target == "mathml":
        # In the browser a wide table, code block or formula scrolls inside its own box on a
        # phone; the box is focusable so the keyboard can scroll it too (WCAG 2.1.1).
        html = html.replace("<table>", '<div class="table-wrap" tabindex="0"><table>')
        html = html.replace("</table>", "</table></div>").replace("<pre>", '<pre tabindex="0">')
    return html


@lru_cache(maxsize=4096)
def _formula(tex: str, display: bool, target: str, source: str) -> str:
    try:
        if target == "mathml":
            import latex2mathml.converter

            mathml = latex2mathml.converter.convert(tex, display="block" if display else "inline")
            mathml = mathml.replace("<math ", f'<math alttext="{_attr(tex)}" ', 1)
            # A single-letter <mi> is drawn from the Mathematical Alphanumeric Symbols block
            # (U+1D400…), which common fonts lack (tofu boxes): keep the plain letter and let
            # CSS slant it.
            # A decimal comma ({,}) is one number, not a number, a comma operator and another.
            mathml = re.sub(r"<mn>(\d+)</mn><mrow><mo>&#x0002C;</mo></mrow><mn>(\d+)</mn>",
                            r"<mn>\1,\2</mn>", mathml)
            mathml = re.sub(r"<mi>([A-Za-z])</mi>", r'<mi mathvariant="normal" class="v">\1</mi>',
                            mathml)
            # An inline formula moves to the next line whole rather than past a phone's edge.
            return (f'<div class="formula" tabindex="0">{mathml}</div>' if display
                    else f'<span class="math-inline">{mathml}</span>')
        import ziamath

        tex = _own_group_fences(tex)
        # 16 px is the body text size of the printed page (font-size 1em): inline formulas
        # match the words around them; display formulas are a little larger.
        svg = ziamath.Latex(tex, size=18 if display else 16).svg()  # type: ignore[attr-defined]
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        width, height = _svg_size(svg)
        img = (
            f'<img class="formula-svg" alt="{_attr(tex)}" width="{width}" height="{height}" '
            f'src="data:image/svg+xml;base64,{data}">'
        )
        # An inline formula is joined (U+2060 WORD JOINER) to the word before it: where the
        # picture did not fit at a line's end, WeasyPrint broke the line at its first break
        # opportunity instead of its last ("Раздел" alone on a line, ru frame-pacing.pdf).
        return f'<div class="formula">{img}</div>' if display else "\u2060" + img
    except ExplainerError:
        raise
    except Exception as exc:  # a formula the converters cannot read is an authoring error
        raise ExplainerError(f"formula {tex!r} cannot be rendered: {exc}", file=source) from None


_BARE_FENCES = re.compile(r"(?<!\\left)\\l(ceil|floor)\b(.*?)(?<!\\right)\\r\1\b")


def _own_group_fences(tex: str) -> str:
    """`\\lceil x \\rceil` → `{\\lceil x \\rceil}` (and floor alike) for ziamath.

    ziamath stretches a bare ceiling or floor bracket to the height of its whole row, so
    beside a fraction ⌈p·N⌉ reached far below the baseline (en frame-pacing.pdf p2). In TeX
    only \\left/\\right stretch them; a group of their own keeps them at the size of their
    contents, as TeX prints them. \\left … \\right pairs are not matched and stay stretchy."""
    return _BARE_FENCES.sub(lambda m: "{" + m.group(0) + "}", tex)


def _svg_size(svg: str) -> tuple[str, str]:
    m = re.search(r'width="([\d.]+)" height="([\d.]+)"', svg)
    if not m:
        return ("auto", "auto")
    return (f"{float(m.group(1)):.0f}", f"{float(m.group(2)):.0f}")


def _attr(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )
