"""Text a lab writes, per language (issue 11, step 6): `{en: …, ru: …, pt: …}` or a plain
string (English) for the justification, the VRM outcomes, the grade cap's reason, a not-run
reason and the bench notes. Each certificate prints its own language's text, else the English,
else the first given, marked "(original in …)" in the page's language; every given language's
text obeys the text rules, and record.json keeps what was given."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pypdf
import pytest
import yaml
from bundlekit import (
    TEST_SYSTEM,
    card,
    frames_for,
    run_cli,
    run_entry,
    sha256_of,
    write_card,
    write_presentmon,
)

from certgen.errors import BundleErrors, RefusalError
from certgen.inputs.bundle import parse_card
from certgen.pipeline import make_record
from certgen.record import RecordError, dump_record, load_record

SAMPLE_LAB = Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"
SAMPLE_RECORD = Path(__file__).resolve().parent / "data" / "records" / "sample.json"

JUSTIFICATION = {
    "en": "Isolated **long frames** at the streaming points of the path.",
    "ru": "Единичные **длинные кадры** в точках подгрузки данных на маршруте.",
    "pt": "Quadros **longos** isolados nos pontos de carregamento do percurso.",
}
VRM_REEXAMINATION = "pass: all rails within 5% of nominal"  # a plain string: English
PHASE1 = {"en": "pass: 0.8 mOhm on every rail", "ru": "норма: 0,8 мОм на каждой шине"}
CAP_REASON = {"ru": "Фаза 2: перегрев памяти", "pt": "Fase 2: superaquecimento da memória"}
NOTES = {"en": "Open bench, room at 21 C", "pt": "Bancada aberta, sala a 21 C"}
NOT_RUN = {"ru": "игра не запускается на этой карте"}


def _bundle(root: Path) -> Path:
    """Three runs: an even one, a Soft Limit run (re-run, first capture archived) and one not
    run; lab text in every form (all languages, some, one, a plain string)."""
    write_presentmon(root / "captures/run0.csv", frames_for(120.0, 110.0, 100.0))
    write_presentmon(root / "captures/run1.csv", frames_for(100.0, 82.0, 31.9))
    first = write_presentmon(root / "archive/run1-first.csv", frames_for(100.0, 80.0, 30.0))
    runs = [
        run_entry("Game 0", capture="captures/run0.csv"),
        run_entry("Game 1", capture="captures/run1.csv",
                  first_capture={"file": "archive/run1-first.csv", "sha256": sha256_of(first)},
                  soft_limit={"justification": JUSTIFICATION,
                              "vrm_reexamination": VRM_REEXAMINATION}),
        run_entry("Game 2", not_run=NOT_RUN),
    ]
    data = card(runs, phase1={"vrm_rail_resistance": PHASE1},
                grade_cap={"grade": "SILVER", "reason": CAP_REASON},
                test_system={**TEST_SYSTEM, "cpu": "Test CPU", "notes": NOTES})
    data["certificate"]["languages"] = ["en", "ru", "pt"]
    return write_card(root, data)


def _full(text: dict[str, str]) -> dict[str, str | None]:
    return {lang: text.get(lang) for lang in ("en", "ru", "pt")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle built in en, ru and pt by the sample lab: the certificate's folder."""
    from certgen.cli import main

    root = tmp_path_factory.mktemp("lab-text")
    bundle = _bundle(root / "bundle")
    out = root / "out"
    try:
        code = main(["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB),
                     "--jobs", "1"])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert not code
    return out / "TEST-0001"


def _pdf_text(folder: Path, lang: str) -> str:
    """The PDF's text with all white space removed (lines break anywhere in a paragraph)."""
    reader = pypdf.PdfReader(io.BytesIO((folder / f"certificate.{lang}.pdf").read_bytes()))
    text = "".join(page.extract_text() for page in reader.pages)
    return "".join(text.split())


def _squeezed(text: str) -> str:
    return "".join(text.replace("**", "").split())


def test_record_json_keeps_each_language_as_given(built: Path) -> None:
    record = json.loads((built / "record.json").read_text(encoding="utf-8"))
    assert record["phase1"] == {"vrm_rail_resistance": _full(PHASE1)}
    assert record["grade"]["cap"] == {"grade": "SILVER", "reason": _full(CAP_REASON)}
    assert record["test_system"]["notes"] == _full(NOTES)
    soft = record["runs"][1]["soft_limit"]
    assert soft["justification"] == _full(JUSTIFICATION)
    assert soft["vrm_reexamination"] == VRM_REEXAMINATION  # a plain string stays one
    assert record["audit"]["soft_limit"][0]["justification"] == _full(JUSTIFICATION)
    assert record["runs"][2]["not_run_reason"] == _full(NOT_RUN)
    assert record["audit"]["not_run"] == [{"run": 2, "reason": _full(NOT_RUN)}]
    assert record["status"]["issuable"] is True


@pytest.mark.parametrize(("lang", "marks"), [
    # The page's language, then each text it shows in another language and says so (a not-run
    # reason is printed twice: in the runs table and in the list of runs not performed).
    ("en", {"original in Russian": [CAP_REASON["ru"], NOT_RUN["ru"], NOT_RUN["ru"]]}),
    ("ru", {"оригинал на английском": [NOTES["en"], VRM_REEXAMINATION]}),
    ("pt", {"original em inglês": [PHASE1["en"], VRM_REEXAMINATION],
            "original em russo": [NOT_RUN["ru"], NOT_RUN["ru"]]}),
])
def test_each_pdf_prints_its_own_languages_text_and_marks_the_others(
    built: Path, lang: str, marks: dict[str, list[str]]
) -> None:
    text = _pdf_text(built, lang)
    own = [JUSTIFICATION[lang]] + [t[lang] for t in (PHASE1, CAP_REASON, NOTES) if lang in t]
    for expected in own:
        assert _squeezed(expected) in text, (lang, expected)
    for note, shown in marks.items():
        for original in shown:
            assert _squeezed(f"{original} ({note})") in text, (lang, original, note)
    # Where the page's language is given, no other language's text is printed beside it.
    for other in ("en", "ru", "pt"):
        if other != lang:
            assert _squeezed(JUSTIFICATION[other]) not in text, (lang, other)
    marks_here = sum(text.count(_squeezed(f"({note})")) for note in marks)
    assert marks_here == sum(len(v) for v in marks.values()), lang


def test_the_html_marks_the_language_of_text_shown_in_another(built: Path) -> None:
    html = (built / "certificate.pt.html").read_text(encoding="utf-8")
    assert f'<span lang="ru">{NOT_RUN["ru"]}</span> <span class="original-note">(original em russo)' \
        in html
    assert '<div class="justification">' in html  # its own text: no lang attribute
    en = (built / "certificate.en.html").read_text(encoding="utf-8")
    assert "<strong>long frames</strong>" in en  # Markdown, rendered and sanitised


def test_a_language_given_alone_satisfies_the_soft_limit(tmp_path: Path) -> None:
    """The rules ask whether a justification is given, in whichever language."""
    bundle = _bundle(tmp_path)
    data = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    data["runs"][1]["soft_limit"] = {"justification": {"pt": JUSTIFICATION["pt"]},
                                     "vrm_reexamination": {"ru": PHASE1["ru"]}}
    write_card(bundle, data)
    assert make_record(bundle).status.issuable
    data["runs"][1]["soft_limit"] = {"vrm_reexamination": {"ru": PHASE1["ru"]}}
    write_card(bundle, data)
    with pytest.raises(RefusalError) as err:
        make_record(bundle)
    assert err.value.reasons == [
        'card.yaml: runs[1].soft_limit: run "Game 1 2560x1440" has stutter 0.6110 > 0.60; a '
        "justification is required before this certificate can be issued"]


# --- refusals: every given language obeys the text rules ---------------------------------


def _refusal(**soft_limit: Any) -> str:
    run = run_entry(capture="captures/run0.csv", soft_limit=soft_limit)
    data = yaml.safe_dump(card([run]), sort_keys=False, allow_unicode=True).encode()
    with pytest.raises(BundleErrors) as info:
        parse_card(data)
    return str(info.value)


@pytest.mark.parametrize(("justification", "expected"), [
    ({"en": "ok", "ru": ""}, "runs[0].soft_limit.justification.ru: expected a non-empty text, got ''"),
    ({"en": "ok", "ru": " \u200b\t"},
     "runs[0].soft_limit.justification.ru: expected a text with visible characters (whitespace, "
     "control and zero-width characters do not count), got ' \\u200b\\t'"),
    ({"en": "ok", "pt": "<script>alert(1)</script>"},
     "runs[0].soft_limit.justification.pt: expected a justification with visible text once "
     "sanitised (it would print as nothing), got '<script>alert(1)</script>'"),
    ({"ru": "x" * 5001}, "runs[0].soft_limit.justification.ru: expected at most 5000 characters, "
                         "got 5001"),
    ({"pt": "EVIL\u202etxt"}, "runs[0].soft_limit.justification.pt: bidirectional control U+202E "
                              "is not allowed (it reorders the text), got 'EVIL\\u202etxt'"),
    ({"ru": "a\x1bb"}, "runs[0].soft_limit.justification.ru: control character U+001B is not "
                       "allowed, got 'a\\x1bb'"),
    ({"pt-BR": "texto"}, "runs[0].soft_limit.justification.pt-BR: unknown language (expected en, "
                         "ru or pt; did you mean 'pt'?)"),
    ({"EN": "text"}, "runs[0].soft_limit.justification.EN: unknown language (expected en, ru or "
                     "pt; did you mean 'en'?)"),
    ({"fr": "texte"}, "runs[0].soft_limit.justification.fr: unknown language (expected en, ru or "
                      "pt)"),
    ({}, "runs[0].soft_limit.justification: expected the text in at least one of en, ru, pt, got "
         "a mapping"),
    ({"en": None}, "runs[0].soft_limit.justification: expected the text in at least one of en, "
                   "ru, pt, got a mapping"),
    ({"ru": 5}, "runs[0].soft_limit.justification.ru: expected a text, got '5'"),
    (["en", "text"], "runs[0].soft_limit.justification: expected a text or a mapping of "
                     "languages (en, ru, pt) to texts, got a list"),
])
def test_each_languages_text_is_checked_and_named_by_its_path(justification: Any,
                                                              expected: str) -> None:
    assert _refusal(justification=justification, vrm_reexamination="pass") == (
        f"card.yaml: {expected}")


def test_every_languages_problem_is_reported_at_once() -> None:
    assert _refusal(justification={"en": "ok", "ru": "", "pt": "y" * 5001},
                    vrm_reexamination={"ru": "\u200b", "pt": "норма\x07"}).splitlines() == [
        "card.yaml: runs[0].soft_limit.justification.ru: expected a non-empty text, got ''",
        "card.yaml: runs[0].soft_limit.justification.pt: expected at most 5000 characters, got "
        "5001",
        "card.yaml: runs[0].soft_limit.vrm_reexamination.ru: expected a text with visible "
        "characters (whitespace, control and zero-width characters do not count), got '\\u200b'",
        "card.yaml: runs[0].soft_limit.vrm_reexamination.pt: control character U+0007 is not "
        "allowed, got 'норма\\x07'",
    ]


def test_a_one_line_note_keeps_its_one_line_rule_in_every_language() -> None:
    data = card([run_entry(capture="captures/run0.csv")],
                test_system={"notes": {"en": "bench", "ru": "стенд\nвторая строка"}},
                phase1={"vrm_rail_resistance": {"pt": "aprovado\nsegunda linha"}})
    with pytest.raises(BundleErrors) as info:
        parse_card(yaml.safe_dump(data, allow_unicode=True).encode())
    assert str(info.value).splitlines() == [
        "card.yaml: test_system.notes.ru: control character U+000A is not allowed, got "
        "'стенд\\nвторая строка'",
    ]  # a Phase 1 outcome is prose: a line break is allowed there


# --- hostile text, in every language ------------------------------------------------------


def test_hostile_text_is_sanitised_or_escaped_in_every_language(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]
                                                                ) -> None:
    bundle = _bundle(tmp_path / "b")
    data = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    data["runs"][1]["soft_limit"]["justification"] = {
        "en": "ok <script>alert(1)</script> [a](https://lab.test/a)",
        "ru": "текст <iframe src='https://evil.test'></iframe> [клик](javascript:alert(1))",
        "pt": "texto <img src=x onerror=alert(1)> <a href='file:///etc/passwd'>f</a>",
    }
    data["runs"][2]["not_run"] = {"ru": "<script>alert(2)</script>нет", "pt": "{{ 7*7 }}<b>x</b>"}
    data["test_system"]["notes"] = {"en": "{% raw %}<style>body{}</style>"}
    write_card(bundle, data)
    out = tmp_path / "out"
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB),
                               "--jobs", "1"], capsys)
    assert (code, stderr) == (0, "")
    for lang in ("en", "ru", "pt"):
        html = (out / "TEST-0001" / f"certificate.{lang}.html").read_text(encoding="utf-8")
        body = html.split("<body", 1)[1]
        for bad in ("<script", "<iframe", "javascript:", "<img", "onerror", "file:", "<b>x",
                    "<style>body"):
            assert bad not in body, (lang, bad)
        # Plain text is escaped: the pt page shows its own reason, en and ru the Russian.
        assert ("{{ 7*7 }}&lt;b&gt;x&lt;/b&gt;" if lang == "pt"
                else "&lt;script&gt;alert(2)&lt;/script&gt;нет") in body, lang
        assert "{% raw %}&lt;style&gt;body{}&lt;/style&gt;" in body, lang
    assert "evil.test" not in (out / "TEST-0001" / "certificate.ru.html").read_text("utf-8")
    assert 'href="https://lab.test/a"' in (
        out / "TEST-0001" / "certificate.en.html").read_text("utf-8")


# --- record.json -----------------------------------------------------------------------


def test_an_older_record_with_plain_strings_reads_back_byte_for_byte() -> None:
    data = SAMPLE_RECORD.read_bytes()
    assert dump_record(load_record(data)) == data
    raw = json.loads(data)
    assert isinstance(raw["phase1"]["vrm_rail_resistance"], str)


def test_a_record_with_text_per_language_reads_back_byte_for_byte(built: Path) -> None:
    data = (built / "record.json").read_bytes()
    assert dump_record(load_record(data)) == data


def test_a_record_language_mapping_gives_at_least_one_language() -> None:
    raw = json.loads(SAMPLE_RECORD.read_bytes())
    raw["phase1"]["vrm_rail_resistance"] = {"en": None, "ru": None, "pt": None}
    with pytest.raises(RecordError) as err:
        load_record(json.dumps(raw, ensure_ascii=False).encode())
    assert str(err.value) == ('record.json: phase1.vrm_rail_resistance: expected a string or an '
                              'object, got {"en": null, "ru": null, "pt": null}')
