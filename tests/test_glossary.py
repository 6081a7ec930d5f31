"""locales/glossary.yaml is applied: the ru and pt catalogs and explainers use each decided term
and none of the variants the glossary rejects, keep multi-word terms on one line (U+00A0), and
write percentages in the locale's form (Babel: ru "4,12 %" with U+00A0, pt "4,12%")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from babel.messages.pofile import read_po

from certgen.support.paths import locales_dir

NBSP = "\u00a0"
LANGS = ("ru", "pt")


def _glossary() -> dict[str, Any]:
    with (locales_dir() / "glossary.yaml").open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def _texts(lang: str) -> list[tuple[str, str]]:
    """(where, text) of every translated message and every explainer page of `lang`."""
    out: list[tuple[str, str]] = []
    for path in sorted((locales_dir() / lang / "LC_MESSAGES").glob("*.po")):
        with path.open("rb") as fh:
            for message in read_po(fh, locale=lang):
                if not message.id:
                    continue
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                for text in strings:
                    first = message.id if isinstance(message.id, str) else message.id[0]
                    out.append((f"{path.name}: {first[:60]!r}", text))
    for path in sorted((locales_dir() / lang / "explainers").glob("*.md")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            out.append((f"explainers/{path.name}:{lineno}", line))
    return out


def _decided() -> list[tuple[str, str, dict[str, Any]]]:
    return [(key, lang, entry) for key, entry in _glossary().items() for lang in LANGS
            if isinstance(entry, dict) and (entry.get("reject", {}).get(lang)
                                            or NBSP in str(entry.get(lang, "")))]


def _rejected(entry: dict[str, Any], lang: str) -> list[str]:
    patterns = list(entry.get("reject", {}).get(lang, []))
    chosen = str(entry[lang])
    if NBSP in chosen:
        # The same term with an ordinary space where the glossary wants a non-breaking one.
        patterns.append(re.escape(chosen).replace(NBSP, "[ ]"))
    return patterns


def _hits(pattern: str, lang: str) -> list[str]:
    regex = re.compile(pattern, re.M)
    return [f"{where}: {regex.search(text).group(0)!r}"  # type: ignore[union-attr]
            for where, text in _texts(lang) if regex.search(text)]


@pytest.mark.parametrize(("key", "lang", "entry"), _decided(),
                         ids=[f"{k}-{lang}" for k, lang, _ in _decided()])
def test_the_chosen_term_is_used_and_no_rejected_variant(
        key: str, lang: str, entry: dict[str, Any]) -> None:
    chosen = str(entry[lang])
    # The term itself or one of its declined forms listed under `forms`.
    forms = [chosen, *entry.get("forms", {}).get(lang, [])]
    word = re.compile("|".join(rf"(?<!\w){re.escape(f)}(?!\w)" for f in forms), re.I)
    assert any(word.search(text) for _, text in _texts(lang)), (key, lang, chosen)
    for pattern in _rejected(entry, lang):
        assert _hits(pattern, lang) == [], (key, lang, pattern)


def test_the_glossary_decides_the_terms_the_issue_names() -> None:
    decided = {key for key, _, _ in _decided()}
    assert {"fluidity_score", "score", "frame_pacing", "soft_limit", "consistency_gap",
            "vrm_rails", "low_1pct_fps", "low_0_1pct_fps", "phase_outcome", "address"} <= decided
    glossary = _glossary()
    assert glossary["score"]["gender"] == {"ru": "f", "pt": "f"}


def test_the_rejected_variants_would_be_caught() -> None:
    """The checks above are live: the old wordings match their patterns."""
    glossary = _glossary()
    old = {("soft_limit", "pt"): "acima do Limite Suave de 0,60",
           ("consistency_gap", "pt"): "Lacuna de consistência",
           ("vrm_rails", "pt"): "Resistência dos trilhos do VRM",
           ("frame_pacing", "pt"): "Certificado de ritmo de quadros",
           ("score", "pt"): "o score de uma faixa",
           ("score", "ru"): "Средний Fluidity Score",
           ("phase_outcome", "ru"): "пройдена",
           ("address", "ru"): "Если ты откроешь",
           ("low_0_1pct_fps", "ru"): "0.1% low",
           ("fluidity_score", "pt"): "Fluidity Score"}
    for (key, lang), text in old.items():
        assert any(re.search(p, text, re.M) for p in _rejected(glossary[key], lang)), key
    # "lacuna" stays right where it means a hole in the frame numbering
    assert not any(re.search(p, "2 lacunas na numeração dos quadros")
                   for p in _rejected(glossary["consistency_gap"], "pt"))


# A number (a digit, a page figure "{{…}}", a "%(p)s" placeholder or the letter P standing for one),
# then "%" with an ordinary space or none (ru wants U+00A0), or with any space (pt wants none).
_NUMBER = r"(?:\d|\}\}|%\(\w+\)s|\bP)"
_PERCENT = {"ru": _NUMBER + r" ?%(?!\()", "pt": _NUMBER + r"[ \u00a0]%(?!\()"}


@pytest.mark.parametrize("lang", LANGS)
def test_percentages_take_the_locale_form(lang: str) -> None:
    from certgen.render.i18n import fmt_pct

    sample = fmt_pct(0.422, lang, 1)
    assert sample == {"ru": f"42,2{NBSP}%", "pt": "42,2%"}[lang]
    assert re.search(_PERCENT[lang], sample) is None
    # the check is live: the forms the issue found are caught
    assert re.search(_PERCENT["ru"], "лучше %(p)s%% когорты")
    assert re.search(_PERCENT["ru"], "лучше {{x}} % своей когорты")
    assert re.search(_PERCENT["ru"], "42,2%")
    assert re.search(_PERCENT["pt"], "42,2 %")
    assert _hits(_PERCENT[lang], lang) == []


def test_explainers_and_catalogs_exist() -> None:
    for lang in LANGS:
        assert len(_texts(lang)) > 200
        assert Path(locales_dir() / lang / "explainers").is_dir()
