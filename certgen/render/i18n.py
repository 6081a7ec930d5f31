"""Messages, numbers, dates and plurals per locale (Babel), shared by every document.

- Messages: every `locales/<lang>/LC_MESSAGES/*.po` (certgen.po, compare.po, site.po, …) is read
  with Babel, merged into one catalog, compiled to .mo in memory and loaded as one
  `gettext.GNUTranslations`. Fuzzy and empty entries are left out, exactly as msgfmt does.
- Strictness: for every language but English (whose msgids are the English text) a message
  with no translation raises `InternalError` (a bug in certgen: exit 70) instead of silently
  falling back to English.
- Numbers: Babel's patterns for the locale (decimal comma and non-breaking group separator
  in ru and pt), with the number of decimals the SOP prints: FPS 1, score 2, percentages 2.
  The values in record.json are already rounded, so formatting never rounds again.
- Absent values (None) print as an em dash, never as 0.
"""

from __future__ import annotations

import datetime as dt
import gettext
import io
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from certgen.errors import InternalError, RenderError
from certgen.support.paths import locales_dir, templates_dir

LANGUAGES: tuple[str, ...] = ("en", "ru", "pt")
"""The customer languages, in the order documents list them."""

LANGUAGE_NAMES: dict[str, str] = {"en": "English", "ru": "Русский", "pt": "Português"}
"""Each language by its own name (what a language switcher shows, never translated)."""

SOURCE_LANGUAGE = "en"
"""msgids are English sentences; English needs no translation."""

DASH = "—"
"""What an absent value prints as (the null rule: absent stays absent)."""


def check_language(lang: str) -> str:
    """Return `lang` if it is a supported language, else raise a RenderError naming it."""
    if lang not in LANGUAGES:
        raise RenderError(f"language {lang!r}: expected one of {', '.join(LANGUAGES)}")
    return lang


def language_set(languages: Iterable[str]) -> tuple[str, ...]:
    """Checked languages without repeats, in the order of LANGUAGES (so the same set always
    gives the same document, whatever order it was asked for in)."""
    wanted = {check_language(lang) for lang in languages}
    return tuple(lang for lang in LANGUAGES if lang in wanted)


class CatalogTranslations(gettext.GNUTranslations):
    """Merged translations of one language; strict ones refuse a missing message."""

    lang: str = SOURCE_LANGUAGE
    strict: bool = False

    def _missing(self, message: str) -> InternalError:
        # Every message certgen prints is its own: one with no translation is certgen's bug.
        return InternalError(
            f"locales/{self.lang}/LC_MESSAGES: no translation for {message!r}"
        )

    def gettext(self, message: str) -> str:
        if self.strict and message not in self._catalog:  # type: ignore[attr-defined]
            raise self._missing(message)
        return super().gettext(message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        if self.strict and (msgid1, 0) not in self._catalog:  # type: ignore[attr-defined]
            raise self._missing(msgid1)
        return super().ngettext(msgid1, msgid2, n)

    def pgettext(self, context: str, message: str) -> str:
        key = f"{context}\x04{message}"
        if self.strict and key not in self._catalog:  # type: ignore[attr-defined]
            raise self._missing(message)
        return super().pgettext(context, message)


NBSP = "\u00a0"

# Words that must not end a line: each is bound to the word after it by a no-break space, so it
# starts the next line together with that word.
# - Russian (as Russian book typesetting does): the one-letter prepositions and conjunctions
#   (в, к, с, о, у, и, а, я) and the two-letter prepositions, conjunctions and negations (во,
#   ко, со, об, от, до, за, из, на, по, но, не, ни); a line ending in "на" or "не" reads as a
#   broken phrase.
# - Portuguese: the one-letter words only (a, à, o, e). Portuguese has no rule as strict as the
#   Russian one; a line that ends in a lone article or "e" is the case its typesetters avoid.
#   The two-letter de, do, da, em, no, na, um are about one word in six of our texts: binding
#   them all would leave narrow table cells and a phone's lines without places to break, for a
#   gain Portuguese readers do not expect.
# - English: none.
_BEFORE = {
    "ru": "в к с о у и а я во ко со об от до за из на по но не ни",
    "pt": "a à o e",
}
# Russian particles lean on the word before them and never start a line (был бы, он же, так ли).
_AFTER = {"ru": "бы ли же"}


def _words(spaced: str) -> str:
    return "|".join(sorted(spaced.split(), key=lambda w: (-len(w), w)))


_SHORT_WORD = {
    lang: re.compile(rf"(?<![\w\u00a0\-])({_words(words)}) (?=[\w«„“(%{{$\d])",
                     re.IGNORECASE)
    for lang, words in _BEFORE.items()
}
"""A short word of the language (any case, a word of its own) and the plain space after it."""
_PARTICLE = {
    lang: re.compile(rf"(?<=[\w»”)]) ({_words(words)})(?![\w\-])", re.IGNORECASE)
    for lang, words in _AFTER.items()
}
"""A particle and the plain space before it."""
_DASH = re.compile(r"(?<=[^\s|]) (?=[—–](?:\s|$))", re.MULTILINE)
"""The plain space before a spaced em or en dash (not a Markdown table's "| — |" cell)."""
_UNIT = re.compile(r"(?<=\d) (?=(?:мс|с|Гц|ГБ|FPS|ms|s|Hz|GB|px|pt|mm)(?![\w\-]))")
"""The plain space between a number and its unit ("4,2 мс", "16.7 ms", "144 Hz"): a unit never
starts a line without its number."""
_VERBATIM = re.compile(r"(\$\$.*?\$\$|\$[^$\n]*\$|`[^`\n]*`|\{\{.*?\}\})", re.DOTALL)
"""Formulas, code and {{placeholders}} of an explainer's Markdown: left exactly as written."""


def _bind(part: str, lang: str) -> str:
    part = _UNIT.sub(NBSP, _DASH.sub(NBSP, part))
    if lang in _SHORT_WORD:
        part = _SHORT_WORD[lang].sub("\\1" + NBSP, part)
    if lang in _PARTICLE:
        part = _PARTICLE[lang].sub(NBSP + "\\1", part)
    return part


def bind_short_words(text: str, lang: str) -> str:
    """The language's no-break spaces, so that a line never starts with a dash or ends with a
    word that belongs to the next one:

    - every language: a spaced em or en dash is bound to the word before it ("мс — 240" never
      puts "— 240." at the start of a line), and a unit to its number ("4,2 мс");
    - Russian and Portuguese: a short preposition, conjunction or article is bound to the word
      after it, and a Russian particle (бы, ли, же) to the word before it (see _BEFORE).

    Formulas, code and {{placeholders}} are returned as they are."""
    parts = _VERBATIM.split(text)
    return "".join(part if n % 2 else _bind(part, lang) for n, part in enumerate(parts))


def po_files(lang: str) -> list[Path]:
    """Every .po file of a language, sorted by name (the merge order)."""
    folder = locales_dir() / lang / "LC_MESSAGES"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == ".po" and p.is_file())


def _fingerprint(lang: str) -> tuple[tuple[str, int, int], ...]:
    out = []
    for path in po_files(lang):
        st = path.stat()
        out.append((path.name, st.st_mtime_ns, st.st_size))
    return tuple(out)


def translations(lang: str, *, strict: bool | None = None) -> CatalogTranslations:
    """The merged translations of `lang` (cached; recompiled when a .po file changes).

    `strict` defaults to True for every language but English.
    """
    check_language(lang)
    if strict is None:
        strict = lang != SOURCE_LANGUAGE
    return _compile(lang, strict, _fingerprint(lang))


@lru_cache(maxsize=32)
def _compile(
    lang: str, strict: bool, fingerprint: tuple[tuple[str, int, int], ...]
) -> CatalogTranslations:
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    # certgen.po (or the first catalog) is the base: its header, Plural-Forms included, is
    # the merged catalog's header; the other catalogs contribute their messages.
    files = po_files(lang)
    files.sort(key=lambda p: (p.name != "certgen.po", p.name))
    merged: Catalog | None = None
    seen: dict[Any, str] = {}
    for path in files:
        with path.open("rb") as fh:
            try:
                catalog = read_po(fh, locale=lang, abort_invalid=True)
            except Exception as exc:  # babel raises PoFileError and friends
                raise RenderError(f"{path.name}: {exc}", file=f"locales/{lang}/LC_MESSAGES") from exc
        if merged is None:
            merged = catalog
            seen = {(m.context, m.id): path.name for m in catalog if m.id}
            continue
        for message in catalog:
            if not message.id:
                continue  # the header
            key = (message.context, message.id)
            if key in seen:
                # The same message in two catalogs: the first one wins (test_i18n reports
                # the conflict); rendering must not depend on directory order.
                continue
            seen[key] = path.name
            merged[message.id] = message
    if merged is None:
        merged = Catalog(locale=lang, domain="certgen", fuzzy=False)
    for message in merged:  # the language's typesetting rules, applied once here
        if message.id and message.string:
            text = message.string
            message.string = (bind_short_words(text, lang) if isinstance(text, str)
                              else tuple(bind_short_words(t, lang) for t in text))
    buffer = io.BytesIO()
    write_mo(buffer, merged, use_fuzzy=False)
    buffer.seek(0)
    result = CatalogTranslations(buffer)
    result.lang = lang
    result.strict = strict
    return result


def gettext_for(lang: str) -> Callable[[str], str]:
    """`_()` for Python code that builds messages outside templates."""
    return translations(lang).gettext


def ngettext_for(lang: str) -> Callable[[str, str, int], str]:
    """`ngettext()` for Python code (Russian has three forms, Portuguese and English two)."""
    return translations(lang).ngettext


# --- numbers -------------------------------------------------------------------------------


def _decimal(value: float | int | Decimal) -> Decimal:
    # repr() gives the shortest text that round-trips, so 91.55 stays 91.55 (not 91.5499…).
    if isinstance(value, Decimal):
        return value
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@lru_cache(maxsize=64)
def _decimal_pattern(lang: str, digits: int) -> str:
    return "#,##0" + ("." + "0" * digits if digits > 0 else "")


@lru_cache(maxsize=64)
def _percent_pattern(lang: str, digits: int, *, trim: bool = False) -> str:
    """The locale's percent pattern with `digits` decimals (optional ones when `trim`)."""
    from babel import Locale

    pattern: str = Locale.parse(lang).percent_formats[None].pattern
    positive = pattern.split(";")[0]
    frac = "." + ("#" if trim else "0") * digits if digits > 0 else ""
    # Put the decimals after the last integer digit, keep the locale's spacing and sign place.
    return re.sub(r"0(?=[^0#]*$)", "0" + frac, positive, count=1)


MINUS = "\u2212"


def _minus(text: str) -> str:
    # Babel gives a hyphen-minus for en, ru and pt alike; print the true minus sign, which does
    # not break a line and does not read as a dash, in every language.
    return MINUS + text[1:] if text.startswith("-") else text


def fmt_number(value: float | int | None, lang: str, digits: int) -> str:
    """A number with exactly `digits` decimals in the locale's style; None → "—".

    A negative number carries U+2212 MINUS SIGN, not a hyphen.
    """
    if value is None:
        return DASH
    from babel.numbers import format_decimal

    return _minus(format_decimal(
        _decimal(value), format=_decimal_pattern(lang, digits), locale=lang
    ))


def fmt_int(value: int | None, lang: str) -> str:
    """A count with the locale's group separator; None → "—"."""
    return fmt_number(value, lang, 0)


def fmt_fps(value: float | None, lang: str) -> str:
    """An FPS figure, 1 decimal (the SOP rounding of step 1)."""
    return fmt_number(value, lang, 1)


def fmt_score(value: float | None, lang: str) -> str:
    """A Fluidity Score or a tier mean, 2 decimals."""
    return fmt_number(value, lang, 2)


def fmt_ms(value: float | None, lang: str, digits: int = 1) -> str:
    """A frame time in milliseconds (unit not included)."""
    return fmt_number(value, lang, digits)


def fmt_pct(fraction: float | None, lang: str, digits: int = 2) -> str:
    """A stored fraction shown ×100 as a percentage: 0.0412 → "4.12%" / "4,12 %"; None → "—".

    Two decimals show a 4-decimal fraction exactly, so printed figures re-derive the score.
    A negative share carries U+2212 MINUS SIGN, not a hyphen.
    """
    if fraction is None:
        return DASH
    from babel.numbers import format_percent

    return _minus(format_percent(
        _decimal(fraction), format=_percent_pattern(lang, digits), locale=lang
    ))


def fmt_percentile(value: float | None, lang: str) -> str:
    """A percentile rank (already 0–100), 1 decimal, without a % sign."""
    return fmt_number(value, lang, 1)


def parse_date(value: str | dt.date | dt.datetime) -> dt.date:
    """An ISO date (YYYY-MM-DD) or a date/datetime as a date."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError as exc:
        raise RenderError(f"date {value!r}: expected YYYY-MM-DD") from exc


def fmt_date(value: str | dt.date | dt.datetime | None, lang: str, style: str = "long") -> str:
    """A date in the locale's long form: "29 November 2026", "29 ноября 2026 г.", …"""
    if value is None:
        return DASH
    from babel.dates import format_date

    return format_date(parse_date(value), format=style, locale=lang)


def fmt_moment(value: str | None, lang: str) -> str:
    """When a capture was made, as its tool wrote it: an ISO date or date-time ("2026-11-20",
    "2026-11-20T10:00:00", "2019-03-30 12:01:36") in the locale's long form ("20 ноября
    2026 г., 10:00"), any other text exactly as written; None → "—". The time is the tool's own
    clock: no time zone is known, so none is shown or assumed."""
    if value is None:
        return DASH
    text = value.strip()
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return value
    from babel.dates import format_date, format_time, get_datetime_format

    day = format_date(when.date(), format="long", locale=lang)
    if len(text) <= len("YYYY-MM-DD"):
        return day
    clock = format_time(when.time(), format="short", locale=lang)
    # The locale's way of joining a date and a time ("{1}, {0}", "{1} {0}"), literals unquoted.
    joined: str = str(get_datetime_format("long", locale=lang)).replace("'", "")
    return joined.format(clock, day)


# --- glossary ------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _glossary(fingerprint: tuple[int, int]) -> dict[str, dict[str, str]]:
    path = locales_dir() / "glossary.yaml"
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    terms = data.get("terms", data) if isinstance(data, dict) else {}
    out: dict[str, dict[str, str]] = {}
    for key, value in terms.items():
        if isinstance(value, dict):
            out[str(key)] = {str(k): str(v) for k, v in value.items() if isinstance(v, str)}
    return out


def glossary() -> dict[str, dict[str, str]]:
    """locales/glossary.yaml as {term key: {lang: term}} (empty when the file is absent)."""
    path = locales_dir() / "glossary.yaml"
    if not path.is_file():
        return {}
    st = path.stat()
    return _glossary((st.st_mtime_ns, st.st_size))


def term(key: str, lang: str) -> str:
    """One glossary term in one language; a missing term is a RenderError, never English."""
    entry = glossary().get(key)
    if entry is None or lang not in entry:
        raise RenderError(f"locales/glossary.yaml: term {key!r} has no {lang!r} entry")
    return entry[lang]


# --- maintenance: which messages the certificate uses -------------------------------------

CERTIFICATE_SOURCES: tuple[tuple[str, str], ...] = (
    ("templates", "certificate.html.j2"),
    ("templates", "base.html.j2"),
    ("templates", "nav.html.j2"),
    ("templates", "partials/how_sure.html.j2"),
    ("templates", "partials/run_captures.html.j2"),
    ("templates", "partials/runs_within_note.html.j2"),
    ("templates", "partials/displayed_rate.html.j2"),
    ("templates", "partials/displayed_cell.html.j2"),
    ("templates", "partials/errata.html.j2"),
    ("templates", "partials/diagnostics.html.j2"),
    ("python", "render/certificate.py"),
)
"""The files whose messages belong in certgen.po (tests compare them with the catalogs), with
every templates/partials/certificate-*.html.j2 (extract_certificate_messages)."""


def extract_certificate_messages() -> list[tuple[str, str | None]]:
    """(msgid, msgid_plural or None) of every message the certificate sources use, sorted."""
    from babel.messages.extract import extract

    found: set[tuple[str, str | None]] = set()
    package = Path(__file__).resolve().parent.parent
    # The certificate's partials (templates/partials/certificate-*.html.j2) belong to it too.
    partials = [("templates", path.relative_to(templates_dir()).as_posix()) for path in
                sorted((templates_dir() / "partials").glob("certificate*.html.j2"))]
    for kind, name in [*CERTIFICATE_SOURCES, *partials]:
        if kind == "templates":
            path = templates_dir() / name
            method = "jinja2.ext:babel_extract"
            options = {"extensions": "jinja2.ext.i18n", "trim_blocks": "True",
                       "lstrip_blocks": "True"}
        else:
            path = package / name
            method = "python"
            options = {}
        with path.open("rb") as fh:
            for _lineno, message, _comments, _context in extract(
                method, fh, keywords={"_": None, "gettext": None, "ngettext": (1, 2)},
                options=options,
            ):
                if isinstance(message, tuple):
                    found.add((message[0], message[1]))
                else:
                    found.add((message, None))
    return sorted(found, key=lambda m: (m[0], m[1] or ""))
