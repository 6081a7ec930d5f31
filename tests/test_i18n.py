"""Messages, plurals, numbers and dates per locale; every catalog complete in ru and pt."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from certgen.errors import InternalError, RenderError
from certgen.render import i18n
from certgen.support.paths import locales_dir

NBSP = "\u00a0"


def _catalogs(lang: str) -> list[Path]:
    return sorted((locales_dir() / lang / "LC_MESSAGES").glob("*.po"))


def test_every_language_has_certgen_po() -> None:
    for lang in i18n.LANGUAGES:
        assert (locales_dir() / lang / "LC_MESSAGES" / "certgen.po").is_file()


@pytest.mark.parametrize("lang", ["ru", "pt"])
def test_no_untranslated_or_fuzzy_message_in_any_catalog(lang: str) -> None:
    """Every .po file of ru and pt: no empty msgstr, no fuzzy flag, every plural form filled."""
    problems = []
    for path in _catalogs(lang):
        with path.open("rb") as fh:
            catalog = read_po(fh, locale=lang)
        for message in catalog:
            if not message.id:
                continue
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.fuzzy:
                problems.append(f"{path.name}: fuzzy: {message.id!r}")
            if not all(strings):
                problems.append(f"{path.name}: untranslated: {message.id!r}")
            if message.pluralizable and len(strings) != catalog.num_plurals:
                problems.append(f"{path.name}: {len(strings)} plural forms: {message.id!r}")
    assert problems == []


@pytest.mark.parametrize("lang", ["ru", "pt"])
def test_catalogs_cover_every_english_message(lang: str) -> None:
    """A message present in the English catalog but absent in ru/pt would fail at render."""
    for en_path in _catalogs("en"):
        with en_path.open("rb") as fh:
            en_ids = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(fh) if m.id}
        other = locales_dir() / lang / "LC_MESSAGES" / en_path.name
        assert other.is_file(), f"{lang}: missing {en_path.name}"
        with other.open("rb") as fh:
            ids = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(fh) if m.id}
        assert sorted(en_ids - ids) == []


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, "1 прогон"), (2, "2 прогона"), (5, "5 прогонов"), (11, "11 прогонов"),
     (21, "21 прогон"), (22, "22 прогона"), (0, "0 прогонов")],
)
def test_russian_has_three_plural_forms(n: int, expected: str) -> None:
    ngettext = i18n.ngettext_for("ru")
    assert ngettext("%(num)d run", "%(num)d runs", n) % {"num": n} == expected


def test_portuguese_and_english_plurals() -> None:
    pt = i18n.ngettext_for("pt")
    en = i18n.ngettext_for("en")
    assert pt("%(num)d run", "%(num)d runs", 1) % {"num": 1} == "1 execução"
    assert pt("%(num)d run", "%(num)d runs", 3) % {"num": 3} == "3 execuções"
    assert en("%(num)d run", "%(num)d runs", 1) % {"num": 1} == "1 run"
    assert en("%(num)d run", "%(num)d runs", 2) % {"num": 2} == "2 runs"


@pytest.mark.parametrize(
    ("lang", "fps", "pct", "score"),
    [
        ("en", "1,234.5", "4.12%", "91.55"),
        ("ru", f"1{NBSP}234,5", f"4,12{NBSP}%", "91,55"),
        ("pt", "1.234,5", "4,12%", "91,55"),
    ],
)
def test_numbers_follow_the_locale(lang: str, fps: str, pct: str, score: str) -> None:
    assert i18n.fmt_fps(1234.5, lang) == fps
    assert i18n.fmt_pct(0.0412, lang) == pct
    assert i18n.fmt_score(91.55, lang) == score


def test_formatting_shows_the_stored_digits_and_does_not_round_again() -> None:
    assert i18n.fmt_fps(120.0, "en") == "120.0"
    assert i18n.fmt_pct(0.3333, "en") == "33.33%"
    assert i18n.fmt_pct(0.61, "ru") == f"61,00{NBSP}%"
    assert i18n.fmt_score(72.5, "pt") == "72,50"


@pytest.mark.parametrize(
    ("lang", "pct", "number"),
    [("en", "\u22122.82%", "\u22121.5"), ("ru", f"\u22122,82{NBSP}%", "\u22121,5"),
     ("pt", "\u22122,82%", "\u22121,5")],
)
def test_negatives_carry_the_minus_sign_not_a_hyphen(lang: str, pct: str, number: str) -> None:
    assert i18n.fmt_pct(-0.0282, lang) == pct
    assert i18n.fmt_number(-1.5, lang, 1) == number
    assert "-" not in i18n.fmt_fps(-3.0, lang)


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_absent_values_print_as_a_dash_never_zero(lang: str) -> None:
    for func in (i18n.fmt_fps, i18n.fmt_score, i18n.fmt_pct, i18n.fmt_int, i18n.fmt_date):
        assert func(None, lang) == "—"


def test_dates_in_each_language() -> None:
    day = dt.date(2026, 11, 29)
    assert i18n.fmt_date(day, "en") == "November 29, 2026"
    assert i18n.fmt_date("2026-11-29", "ru") == "29 ноября 2026\u202fг."
    assert i18n.fmt_date("2026-11-29", "pt") == "29 de novembro de 2026"


def test_capture_moments_in_each_language() -> None:
    """A capture's date as its tool wrote it (CapFrameX JSON and CSV): an ISO date-time in the
    locale's words, other text as written, never a guessed time zone."""
    assert i18n.fmt_moment("2026-11-20T10:00:00", "en") == "November 20, 2026, 10:00\u202fAM"
    assert i18n.fmt_moment("2019-03-30 12:01:36", "ru") == "30 марта 2019\u202fг., 12:01"
    assert i18n.fmt_moment("2026-11-20T10:00:00", "pt") == "20 de novembro de 2026 10:00"
    assert i18n.fmt_moment("2019-03-30", "ru") == "30 марта 2019\u202fг."
    assert i18n.fmt_moment("30.03.2019 12:01", "pt") == "30.03.2019 12:01"
    assert i18n.fmt_moment(None, "en") == "—"


def test_russian_one_letter_words_are_bound_to_the_next_word() -> None:
    """Russian typesetting: no line ends with "в", "к", "с", "о", "у", "и", "а" or "я"; formulas,
    code and placeholders keep their spaces, and other languages are left alone."""
    nb = "\u00a0"
    assert i18n.bind_short_words("Запись в архиве и в %(n)s кадрах", "ru") == (
        f"Запись в{nb}архиве и{nb}в{nb}%(n)s кадрах")
    assert i18n.bind_short_words("В 2026 году, а также «к слову»", "ru") == (
        f"В{nb}2026 году, а{nb}также «к{nb}слову»")
    assert i18n.bind_short_words("формула $t в x$, `a в b` и $$y и z$$", "ru") == (
        "формула $t в x$, `a в b` и $$y и z$$")
    assert i18n.bind_short_words("a e o y", "en") == "a e o y"
    assert i18n.bind_short_words("слово-и в", "ru") == "слово-и в"  # no word follows


def test_a_spaced_dash_never_starts_a_line_in_any_language() -> None:
    """"60 FPS, 4,2 мс — 240." broke before the dash (ru high-fps-bad-lows.pdf p1): the space
    before a spaced em or en dash is a no-break one; the space after it stays breakable. A dash
    standing for an absent value in a table cell, or opening a line, is left alone."""
    nb = "\u00a0"
    assert i18n.bind_short_words("это ровно — 240.", "ru") == f"это ровно{nb}— 240."
    assert i18n.bind_short_words("a gap – and a stutter", "en") == f"a gap{nb}– and a stutter"
    assert i18n.bind_short_words("(a média) — e", "pt") == f"(a{nb}média){nb}— e"
    assert i18n.bind_short_words("| 1 | — | — |\n— início", "pt") == "| 1 | — | — |\n— início"
    assert i18n.bind_short_words("48–144 Hz", "en") == f"48–144{nb}Hz"  # a range: no space


def test_a_unit_stays_on_the_line_of_its_number() -> None:
    """"4,2 / мс — 240." (ru high-fps-bad-lows.pdf p1, once the dash was bound): a number and
    its unit are joined by a no-break space in every language; a word that only starts like a
    unit is not."""
    nb = "\u00a0"
    assert i18n.bind_short_words("16,7 мс — это 60 FPS, 4,2 мс — 240.", "ru") == (
        f"16,7{nb}мс{nb}— это 60{nb}FPS, 4,2{nb}мс{nb}— 240.")
    assert i18n.bind_short_words("16.7 ms at 60 Hz, 3 msg", "en") == (
        f"16.7{nb}ms at 60{nb}Hz, 3 msg")


def test_short_words_go_to_the_start_of_the_next_line_in_russian_and_portuguese() -> None:
    """Russian: one- and two-letter prepositions, conjunctions and negations are bound to the
    next word, and the particles бы, ли, же to the word before them (they never start a line).
    Portuguese: only the one-letter words a, à, o, e are bound; de, em, do, da and the other
    two-letter words stay breakable (see the comment on _BEFORE in certgen/render/i18n.py)."""
    nb = "\u00a0"
    assert i18n.bind_short_words("На экране не хуже, но по кадрам", "ru") == (
        f"На{nb}экране не{nb}хуже, но{nb}по{nb}кадрам")
    assert i18n.bind_short_words("был бы тот же, так ли", "ru") == (
        f"был{nb}бы тот{nb}же, так{nb}ли")
    assert i18n.bind_short_words("из-за него, бытие, жесть", "ru") == "из-за него, бытие, жесть"
    assert i18n.bind_short_words("A taxa e o valor à vista de 60 em 2026", "pt") == (
        f"A{nb}taxa e{nb}o{nb}valor à{nb}vista de 60 em 2026")


@pytest.mark.parametrize("lang", ["ru", "pt"])
def test_every_message_is_typeset(lang: str) -> None:
    """Every message of the merged Russian and Portuguese catalogs comes out with its short
    words and dashes bound."""
    catalog = i18n.translations(lang)._catalog  # type: ignore[attr-defined]
    loose = [text for key, text in catalog.items() if key and text
             and i18n.bind_short_words(text, lang) != text]
    assert loose == []
    assert any("\u00a0" in text for text in catalog.values())


def test_missing_translation_is_an_error_not_english() -> None:
    """A message with no translation is certgen's bug (exit 70), never English instead."""
    with pytest.raises(InternalError) as info:
        i18n.gettext_for("ru")("A sentence nobody translated")
    assert str(info.value) == (
        "locales/ru/LC_MESSAGES: no translation for 'A sentence nobody translated'"
    )
    assert i18n.gettext_for("en")("A sentence nobody translated") == "A sentence nobody translated"


def test_unknown_language_is_refused() -> None:
    with pytest.raises(RenderError) as info:
        i18n.translations("de")
    assert str(info.value) == "language 'de': expected one of en, ru, pt"


def test_all_po_files_of_a_language_are_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """certgen.po gives the header; compare.po and site.po add their own messages."""
    folder = tmp_path / "ru" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    base = (locales_dir() / "ru" / "LC_MESSAGES" / "certgen.po").read_text(encoding="utf-8")
    (folder / "certgen.po").write_text(base, encoding="utf-8")
    (folder / "zz_extra.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "Before"\nmsgstr "До"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "locales_dir", lambda: tmp_path)
    merged = i18n.translations("ru")
    assert merged.gettext("Before") == "До"
    assert merged.ngettext("%(num)d run", "%(num)d runs", 3) % {"num": 3} == "3 прогона"


def test_glossary_has_every_language_for_every_term() -> None:
    terms = i18n.glossary()
    assert "consistency_gap" in terms
    for key, entry in terms.items():
        assert sorted(entry) == ["en", "pt", "ru"], key
    assert i18n.term("cohort", "ru") == terms["cohort"]["ru"]


def test_certgen_po_holds_exactly_the_messages_the_certificate_uses() -> None:
    """A message added to a template must be added to the catalogs; a stale one removed."""
    with (locales_dir() / "en" / "LC_MESSAGES" / "certgen.po").open("rb") as fh:
        catalog = {(m.id, None) if isinstance(m.id, str) else (m.id[0], m.id[1])
                   for m in read_po(fh) if m.id}
    assert sorted(set(i18n.extract_certificate_messages()) ^ catalog) == []
