"""Test conditions on the certificate (issue 11): the bench and how each run was made, as the lab
states them; the capture tool and length from the capture; "not stated", never a guess."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pypdf
import pytest
import yaml
from bundlekit import run_cli
from conftest import CliBuild

from certgen.record import load_record

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "examples" / "gold-rx7800xt"
LAB = ROOT / "examples" / "lab.yaml"

NOT_STATED = {"en": "not stated", "ru": "не указано", "pt": "não informado"}
HEADING = {"en": "Test conditions", "ru": "Условия испытаний", "pt": "Condições de teste"}


@pytest.fixture(scope="module")
def built(gold_build: CliBuild) -> Path:
    """GOLD built with the sample lab in every language: the session's `gold_build`
    (tests/conftest.py), which other tests read too. Read-only."""
    assert gold_build.code == 0, gold_build.stderr
    return gold_build.folder


def test_the_record_carries_the_bench_and_each_runs_conditions(built: Path) -> None:
    record = load_record((built / "record.json").read_bytes())
    card = yaml.safe_load((GOLD / "card.yaml").read_text(encoding="utf-8"))
    assert record.test_system is not None
    assert record.test_system.cpu == card["test_system"]["cpu"]
    assert record.test_system.memory_gb == 32.0
    assert record.test_system.motherboard == card["test_system"]["motherboard"]
    assert record.test_system.display == card["test_system"]["display"]
    for run, entry in zip(record.runs, card["runs"], strict=True):
        assert run.conditions is not None
        stated = entry.get("tested_on")
        assert run.conditions.tested_on == (None if stated is None else stated.isoformat())
        assert run.conditions.technician == entry.get("technician")
        assert run.conditions.game_version == entry.get("game_version")
        assert run.capture is not None and run.capture.tool in ("MangoHud", "CapFrameX",
                                                                  "PresentMon")
        # The capture length is the sum of its frame times (the chart's duration), 1 dp.
        assert run.chart is not None
        assert run.capture.duration_s == round(run.chart.duration_ms / 1000.0, 1)
        assert run.capture.tool_version is None


@pytest.mark.parametrize("lang", ["en", "ru", "pt"])
def test_each_language_prints_the_block_and_what_is_not_stated(built: Path, lang: str) -> None:
    reader = pypdf.PdfReader(io.BytesIO((built / f"certificate.{lang}.pdf").read_bytes()))
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert HEADING[lang] in text
    assert "Illustrative 8-core CPU" in text and "A. Sample" in text
    assert "2.12 (illustrative)" in text  # the sample states every condition, game builds too


def test_a_card_without_conditions_says_not_stated_everywhere(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    bundle = shutil.copytree(GOLD, tmp_path / "b")
    card = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    card.pop("test_system")
    for run in card["runs"]:
        for key in ("tested_on", "technician", "game_version"):
            run.pop(key, None)
    (bundle / "card.yaml").write_text(yaml.safe_dump(card, allow_unicode=True, sort_keys=False),
                                      encoding="utf-8")
    args = ["build", str(bundle), "--out", str(tmp_path / "o"), "--jobs", "1", "--lab", str(LAB),
            "--lang", "en"]
    code, _, err = run_cli(args, capsys)
    assert code == 1  # a certificate must state them (certgen.rules.conditions)
    assert "card.yaml: test_system: required for a certificate" in err
    code, _, err = run_cli([*args, "--draft"], capsys)
    assert code == 0, err
    record = load_record((tmp_path / "o" / "SAMPLE-GOLD-0002" / "record.json").read_bytes())
    assert record.test_system is None
    assert all(r.conditions is not None and r.conditions.tested_on is None for r in record.runs)
    html = (tmp_path / "o" / "SAMPLE-GOLD-0002" / "certificate.en.html").read_text("utf-8")
    section = html[html.index("<h2>Test conditions</h2>"):html.index("</section>", html.index(
        "<h2>Test conditions</h2>"))]
    assert section.count('<span class="muted">not stated</span>') == 5 + 3 * len(record.runs)  # CPU, memory, OS, board, display


def test_a_negative_memory_size_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    bundle = shutil.copytree(GOLD, tmp_path / "b")
    text = (bundle / "card.yaml").read_text(encoding="utf-8").replace("memory_gb: 32",
                                                                       "memory_gb: -4")
    (bundle / "card.yaml").write_text(text, encoding="utf-8")
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1
    assert "card.yaml: test_system.memory_gb: expected a number above 0" in err
