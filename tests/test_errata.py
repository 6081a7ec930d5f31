"""Known tool defects as data (issue 42): certgen/captures/errata.yaml, matched through a
capture's recorded tool and version, shown on the certificate and in `metrics --json`.

No real capture records its tool version (PresentMon never writes one into its CSV; the
CapFrameX CSV in ../shared has no AppVersion line), so the matching is tested on made-up
CapFrameX JSON sessions that record one, and on a card.yaml `tool_version`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bundlekit import card, run_cli, run_entry, write_card
from realdata import REAL
from renderkit import visible_text

from certgen.captures.detect import read_capture_file
from certgen.captures.errata import errata_for, load_errata, version_key
from certgen.commands.errata import errata_markdown
from certgen.commands.metrics import measure
from certgen.inputs.bundle import load_bundle
from certgen.model.capture import CaptureErratum
from certgen.pipeline import check_bundle
from certgen.render.certificate import render_certificate_html
from certgen.rules.provenance import tool_errata

ROOT = Path(__file__).resolve().parent.parent
CFX = "CFX-1.7.4-FRAMETIME-AS-MSBETWEENPRESENTS"


def _session(version: str | None, frames: int = 3000) -> bytes:
    """A CapFrameX JSON session of a steady 8 ms run recording its AppVersion (or none)."""
    rng = np.random.default_rng(7)
    times = [round(float(t), 3) for t in 8.0 + rng.normal(0.0, 0.3, frames)]
    info: dict[str, str] = {"GameName": "game.exe"}
    if version is not None:
        info["AppVersion"] = version
    return json.dumps({"Info": info, "Runs": [{"CaptureData": {
        "MsBetweenPresents": times, "MsBetweenDisplayChange": times}}]}).encode()


def test_the_file_is_well_formed_and_cites_every_entry() -> None:
    found = load_errata()
    assert len(found.errata) == 16
    assert all(e.source.startswith("https://github.com/") for e in found.errata)
    assert {e.tool for e in found.errata} == {"PresentMon", "NVIDIA FrameView", "MangoHud",
                                              "CapFrameX"}


def test_versions_compare_as_versions() -> None:
    assert version_key("0.8.3-rc1") < version_key("0.8.3") < version_key("0.8.10")
    assert version_key("1.7.4.0") == version_key("v1.7.4") < version_key("1.7.6_beta")
    assert version_key("bla") is None
    assert [e.id for e in errata_for("PresentMon", "2.5.0", ("MsBetweenDisplayChange",))] == []
    assert [e.id for e in errata_for("PresentMon", "2.0.1", ("MsBetweenDisplayChange",))] == [
        "PM-DISCARDED-MISMARK"]
    assert errata_for("PresentMon", None, ("MsBetweenDisplayChange",)) == ()  # never guessed


def test_a_matched_entry_is_in_metrics_json_and_an_unmatched_one_is_not(tmp_path: Path) -> None:
    old, fixed, none = (tmp_path / "old.json", tmp_path / "fixed.json", tmp_path / "none.json")
    old.write_bytes(_session("1.7.4"))
    fixed.write_bytes(_session("1.7.6"))
    none.write_bytes(_session(None))
    a, b, c = measure([str(old), str(fixed), str(none)], None, None)
    assert [e["id"] for e in a["errata"]] == [CFX]
    assert a["errata"][0] == {
        "id": CFX, "tool": "CapFrameX", "version": "1.7.4", "versions": "1.7.4 to before 1.7.6",
        "columns": ["MsBetweenPresents"], "defect": load_errata().errata[-1].defect.strip(),
        "source": "https://github.com/CXWorld/CapFrameX/commit/"
                  "9132a7e11ead8d78a925a0fb6fda7f0d57654ea7", "effect": "warn"}
    assert b["errata"] == [] and c["errata"] == []
    # The real files record no version: nothing matches them.
    for name in ("CapFrameXFileWithHeader.csv", "test_case_5.csv"):
        [capture] = read_capture_file(REAL / name, name=name)
        assert capture.errata == ()


def _bundle(root: Path, data: bytes, **run_extra: object) -> Path:
    root.mkdir(parents=True)
    (root / "s.json").write_bytes(data)
    return write_card(root, card([run_entry("Game", capture="s.json", **run_extra)]))


def test_a_matched_entry_shows_on_the_certificate_and_an_unmatched_one_shows_nothing(
        tmp_path: Path) -> None:
    matched = check_bundle(_bundle(tmp_path / "a", _session("1.7.4"))).record
    unmatched = check_bundle(_bundle(tmp_path / "b", _session("1.7.6"))).record
    run_a, run_b = matched.runs[0], unmatched.runs[0]
    assert run_a.capture is not None and [e.id for e in run_a.capture.errata or ()] == [CFX]
    assert run_b.capture is not None and run_b.capture.errata == ()
    assert matched.status.issuable, matched.status.refusals  # a warning, not a refusal
    words = {"en": "CapFrameX 1.7.4 has a known defect in MsBetweenPresents",
             "ru": "у CapFrameX 1.7.4 есть известный дефект в столбце MsBetweenPresents",
             "pt": "CapFrameX 1.7.4 tem um defeito conhecido em MsBetweenPresents"}
    for lang, text in words.items():
        shown = " ".join(visible_text(render_certificate_html(
            matched, lang, record_sha256="0" * 64)).split())
        assert text in shown and CFX in shown, lang
        html = render_certificate_html(unmatched, lang, record_sha256="0" * 64)
        assert '<div class="errata">' not in html and "CFX-" not in html, lang


def test_card_yaml_tool_version_is_used_where_the_file_records_none(tmp_path: Path) -> None:
    record = check_bundle(_bundle(tmp_path / "b", _session(None), tool_version="1.7.5")).record
    capture = record.runs[0].capture
    assert capture is not None and [e.id for e in capture.errata or ()] == [CFX]
    # The version the file records wins over card.yaml's.
    record = check_bundle(_bundle(tmp_path / "c", _session("1.7.6"), tool_version="1.7.5")).record
    capture = record.runs[0].capture
    assert capture is not None and capture.errata == ()


def test_an_entry_whose_effect_is_refuse_refuses_issue_in_one_line(tmp_path: Path) -> None:
    bundle = load_bundle(_bundle(tmp_path / "b", _session("1.7.4")))
    erratum = CaptureErratum(id="TEST-REFUSE", tool="CapFrameX", version="1.7.4",
                             versions="1.7.4 to before 1.7.6", columns=("MsBetweenPresents",),
                             defect="A made-up defect.", source="https://example.org/e",
                             effect="refuse")
    [refusal] = tool_errata(bundle.card, [(0, "s.json", (erratum,))])
    assert refusal.message == (
        'card.yaml: runs[0].capture: run "Game 2560x1440": s.json comes from CapFrameX 1.7.4, '
        "whose MsBetweenPresents has a known defect (TEST-REFUSE: A made-up defect. "
        "https://example.org/e); capture the run with a version without it")
    warn = erratum.model_copy(update={"effect": "warn"})
    assert tool_errata(bundle.card, [(0, "s.json", (warn,))]) == []


def test_the_docs_page_is_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert (ROOT / "docs" / "errata.md").read_text(encoding="utf-8") == errata_markdown()
    code, out, _ = run_cli(["errata"], capsys)
    assert code == 0 and out.splitlines()[0] == "errata version 2026.12: 16 entries"
    code, out, _ = run_cli(["errata", "--json"], capsys)
    assert code == 0 and len(json.loads(out)["errata"]) == 16
