"""Rules files are read through a strict schema (issue 22, item 5), like card.yaml and lab.yaml.

A rules file with `calibrated: "false"` and a misspelt `calibratd: true` once loaded as
calibrated = True, silently. Unknown keys, wrong types (strict: the text "false" is not a
boolean) and duplicate keys are each refused in one line `<file>:<line>: <field>: <what>`, and
the packaged rules and the tests' v1.2-test rules load to exactly the values they always had.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from bundlekit import run_cli, simple_bundle

from certgen.errors import RulesError
from certgen.sop import RULES_PATH_ENV, Rules, available_sops, load_rules, parse_rules

ROOT = Path(__file__).resolve().parent.parent
SOP = "SOP-GPU-001 v9.9-test"
NAME = "sop-gpu-001-v9.9-test.yaml"

# A complete, valid rules file; the line numbers the tests quote are this text's.
GOOD = """\
sop: SOP-GPU-001 v9.9-test
rules_version: sop-gpu-001-v9.9-test
fluidity_weights:
  consistency_gap: 0.7
  stutter: 0.3
grade_lines:
  gold: 88
  platinum: 95
grades: [PLATINUM, GOLD, SILVER]
no_measured_tier_cap: SILVER
soft_limit:
  stutter: 0.60
rerun:
  stutter: 0.60
ranking:
  min_cohort: 30
calibrated: false
calibration_fleet_target: 300
calibration_statement:
  en: >-
    Test rules.
  ru: Тестовые правила.
"""


def _refusal(text: str) -> str:
    with pytest.raises(RulesError) as info:
        parse_rules(text.encode("utf-8"), NAME)
    return str(info.value)


def _edit(old: str, new: str) -> str:
    assert GOOD.count(old) == 1, old
    return GOOD.replace(old, new)


def test_the_good_file_loads() -> None:
    rules = parse_rules(GOOD.encode("utf-8"), NAME)
    assert (rules.sop, rules.gold_line, rules.calibrated, rules.ranking_min_cohort) == (
        SOP, 88.0, False, 30)
    assert rules.calibration_statement == (("en", "Test rules."), ("ru", "Тестовые правила."))


# ------------------------------------------------------------------ the three Must-show cases


def test_calibrated_false_as_a_text_is_refused_not_read_as_true() -> None:
    assert _refusal(_edit("calibrated: false", 'calibrated: "false"')) == (
        "sop-gpu-001-v9.9-test.yaml:17: calibrated: expected true or false, got 'false'")


def test_an_unknown_key_is_refused_with_the_key_it_was_meant_to_be() -> None:
    text = _edit("calibration_fleet_target: 300", "calibration_fleet_target: 300\ncalibratd: true")
    assert _refusal(text) == (
        "sop-gpu-001-v9.9-test.yaml:19: calibratd: unknown key (did you mean 'calibrated'?)")


def test_a_duplicate_key_is_refused_naming_both_lines() -> None:
    text = _edit("calibration_fleet_target: 300", "calibration_fleet_target: 300\ncalibrated: true")
    assert _refusal(text) == (
        "sop-gpu-001-v9.9-test.yaml:19: calibrated: duplicate key (first at line 17)")


def test_the_issue_s_file_is_refused_for_both_of_its_problems_one_line_each() -> None:
    """`calibrated: "false"` and `calibratd: true`: once calibrated = True, now two lines."""
    text = _edit("calibrated: false", 'calibrated: "false"\ncalibratd: true')
    assert _refusal(text).splitlines() == [
        "sop-gpu-001-v9.9-test.yaml:17: calibrated: expected true or false, got 'false'",
        "sop-gpu-001-v9.9-test.yaml:18: calibratd: unknown key (did you mean 'calibrated'?)",
    ]


# ------------------------------------------------------------------ every kind of refusal


@pytest.mark.parametrize(("old", "new", "message"), [
    ("  gold: 88", '  gold: "88"', "7: grade_lines.gold: expected a number, got '88'"),
    ("  consistency_gap: 0.7", "  consistency_gap: true",
     "4: fluidity_weights.consistency_gap: expected a number, got 'true'"),
    ("  stutter: 0.3", "  stutter: .inf", "5: fluidity_weights.stutter: expected a finite number, "
                                          "got 'inf'"),
    ("  min_cohort: 30", "  min_cohort: 30.5",
     "16: ranking.min_cohort: expected a whole number, got '30.5'"),
    ("  min_cohort: 30", "  min_cohort: true",
     "16: ranking.min_cohort: expected a whole number, got 'true'"),
    ("calibrated: false", "calibrated: 0", "17: calibrated: expected true or false, got '0'"),
    ("calibration_fleet_target: 300", 'calibration_fleet_target: "300"',
     "18: calibration_fleet_target: expected a whole number, got '300'"),
    ("rules_version: sop-gpu-001-v9.9-test", "rules_version: 1.2",
     "2: rules_version: expected a text, got '1.2'"),
    ("grades: [PLATINUM, GOLD, SILVER]", "grades: [PLATINUM, 2, SILVER]",
     "9: grades[1]: expected a text, got '2'"),
    ("grades: [PLATINUM, GOLD, SILVER]", "grades: PLATINUM",
     "9: grades: expected a list, got 'PLATINUM'"),
    ("soft_limit:\n  stutter: 0.60", "soft_limit: 0.60",
     "11: soft_limit: expected a mapping, got '0.6'"),
    ("  ru: Тестовые правила.", "  ru: [a]", "22: calibration_statement.ru: expected a text, "
                                             "got a list"),
    ("  platinum: 95", "  platinum: 95\n  silver: 70",
     "9: grade_lines.silver: unknown key"),
    ("  platinum: 95", "  platinum: 95\n  platnum: 95",
     "9: grade_lines.platnum: unknown key (did you mean 'platinum'?)"),
    ("  platinum: 95", "  platinum: 95\n  platinum: 96",
     "9: grade_lines.platinum: duplicate key (first at line 8)"),
])
def test_each_wrong_type_unknown_key_and_duplicate_is_one_line(
        old: str, new: str, message: str) -> None:
    assert _refusal(_edit(old, new)) == f"{NAME}:{message}"


def test_a_missing_key_is_named_at_the_mapping_that_lacks_it() -> None:
    assert _refusal(_edit("  platinum: 95\n", "")) == (
        f"{NAME}:6: grade_lines.platinum: required key missing")
    assert _refusal(_edit("ranking:\n  min_cohort: 30\n", "")) == (
        f"{NAME}: ranking: required key missing")


def test_every_problem_of_a_file_is_reported_at_once_in_file_order() -> None:
    text = _edit("  gold: 88", '  gold: "88"').replace("calibrated: false", "calibrated: no!")
    text = text.replace("grades: [PLATINUM, GOLD, SILVER]", "grades: [PLATINUM, GOLD, SILVER]\n"
                                                            "grades: []")
    with pytest.raises(RulesError) as info:
        parse_rules(text.encode("utf-8"), NAME)
    assert str(info.value).splitlines() == [
        f"{NAME}:7: grade_lines.gold: expected a number, got '88'",
        f"{NAME}:10: grades: duplicate key (first at line 9)",
        f"{NAME}:18: calibrated: expected true or false, got 'no!'",
    ]
    # The error's own fields are the first problem's.
    assert (info.value.file, info.value.line, info.value.field) == (NAME, 7, "grade_lines.gold")


def test_a_file_that_is_not_a_mapping_or_not_yaml_is_refused_in_one_line() -> None:
    assert _refusal("- a\n- b\n") == f"{NAME}: expected a mapping at the top level"
    assert _refusal("sop: [unclosed\n") == (
        f"{NAME}:2: invalid YAML: expected ',' or ']', but got '<stream end>'")
    with pytest.raises(RulesError) as info:
        parse_rules(b"\xff\xfe", NAME)
    assert str(info.value) == f"{NAME}: expected UTF-8 text"


# ------------------------------------------------------------------ loading by SOP name


@pytest.fixture
def rules_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sop"
    folder.mkdir()
    monkeypatch.setenv(RULES_PATH_ENV, str(folder))
    return folder


def test_a_rules_file_on_the_search_path_is_refused_by_load_rules(rules_dir: Path) -> None:
    (rules_dir / NAME).write_text(_edit("calibrated: false", 'calibrated: "false"'),
                                  encoding="utf-8")
    with pytest.raises(RulesError) as info:
        load_rules(SOP)
    assert str(info.value) == f"{NAME}:17: calibrated: expected true or false, got 'false'"
    # Never listed under a name it does not validly declare, and never in the way of another
    # SOP's bundles: left out of the known SOPs, refused only when its SOP is asked for.
    assert available_sops() == ["SOP-GPU-001 v1.1"]


def test_the_cli_refuses_a_bundle_under_a_malformed_rules_file_in_one_line(
        tmp_path: Path, rules_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (rules_dir / NAME).write_text(
        _edit("calibration_fleet_target: 300", "calibration_fleet_target: 300\ncalibratd: true"),
        encoding="utf-8")
    bundle = simple_bundle(tmp_path / "b", [(100.0, 85.0, 75.0)], certificate={
        "id": "T-1", "issued": "2026-11-29", "sop": SOP, "languages": ["en"]})
    code, out, err = run_cli(["check", str(bundle)], capsys)
    assert (code, out) == (1, "")
    assert err == ("certgen: sop-gpu-001-v9.9-test.yaml:19: calibratd: unknown key "
                   "(did you mean 'calibrated'?)\n")


V11_VALUES = Rules(
    sop="SOP-GPU-001 v1.1", rules_version="sop-gpu-001-v1.1", weight_gap=0.7,
    weight_stutter=0.3, gold_line=88.0, platinum_line=95.0, grades=("PLATINUM", "GOLD", "SILVER"),
    no_measured_tier_cap="SILVER", soft_limit_stutter=0.6, rerun_stutter=0.6,
    ranking_min_cohort=30, calibrated=False, calibration_fleet_target=300,
)


def test_the_packaged_rules_load_to_the_values_they_always_had() -> None:
    rules = load_rules("SOP-GPU-001 v1.1")
    got = {k: v for k, v in dataclasses.asdict(rules).items()
           if k not in ("calibration_statement", "file", "sha256")}
    want = {k: v for k, v in dataclasses.asdict(V11_VALUES).items()
            if k not in ("calibration_statement", "file", "sha256")}
    assert got == want
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
    assert [lang for lang, _ in rules.calibration_statement] == ["en", "pt", "ru"]
    assert rules.calibration_text("en").startswith("The 0.7 / 0.3 weights, the 88 and 95 grade "
                                                   "lines, the 0.60 stutter Soft Limit")
    assert "\n" not in rules.calibration_text("en")  # folded to one line as before
    assert rules.file == "sop-gpu-001-v1.1.yaml"


def test_the_tests_v1_2_rules_load_to_their_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RULES_PATH_ENV, str(ROOT / "tests" / "data" / "sop"))
    rules = load_rules("SOP-GPU-001 v1.2-test")
    assert (rules.weight_gap, rules.weight_stutter, rules.gold_line, rules.platinum_line,
            rules.soft_limit_stutter, rules.rerun_stutter, rules.ranking_min_cohort,
            rules.calibrated, rules.calibration_fleet_target) == (
        0.5, 0.5, 80.0, 92.0, 0.5, 0.5, 10, False, 300)
    assert isinstance(rules.gold_line, float) and isinstance(rules.ranking_min_cohort, int)
