"""An incomplete capture's reasons reach a certificate in its language, from
`capture.incomplete_detail` (codes and counts), not from the reader's English text."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from certgen.record import dump_record, load_record
from certgen.render.certificate import render_certificate_html

SAMPLE = Path(__file__).parent / "data" / "records" / "sample.json"
NBSP = "\u00a0"
ENGLISH = "no end line (the process did not exit cleanly); 3 lines missing in 2 tick gaps"


def _render(record: dict[str, Any], lang: str) -> str:
    typed = load_record(json.dumps(record, ensure_ascii=False).encode("utf-8"))
    data = dump_record(typed)
    return render_certificate_html(typed, lang, record_sha256=hashlib.sha256(data).hexdigest())


def _incomplete(details: list[dict[str, Any]] | None, reason: str = ENGLISH) -> dict[str, Any]:
    """The sample with run 1 incomplete and its re-run refused for want of a first capture."""
    record = json.loads(SAMPLE.read_text(encoding="utf-8"))
    capture = record["runs"][0]["capture"]
    capture.update({"incomplete": True, "incomplete_reason": reason})
    if details is not None:
        capture["incomplete_detail"] = details
    record["status"] = {
        "issuable": False, "draft": True, "refusals": ["english message"],
        "refusal_details": [{"code": "rerun_first_capture_missing", "run": 0,
                             "why": {"code": "incomplete", "reason": reason}}]}
    return record


def _spaced(text: str) -> str:
    """The wording without the typography's no-break spaces (certgen.render.i18n places them;
    these tests check the words and the numbers' grouping)."""
    return text.replace(NBSP, " ")


DETAILS = [{"code": "no_end_line"}, {"code": "tick_gaps", "missing_lines": 3, "gaps": 2}]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "incomplete capture: " + ENGLISH.replace("tick gaps", "gaps in the tick numbers")),
        ("ru", ("неполная запись: нет строки завершения (процесс завершился нештатно); "
                f"пропущены 3 строки в{NBSP}2 разрывах нумерации кадров")),
        ("pt", ("captura incompleta: sem linha final (o processo não terminou normalmente); "
                "3 linhas faltando em 2 lacunas na numeração dos quadros")),
    ],
)
def test_reasons_are_worded_in_the_language(lang: str, expected: str) -> None:
    html = _render(_incomplete(DETAILS), lang)
    assert _spaced(expected) in _spaced(html)
    if lang != "en":
        assert "did not exit cleanly" not in html


@pytest.mark.parametrize(
    ("lines", "gaps", "dropped", "ru"),
    [
        (1, 1, 1, (f"пропущена 1 строка в{NBSP}1 разрыве нумерации кадров; строка завершения сообщает о{NBSP}"
                   "1 потерянной строке")),
        (3, 2, 4, (f"пропущены 3 строки в{NBSP}2 разрывах нумерации кадров; строка завершения сообщает "
                   f"о{NBSP}4 потерянных строках")),
        (1234, 2, 0, (f"пропущены 1\u00a0234 строки в{NBSP}2 разрывах нумерации кадров; строка "
                      f"завершения сообщает о{NBSP}0 потерянных строках")),
        (5, 5, 11, (f"пропущено 5 строк в{NBSP}5 разрывах нумерации кадров; строка завершения сообщает "
                    f"о{NBSP}11 потерянных строках")),
        (21, 21, 22, (f"пропущена 21 строка в{NBSP}21 разрыве нумерации кадров; строка завершения "
                      f"сообщает о{NBSP}22 потерянных строках")),
        (1235, 2, 1234, (f"пропущено 1{NBSP}235 строк в{NBSP}2 разрывах нумерации кадров; строка "
                         f"завершения сообщает о{NBSP}1{NBSP}234 потерянных строках")),
    ],
)
def test_russian_counts_take_their_plural_forms_and_locale_digits(
    lines: int, gaps: int, dropped: int, ru: str
) -> None:
    details = [{"code": "tick_gaps", "missing_lines": lines, "gaps": gaps},
               {"code": "dropped_lines", "dropped": dropped}]
    assert ru in _render(_incomplete(details), "ru")


def test_frame_count_mismatch_in_each_language() -> None:
    details = [{"code": "frame_count_mismatch", "frames": 1500, "dropped": 2, "lines": 1490}]
    expected = {
        "en": "frames by the end line: 1,500 (dropped: 2); frame lines in the file: 1,490",
        "ru": (f"кадров по строке завершения: 1{NBSP}500 (потеряно: 2); строк кадров в{NBSP}файле: "
               f"1{NBSP}490"),
        "pt": ("quadros segundo a linha final: 1.500 (perdidos: 2); linhas de quadros no "
               "arquivo: 1.490"),
    }
    for lang, text in expected.items():
        assert _spaced(text) in _spaced(_render(_incomplete(details), lang)), lang


def test_a_record_without_details_or_with_an_unknown_code_shows_the_english_reason() -> None:
    shown = f"неполная запись: {ENGLISH}"
    assert shown in _render(_incomplete(None), "ru")
    newer = [{"code": "no_end_line"}, {"code": "from_a_newer_certgen"}]
    assert shown in _render(_incomplete(newer), "ru")
