"""What each capture recorded beside what card.yaml declares, the provenance note and the scope
sentence (issue 23 step 4): record keys, the display-only comparison, the documents."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pypdf
import pytest
import yaml
from bundlekit import simple_bundle
from renderkit import visible_text

from certgen.errors import BundleError
from certgen.model import Recorded
from certgen.pipeline import make_record
from certgen.record import dump_record, load_record
from certgen.render.certificate import (
    Difference,
    declared_values,
    display_key,
    reads_the_same,
    recorded_view,
    recorded_views,
    render_certificate_html,
    render_certificate_pdf,
)
from certgen.render.i18n import LANGUAGES

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "records" / "sample.json"
EXAMPLES = ROOT / "examples"

ISSUER: dict[str, Any] = {
    "name": "Frame Lab GmbH", "address": "Musterweg 5, 10115 Berlin", "accreditation": None,
    "signatory": {"name": "Dr. Jana Weber", "role": "Head of laboratory"},
    "contact": "certs@framelab.de", "verification_base": "https://verify.framelab.de/c",
    "validity_months": 24, "valid_until": "2028-11-29", "specimen": False,
    "profile_sha256": "0" * 64,
}
NONE_RECORDED: dict[str, str | None] = dict.fromkeys(Recorded.model_fields)
TEST_SYSTEM: dict[str, Any] = {"cpu": "Ryzen 7 7800X3D", "memory_gb": 32.0,
                               "os": "Windows 11 Pro 23H2", "motherboard": "ASUS TUF B650",
                               "notes": None}


def _recorded(**values: str) -> dict[str, str | None]:
    return {**NONE_RECORDED, **values}


def with_provenance() -> dict[str, Any]:
    """sample.json with an issuer, a test system, a scope, and what each capture recorded:
    run 0 differs (driver, OS, memory, capture day; a bidi control in the driver) and carries
    a note per language; run 1 agrees, and its archived first capture records nothing
    comparable; runs 3 and 4 record nothing (PresentMon)."""
    data: dict[str, Any] = json.loads(SAMPLE.read_bytes())
    data["issuer"] = copy.deepcopy(ISSUER)
    data["test_system"] = dict(TEST_SYSTEM)
    data["certificate"]["scope"] = {
        "serial": data["card"]["serial"], "driver": data["card"]["driver"],
        "game_versions": [{"run": r["index"], "title": r["title"], "game_version": "2.13"}
                          for r in data["runs"] if r["status"] == "recorded"],
        "test_system": dict(TEST_SYSTEM),
    }
    for run in data["runs"]:
        run["conditions"] = {"game_version": "2.13", "tested_on": "2026-11-19",
                             "technician": "J. Weber"}
        run["recorded"] = None if run["status"] != "recorded" else dict(NONE_RECORDED)
        run["provenance_note"] = None
    runs = data["runs"]
    runs[0]["recorded"] = _recorded(
        gpu="NVIDIA GeForce RTX 4070 SUPER", driver="Mesa\u202e 24.2.0", os="Linux 6.8",
        cpu="Ryzen 7 7800X3D", ram="32768", resolution="2560x1440",
        captured_at="2026-11-20T10:00:00", game="cyberpunk  2077", tool="MangoHud")
    runs[0]["provenance_note"] = {
        "en": "The bench dual-boots; the capture header names the *Linux* install.",
        "ru": "Стенд с двумя системами; заголовок записи называет установку *Linux*.",
        "pt": None,
    }
    runs[1]["recorded"] = _recorded(
        gpu="example rtx 4070 super 12g", driver="566.14", os="Windows 11  Pro 23H2",
        captured_at="2026-11-19 14:03", game="Cyberpunk 2077", runtime="DX12")
    runs[1]["first_capture"]["recorded"] = _recorded(runtime="DXGI")
    return data


def _typed(data: dict[str, Any]) -> Any:
    return load_record(json.dumps(data, ensure_ascii=False).encode("utf-8"))


def _html(data: dict[str, Any], lang: str) -> tuple[str, bytes]:
    record = _typed(data)
    raw = dump_record(record)
    return render_certificate_html(record, lang, record_sha256=hashlib.sha256(raw).hexdigest(),
                                   languages=LANGUAGES), raw


def _section(html: str, cls: str) -> str:
    match = re.search(rf'<section class="{cls}">.*?</section>', html, re.S)
    assert match, cls
    return match.group(0)


def _lines(html: str) -> list[str]:
    """Visible lines, runs of ordinary spaces as one (no-break spaces are kept)."""
    return [re.sub(r"[ \t]+", " ", line).strip() for line in visible_text(html).splitlines()
            if line.strip()]


# --- the display-only comparison -------------------------------------------------------------


def test_display_key_ignores_case_and_runs_of_whitespace_only() -> None:
    assert display_key("  Windows 11\t Pro ") == display_key("windows 11 pro")
    assert display_key("1920 x 1080") != display_key("1920x1080")
    assert display_key("32768") != display_key("32 GB")


@pytest.mark.parametrize(("key", "recorded", "declared", "same"), [
    ("driver", "566.14", ("566.14",), True),
    ("driver", "r418_77", ("418.91",), True),  # an NVIDIA branch: a 418 driver
    ("driver", "r418_77", ("566.14",), False),
    ("ram", "32803468", ("32 GB",), True),  # MangoHud's MemTotal, kB
    ("gpu", "NVIDIA GeForce RTX 2080 Ti", ("TU104", "Example RTX 2080 8G"), False),
    ("gpu", "example RTX 4070 super 12G", ("AD104", "Example RTX 4070 Super 12G"), True),
    ("captured_at", "2026-11-19T10:00:00", ("2026-11-19",), True),
    ("captured_at", "2026-11-19 10:00", ("2026-11-19",), True),
    ("captured_at", "2026-11-190", ("2026-11-19",), False),
    ("captured_at", "2026-11-20T10:00:00", ("2026-11-19",), True),  # within a day
    ("captured_at", "2026-11-22T10:00:00", ("2026-11-19",), False),
    ("os", "Linux", (), False),
])
def test_reads_the_same(key: str, recorded: str, declared: tuple[str, ...], same: bool) -> None:
    assert reads_the_same(key, recorded, declared) is same


def test_only_what_differs_is_listed_and_nothing_recorded_is_not_agreement() -> None:
    record = _typed(with_provenance())
    runs, firsts = recorded_views(record)
    # The same rules as the issue checks (certgen.rules.agreement): the GPU agrees with the card's
    # model once the vendor words are set aside, and a capture a day from tested_on agrees;
    # 32768 kB of MemTotal is not 32 GB.
    assert runs[0].differences == (
        Difference("driver", "Mesa\\u202e 24.2.0", "566.14"),
        Difference("os", "Linux 6.8", "Windows 11 Pro 23H2"),
        Difference("ram", "32768", "32 GB"),
    )
    assert runs[0].compared == 8 and not runs[0].agrees
    assert runs[1].agrees and runs[1].compared == 5
    # Runtime and tool have nothing declared beside them: not compared, and no check mark.
    assert not firsts[1].agrees and firsts[1].compared == 0 and firsts[1].differences == ()
    assert not runs[3].agrees and runs[3].compared == 0
    assert 2 not in runs  # not run


def test_a_value_card_yaml_does_not_state_is_a_difference_with_nothing_declared() -> None:
    data = with_provenance()
    data["test_system"] = None
    record = _typed(data)
    run = record.runs[0]
    view = recorded_view(run.recorded, declared_values(record, run))
    assert Difference("cpu", "Ryzen 7 7800X3D", None) in view.differences


def test_a_record_of_an_older_certgen_shows_no_recorded_line_and_no_scope() -> None:
    data: dict[str, Any] = json.loads(SAMPLE.read_bytes())
    data["issuer"] = copy.deepcopy(ISSUER)
    html, _ = _html(data, "en")
    assert 'class="recorded' not in html and 'class="scope"' not in html
    assert "As recorded by the capture" not in html


# --- the documents ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_recorded_values_notes_and_scope_snapshot(lang: str, snapshot: Any) -> None:
    html, _ = _html(with_provenance(), lang)
    shown = {"issuer": _lines(_section(html, "issuer")),
             "conditions": _lines(_section(html, "conditions"))}
    assert shown == snapshot


@pytest.mark.parametrize(("lang", "label", "agrees", "scope"), [
    ("en", "As recorded by the capture", "agrees with the declared values",
     "The grade covers this unit only (serial number EX4070S-0001), with driver 566.14"),
    ("ru", "По\u00a0данным записи", "совпадает с\u00a0заявленными значениями",
     "Класс относится только к\u00a0этому экземпляру карты (серийный номер EX4070S-0001)"),
    ("pt", "Segundo a\u00a0captura", "confere com os valores declarados",
     "A\u00a0classificação vale somente para esta unidade (número de série EX4070S-0001)"),
])
def test_each_language_words_the_comparison_and_the_scope(
        lang: str, label: str, agrees: str, scope: str) -> None:
    html, _ = _html(with_provenance(), lang)
    text = " ".join(_lines(html))
    assert label in text and agrees in text and scope in text
    assert "Mesa\\u202e 24.2.0" in text and "\u202e" not in html  # escaped, never reordering


def test_the_note_is_in_the_readers_language_else_marked_as_the_original() -> None:
    html_ru, _ = _html(with_provenance(), "ru")
    html_pt, _ = _html(with_provenance(), "pt")
    assert "заголовок записи называет установку <em>Linux</em>" in html_ru
    assert '<div class="provenance-note" lang="en">' in html_pt
    assert "(original em inglês)" in " ".join(_lines(html_pt))


def test_markup_in_recorded_values_and_notes_is_shown_as_text() -> None:
    data = with_provenance()
    data["runs"][0]["recorded"]["gpu"] = "<script>alert(1)</script>{{ 7*7 }}"
    data["runs"][0]["provenance_note"] = "<iframe src=x></iframe>ok"
    html, _ = _html(data, "en")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;{{ 7*7 }}" in html
    assert "<iframe" not in html


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_pdf_prints_the_recorded_values_the_note_and_the_scope(lang: str) -> None:
    data = with_provenance()
    html, raw = _html(data, lang)
    pdf = render_certificate_pdf(html, _typed(data), raw, lang)
    text = " ".join(" ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)
                    .split())
    expected = {"en": ("Linux 6.8", "dual-boots", "EX4070S-0001"),
                "ru": ("Linux 6.8", "двумя системами", "EX4070S-0001"),
                "pt": ("Linux 6.8", "dual-boots", "EX4070S-0001")}[lang]
    assert all(word in text for word in expected)


# --- record.json -----------------------------------------------------------------------------


def test_the_new_keys_round_trip_byte_for_byte() -> None:
    raw = json.dumps(with_provenance(), ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
    assert dump_record(load_record(raw)) == raw


def test_a_record_written_before_the_new_keys_reads_back_byte_for_byte() -> None:
    """A record built now, with every key of this step taken out, is what an older certgen
    wrote: it loads and is written back without them."""
    data = json.loads(dump_record(make_record(EXAMPLES / "gold-rx7800xt")))
    del data["certificate"]["scope"]
    for run in data["runs"]:
        del run["recorded"], run["provenance_note"]
        if run["first_capture"] is not None:
            del run["first_capture"]["recorded"]
    raw = json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
    record = load_record(raw)
    assert record.certificate.scope is None and record.runs[0].recorded is None
    assert dump_record(record) == raw


def test_the_pipeline_carries_recorded_values_note_and_scope(tmp_path: Path) -> None:
    root = simple_bundle(tmp_path / "b", [(120.0, 100.0, 90.0), (110.0, 95.0, 85.0)])
    card = yaml.safe_load((root / "card.yaml").read_text(encoding="utf-8"))
    card["runs"][0]["game_version"] = "1.0.4"
    card["runs"][1]["provenance_note"] = {"en": "Driver hotfix installed.", "ru": "Исправление."}
    (root / "card.yaml").write_text(yaml.safe_dump(card, sort_keys=False, allow_unicode=True),
                                    encoding="utf-8")
    record = make_record(root)
    assert record.runs[0].recorded == Recorded()  # PresentMon records none of these
    assert record.runs[0].provenance_note is None
    assert record.runs[1].provenance_note is not None
    assert record.runs[1].provenance_note.model_dump() == {
        "en": "Driver hotfix installed.", "ru": "Исправление.", "pt": None}
    scope = record.certificate.scope
    assert scope is not None and (scope.serial, scope.driver) == ("EX-0001", "566.14")
    assert [(g.run, g.game_version) for g in scope.game_versions] == [(0, "1.0.4"), (1, None)]
    data = json.loads(dump_record(record))
    assert list(data["runs"][0])[-3:] == ["recorded", "provenance_note", "measured"]
    assert list(data["runs"][0]["recorded"]) == list(Recorded.model_fields)


def test_a_provenance_note_follows_the_justification_rules(tmp_path: Path) -> None:
    root = simple_bundle(tmp_path / "b", [(120.0, 100.0, 90.0)])
    card = yaml.safe_load((root / "card.yaml").read_text(encoding="utf-8"))
    card["runs"][0]["provenance_note"] = "<script></script>"
    (root / "card.yaml").write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    with pytest.raises(BundleError, match=r"runs\[0\]\.provenance_note"):
        make_record(root)
