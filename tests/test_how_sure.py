"""How sure is the grade (issue 41): the decision rule, each gate's margin, repeat captures and
the non-binary verdicts beside the SOP grade (certgen.rules.uncertainty)."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import scipy.stats
from bundlekit import (
    card,
    frames_for,
    run_cli,
    run_entry,
    simple_bundle,
    write_card,
    write_presentmon,
)
from realdata import REAL
from rendercache import RenderCache, dask_preload

from certgen.errors import RulesError
from certgen.inputs.bundle import load_bundle
from certgen.model.verdict import Tier
from certgen.pipeline import check_bundle, record_from_bundle, uncertainty_from_record
from certgen.record import dump_record
from certgen.rules.uncertainty import (
    RunScores,
    captures_needed,
    figure_spread,
    gate_verdict,
    recorded_runs,
    repeat_differences,
    run_variance,
    tier_interval,
    uncertainty_of,
    uncertainty_problems,
)
from certgen.sop import load_rules, parse_rules

ROOT = Path(__file__).resolve().parents[1]

# Three captures of each run: the recorded one first, then two repeats a little apart, as a
# second capture of the same configuration is (avg, 1% low, 0.1% low FPS).
RUNS: list[tuple[str, str, list[tuple[float, float, float]]]] = [
    ("A", "1920x1080", [(120.0, 104.0, 96.0), (119.0, 102.5, 93.0), (121.0, 105.0, 97.5)]),
    ("B", "1920x1080", [(110.0, 98.0, 92.0), (111.0, 99.5, 94.0), (109.0, 96.5, 90.0)]),
    ("C", "2560x1440", [(90.0, 84.0, 80.0), (90.5, 84.5, 81.0), (89.5, 83.5, 79.0)]),
    ("D", "2560x1440", [(80.0, 72.0, 66.0), (81.0, 73.5, 68.0), (79.0, 70.5, 64.0)]),
]


def repeats_bundle(root: Path, captures: int = 3, runs: list[Any] | None = None) -> Path:
    """A bundle whose runs each carry captures − 1 repeats (card.yaml runs[].repeats)."""
    entries = []
    for title, resolution, figures in runs or RUNS:
        names = []
        for j, (avg, low1, low01) in enumerate(figures[:captures]):
            rel = f"captures/{title}-{j}.csv"
            write_presentmon(root / rel, frames_for(avg, low1, low01))
            names.append(rel)
        extra: dict[str, Any] = {"capture": names[0]}
        if names[1:]:
            extra["repeats"] = [{"capture": name} for name in names[1:]]
        entries.append(run_entry(title, resolution, **extra))
    return write_card(root, card(entries))


def without_repeats(root: Path, to: Path) -> Path:
    shutil.copytree(root, to)
    data = _card(root)
    for run in data["runs"]:
        run.pop("repeats", None)
    return write_card(to, data)


def _card(root: Path) -> dict[str, Any]:
    import yaml

    loaded: dict[str, Any] = yaml.safe_load((root / "card.yaml").read_text(encoding="utf-8"))
    return loaded


# --------------------------------------------------------------------------- the decision rule


def test_the_decision_rule_is_data_and_v1_1_applies_simple_acceptance() -> None:
    rules = load_rules("SOP-GPU-001 v1.1")
    assert rules.decision_rule == "simple acceptance"
    text = (ROOT / "certgen" / "sop" / "sop-gpu-001-v1.1.yaml").read_bytes()
    assert b"decision_rule" not in text  # the released file's bytes stay as released
    named = parse_rules(text + b'decision_rule: "simple acceptance"\n', "x.yaml")
    assert named.decision_rule == "simple acceptance"
    with pytest.raises(RulesError) as err:
        parse_rules(text + b'decision_rule: "guard band"\n', "x.yaml")
    assert str(err.value).startswith("x.yaml:")
    assert "decision_rule: expected 'simple acceptance', got 'guard band'" in str(err.value)


# --------------------------------------------------------------------------- without repeats


def test_without_repeats_every_gate_is_not_estimated_with_its_reason_and_margins_present(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = simple_bundle(tmp_path, [(100.0, 99.0, 98.0), (100.0, 90.0, 85.0)])
    code, out, err = run_cli(["check", str(bundle), "--json"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    margins = data["gate_margins"]
    assert margins == data["uncertainty"]["gates"]
    assert data["uncertainty"]["decision_rule"] == "simple acceptance"
    assert [(g["gate"], g["tier"]) for g in margins] == [("gold", "2560x1440"),
                                                         ("platinum", "2560x1440")]
    [tier] = data["tiers"]
    for gate in margins:
        assert set(gate) == {"gate", "tier", "line", "mean", "margin", "interval", "verdict",
                             "reason"}
        assert gate["mean"] == tier["mean_fluidity"]
        assert gate["margin"] == round(tier["mean_fluidity"] - gate["line"], 2)
        assert gate["interval"] is None and gate["verdict"] == "not estimated"
        assert gate["reason"] == ("runs 1, 2 have one capture; an interval for tier 2560x1440 "
                                  "needs two captures or more of every scored run")


# --------------------------------------------------------------------------- three captures


def test_three_captures_per_run_give_intervals_and_verdicts_beside_an_unchanged_grade(
        tmp_path: Path) -> None:
    bundle = repeats_bundle(tmp_path / "with")
    record = check_bundle(bundle).record
    u = record.uncertainty
    assert u is not None and record.status.issuable, record.status.refusals
    # Per run: every SOP figure over its three captures, with a t-interval of one capture.
    for run, (_, _, figures) in zip(u.runs, RUNS, strict=True):
        assert run.captures == 3 and len(run.repeats) == 2
        spread = {f.figure: f for f in run.figures}
        avg = spread["avg_fps"]
        assert avg.values == tuple(f[0] for f in figures)
        mean = sum(f[0] for f in figures) / 3
        sd = math.sqrt(sum((f[0] - mean) ** 2 for f in figures) / 2)
        half = scipy.stats.t.ppf(0.975, 2) * sd / math.sqrt(3)
        assert avg.mean == pytest.approx(mean, abs=0.005)
        assert avg.sd == pytest.approx(sd, abs=0.005)
        assert avg.interval == pytest.approx((mean - half, mean + half), abs=0.005)
        score = spread["fluidity_score"]
        assert score.interval is not None and score.not_estimated is None
        assert score.cv == pytest.approx((score.sd or 0) / abs(score.mean or 1), abs=1e-4)
    # Per tier and gate: an interval, and a verdict that follows from it and the line alone.
    assert all(t.interval is not None and t.reason is None for t in u.tiers)
    assert len(u.gates) == 4
    for gate in u.gates:
        assert gate.interval is not None and gate.reason is None
        lo, hi = gate.interval
        centre = (lo + hi) / 2
        expected = ("pass" if lo >= gate.line else "fail" if hi < gate.line
                    else "conditional pass" if centre >= gate.line else "conditional fail")
        assert gate.verdict == expected
    # The SOP grade is the recorded captures' own: the same without the repeats.
    plain = check_bundle(without_repeats(bundle, tmp_path / "without")).record
    assert plain.grade == record.grade and plain.tiers == record.tiers
    assert [r.metrics for r in plain.runs] == [r.metrics for r in record.runs]
    assert plain.uncertainty is not None
    assert all(g.verdict == "not estimated" for g in plain.uncertainty.gates)
    assert [g.margin for g in plain.uncertainty.gates] == [g.margin for g in u.gates]
    # Same inputs, same bytes.
    assert dump_record(check_bundle(bundle).record) == dump_record(record)


def test_two_captures_give_the_spread_and_no_run_interval(tmp_path: Path) -> None:
    record = check_bundle(repeats_bundle(tmp_path, captures=2)).record
    assert record.uncertainty is not None
    for run in record.uncertainty.runs:
        assert run.captures == 2
        for figure in run.figures:
            assert figure.interval is None and figure.spread is not None
            assert figure.not_estimated == "interval not estimated (2 captures)"
    # Two captures of every run do give the tier its (wider) interval.
    assert all(t.interval is not None for t in record.uncertainty.tiers)


def test_a_tier_with_one_single_capture_run_is_not_estimated_naming_it(tmp_path: Path) -> None:
    runs = copy.deepcopy(RUNS)
    runs[3] = (runs[3][0], runs[3][1], runs[3][2][:1])
    record = check_bundle(repeats_bundle(tmp_path, runs=runs)).record
    assert record.uncertainty is not None
    by_tier = {t.tier: t for t in record.uncertainty.tiers}
    assert by_tier["1920x1080"].interval is not None
    assert by_tier["2560x1440"].single_capture_runs == (3,)
    assert by_tier["2560x1440"].reason == (
        "run 4 has one capture; an interval for tier 2560x1440 needs two captures or more of "
        "every scored run")


# --------------------------------------------------------------------------- repeats in card.yaml


def test_a_repeat_identical_to_its_recorded_capture_is_refused(tmp_path: Path) -> None:
    bundle = repeats_bundle(tmp_path, captures=2)
    shutil.copyfile(bundle / "captures" / "A-0.csv", bundle / "captures" / "A-1.csv")
    reasons = check_bundle(bundle).record.status.refusals
    assert len(reasons) == 1
    assert reasons[0].startswith("card.yaml: runs[0].repeats[0]: captures/A-1.csv is the same "
                                 "capture (SHA-256 ")
    assert reasons[0].endswith("as runs[0].capture captures/A-0.csv; a repeat must be a "
                               "capture of its own")


def test_a_repeat_is_confined_to_the_bundle_and_needs_its_conditions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = repeats_bundle(tmp_path, captures=2)
    data = _card(bundle)
    data["runs"][0]["repeats"][0]["capture"] = "../outside.csv"
    data["runs"][1]["repeats"][0]["capture"] = "captures/missing.csv"
    write_card(bundle, data)
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith("certgen: card.yaml: runs[0].repeats[0].capture: expected a path "
                               "inside the bundle without '..'")
    assert lines[1].startswith("card.yaml: runs[1].repeats[0].capture:")
    data = _card(repeats_bundle(tmp_path / "b", captures=2))
    del data["runs"][0]["repeats"][0]["technician"]
    write_card(tmp_path / "b", data, conditions=False)
    reasons = check_bundle(tmp_path / "b").record.status.refusals
    assert reasons == ("card.yaml: runs[0].repeats[0].technician: required for a certificate "
                       "(a --draft may leave it out)",)


def _real_card(repeat: dict[str, Any]) -> dict[str, Any]:
    """The CapFrameX test capture's own card (its driver reads 'bla': a run note says so),
    with one repeat."""
    note = "The CapFrameX test file records its driver as 'bla'."
    return card(
        [run_entry("Resident Evil 2", capture="captures/re2.csv",
                   tested_on=dt.date(2019, 3, 30), provenance_note=note, repeats=[repeat])],
        card={"vendor": "Example", "model": "Example RTX 2080 Ti 11G", "gpu": "TU102",
              "vram_gb": 11, "serial": "EX-1", "hardware_ray_tracing": True,
              "driver": "418.91"},
        test_system={"cpu": "Intel Core i9-9900K", "memory_gb": 32, "os": "Windows 10 Pro",
                     "motherboard": "ASUS ROG MAXIMUS XI HERO", "display": "Example"},
        certificate={"id": "TEST-0001", "issued": "2019-04-02", "sop": "SOP-GPU-001 v1.1",
                     "languages": ["en"]})


def test_a_repeat_whose_provenance_contradicts_the_card_is_refused_like_a_recorded_capture(
        tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    (bundle / "captures").mkdir(parents=True)
    text = (REAL / "CapFrameXFileWithHeader.csv").read_text(encoding="utf-8")
    (bundle / "captures" / "re2.csv").write_text(text, encoding="utf-8")
    # The repeat records another GPU: no note can excuse that.
    (bundle / "captures" / "re2-again.csv").write_text(
        text.replace("//GPU=NVIDIA GeForce RTX 2080 Ti", "//GPU=NVIDIA GeForce RTX 2080")
        .replace("12:01:36", "12:31:36"), encoding="utf-8")
    write_card(bundle, _real_card({"capture": "captures/re2-again.csv",
                                   "tested_on": dt.date(2019, 3, 30)}))
    reasons = check_bundle(bundle).record.status.refusals
    assert reasons[0] == (
        "card.yaml: runs[0].repeats[0]: run \"Resident Evil 2 2560x1440\": captures/re2-again.csv "
        "records GPU 'NVIDIA GeForce RTX 2080', card.model / card.gpu says 'Example RTX 2080 Ti "
        "11G / TU102'; the capture is not of the certified card (no provenance_note can excuse "
        "it)")
    # A repeat dated away from its own tested_on is refused, as the recorded capture would be.
    (bundle / "captures" / "re2-again.csv").write_text(
        text.replace("12:01:36", "12:31:36"), encoding="utf-8")
    write_card(bundle, _real_card({"capture": "captures/re2-again.csv",
                                   "tested_on": dt.date(2019, 3, 20)}))
    data = _card(bundle)
    data["runs"][0].pop("provenance_note")
    write_card(bundle, data)
    details = check_bundle(bundle).record.status.refusal_details
    fields = [(d.code, getattr(d, "field", None), getattr(d, "what", None)) for d in details]
    assert ("provenance_mismatch", "repeats[0]", "captured_at") in fields
    assert ("provenance_mismatch", "capture", "driver") in fields


# --------------------------------------------------------------------------- the arithmetic


def test_a_run_takes_the_larger_of_its_between_and_within_capture_variance() -> None:
    scores = (80.0, 82.0, 81.0)  # between-capture variance 1.0
    assert run_variance(scores, None) == (pytest.approx(1.0), False)
    assert run_variance(scores, 0.5) == (pytest.approx(1.0), False)
    assert run_variance(scores, 2.0) == (pytest.approx(4.0), True)


def test_the_tier_interval_pools_the_runs_by_welch_satterthwaite() -> None:
    tier = Tier(resolution="1920x1080", runs=2, scored_runs=2, not_run=0, mean_fluidity=90.0,
                measured=True, meets_gold=True, meets_platinum=False)
    runs = [RunScores(0, (90.0, 92.0, 91.0)), RunScores(1, (88.0, 89.0), within_se=3.0)]
    row, centre, half = tier_interval(tier, runs)
    v0, v1 = 1.0, 9.0  # run 1 takes the within-capture variance (9 > 0.5)
    a0, a1 = v0 / 3, v1 / 2
    df = (a0 + a1) ** 2 / (a0**2 / 2 + a1**2 / 1)
    expected_half = scipy.stats.t.ppf(0.975, df) * math.sqrt(a0 + a1) / 2
    assert centre == pytest.approx((91.0 + 88.5) / 2)
    assert half == pytest.approx(expected_half)
    assert row.df == pytest.approx(round(df, 2))
    assert row.within_used == (1,)
    assert row.interval == pytest.approx((centre - half, centre + half), abs=0.005)


@pytest.mark.parametrize(("interval", "verdict"), [
    ((88.0, 90.0), "pass"), ((87.9, 90.0), "conditional pass"), ((86.0, 90.0), "conditional pass"),
    ((85.9, 90.0), "conditional fail"), ((84.0, 88.0), "conditional fail"),
    ((84.0, 87.99), "fail")])
def test_the_verdict_follows_from_the_interval_and_the_line(interval: tuple[float, float],
                                                            verdict: str) -> None:
    assert gate_verdict(interval, 88.0) == verdict


def test_the_second_stage_names_the_fewest_captures_that_clear_the_line() -> None:
    parts = [4.0, 6.0, 5.0]
    k = captures_needed(parts, 3, 1.2)
    assert k is not None
    def half(n: int) -> float:
        total = sum(v / n for v in parts)
        df = total**2 / sum((v / n) ** 2 / (n - 1) for v in parts)
        return float(scipy.stats.t.ppf(0.975, df) * math.sqrt(total) / 3)
    assert half(k) < 1.2 <= half(k - 1)
    assert captures_needed(parts, 3, 0.01) is None


def test_a_conditional_verdict_recommends_the_second_stage(tmp_path: Path) -> None:
    # A tier whose capture-to-capture spread straddles the gold line.
    runs = [("E", "1920x1080", [(100.0, 90.0, 80.0), (100.0, 86.0, 74.0), (100.0, 92.0, 84.0)]),
            ("F", "1920x1080", [(100.0, 89.0, 80.0), (100.0, 91.0, 82.0), (100.0, 85.0, 73.0)])]
    record = check_bundle(repeats_bundle(tmp_path, runs=runs)).record
    assert record.uncertainty is not None
    [tier] = record.uncertainty.tiers
    gold = next(g for g in record.uncertainty.gates if g.gate == "gold")
    assert gold.verdict.startswith("conditional"), gold
    [stage] = [s for s in tier.second_stage if s.gate == "gold"]
    assert stage.runs == (0, 1)
    assert stage.captures is None or stage.captures > 3


def test_figure_spread_with_a_missing_value_counts_only_the_given_ones() -> None:
    spread = figure_spread("fluidity_score", [90.0, None])
    assert spread.mean is None and spread.not_estimated is not None


def test_uncertainty_of_is_the_pipelines_and_reads_back_from_the_record(tmp_path: Path) -> None:
    record = record_from_bundle(load_bundle(repeats_bundle(tmp_path)), refuse=False)
    assert record.uncertainty is not None
    again = uncertainty_of(
        record.tiers,
        [(r.index, r.resolution, r.metrics) for r in record.runs if r.metrics is not None],
        {u.run: u.repeats for u in record.uncertainty.runs if u.repeats},
        load_rules(record.rules.sop), {u.run: (u.within, u.within_se)
                                       for u in record.uncertainty.runs})
    assert again == record.uncertainty == uncertainty_from_record(record)


# --------------------------------------------------------------------------- verify


def test_verify_derives_every_figure_of_the_uncertainty_again_and_finds_a_changed_one(
        tmp_path: Path) -> None:
    record = check_bundle(repeats_bundle(tmp_path)).record
    assert record.uncertainty is not None
    runs = recorded_runs([(r.index, r.resolution, r.status, r.metrics) for r in record.runs])
    rules = load_rules(record.rules.sop)
    assert uncertainty_problems(record.uncertainty, record.tiers, runs, rules) == []
    gates = list(record.uncertainty.gates)
    gates[0] = gates[0].model_copy(update={"verdict": "fail" if gates[0].verdict != "fail"
                                           else "pass"})
    changed = record.uncertainty.model_copy(update={"gates": tuple(gates)})
    assert uncertainty_problems(changed, record.tiers, runs, rules) == [
        "uncertainty.gates[0]: verdict do not follow from the record's figures"]
    # A repeat's figure changed in the record: its run's spread and the tier no longer follow.
    first = record.uncertainty.runs[0]
    metrics = first.repeats[0].metrics.model_copy(update={"fluidity_score": 50.0})
    repeats = (first.repeats[0].model_copy(update={"metrics": metrics}), *first.repeats[1:])
    changed = record.uncertainty.model_copy(update={"runs": (
        first.model_copy(update={"repeats": repeats}), *record.uncertainty.runs[1:])})
    problems = uncertainty_problems(changed, record.tiers, runs, rules)
    assert problems[0] == "uncertainty.runs[0]: figures do not follow from the record's figures"
    assert any(p.startswith("uncertainty.tiers[0]") for p in problems)
    # Against the bundle read again: the changed figure is recomputed differently.
    assert repeat_differences(record.uncertainty, record.uncertainty) == []
    assert repeat_differences(changed, record.uncertainty) == [
        "run 1: repeat 1 (captures/A-1.csv): fluidity_score recomputed differently"]
    assert uncertainty_problems(None, record.tiers, runs, rules) == []


def test_verify_with_the_bundle_recomputes_every_repeat_of_the_signed_gold_sample(
        signed_gold: Path, tmp_path: Path) -> None:
    from pkikit import make_pki

    from certgen.verify.verdict import verify_pdf

    pdf = (signed_gold / "certificate.en.pdf").read_bytes()
    bundle = tmp_path / "bundle"
    shutil.copytree(ROOT / "examples" / "gold-rx7800xt", bundle)
    result = verify_pdf(pdf, trust=make_pki().ca_pem, revocations=(), bundle=str(bundle))
    checks = {c.name: c for c in result.checks}
    assert result.verdict == "verified", "\n".join(c.line() for c in result.checks)
    assert checks["derivation"].verdict == "pass" and checks["recomputed"].verdict == "pass"
    repeat = bundle / "repeats" / "doom-1080p-2.csv"
    lines = repeat.read_text("utf-8").splitlines(keepends=True)
    lines[-1] = lines[-1].replace("1", "2", 1)
    repeat.write_text("".join(lines), "utf-8")
    result = verify_pdf(pdf, trust=make_pki().ca_pem, revocations=(), bundle=str(bundle))
    checks = {c.name: c for c in result.checks}
    assert result.verdict == "not-verified"
    assert checks["recomputed"].verdict == "fail"
    assert "run 2: repeat repeats/doom-1080p-2.csv has SHA-256 " in checks["recomputed"].detail


def test_a_long_capture_carries_its_within_capture_interval_into_the_record(
        tmp_path: Path) -> None:
    from certgen import api

    bundle = tmp_path / "b"
    rel = "captures/L-0.csv"
    write_presentmon(bundle / rel, frames_for(100.0, 90.0, 80.0, n=24_000))
    write_presentmon(bundle / "captures/L-1.csv", frames_for(101.0, 91.0, 82.0, n=24_000))
    write_card(bundle, card([run_entry("L", capture=rel,
                                       repeats=[{"capture": "captures/L-1.csv"}])]))
    record = check_bundle(bundle).record
    assert record.uncertainty is not None
    [run] = record.uncertainty.runs
    assert run.within.fluidity_score is not None and run.within_se is not None
    assert set(run.within.not_estimated) == {"avg_fps", "stutter"}
    # The same interval `certgen metrics --interval` prints for the capture.
    [capture] = api.read_capture(bundle / rel)
    sha = hashlib.sha256((bundle / rel).read_bytes()).hexdigest()
    assert api.compute_intervals(capture, capture_sha256=sha) == run.within
    # A short capture's within interval is not estimated, with the reason.
    short = check_bundle(repeats_bundle(tmp_path / "s")).record
    assert short.uncertainty is not None
    for r in short.uncertainty.runs:
        assert r.within.fluidity_score is None and r.within_se is None
        assert "20,000 frames" in r.within.not_estimated["fluidity_score"]


# --------------------------------------------------------------------------- page 1 of the samples

RULE_WORDS = {"en": "Decision rule: simple acceptance",
              "ru": "Правило принятия решения: простое принятие",
              "pt": "Regra de decisão: aceitação simples"}


AROUND = {"en": "around ", "ru": "вокруг ", "pt": "em torno de "}
"""How the how-sure table introduces an interval's centre, per language (certgen.po)."""


def _margin_text(margin: float, lang: str) -> str:
    from certgen.render.i18n import fmt_score

    return ("+" if margin > 0 else "") + fmt_score(margin, lang)


def test_page_one_of_every_sample_names_the_decision_rule_and_each_gates_margin(
        sample_site: Path) -> None:
    import re

    import pypdf

    pdfs = sorted(sample_site.glob("samples/*/certificate.*.pdf"))
    samples = sorted(p.name for p in sample_site.glob("samples/*") if p.is_dir())
    centred = 0
    assert len(samples) >= 4 and len(pdfs) == 3 * len(samples), pdfs  # each in en, ru and pt
    for pdf in pdfs:
        lang = pdf.name.split(".")[1]
        record = json.loads((pdf.parent / "record.json").read_text("utf-8"))
        first = re.sub(r"\s+", " ", pypdf.PdfReader(pdf).pages[0].extract_text())
        assert RULE_WORDS[lang] in first, (pdf, first[-1500:])
        assert "ILAC-G8" in first, pdf
        for gate in record["uncertainty"]["gates"]:
            assert _margin_text(gate["margin"], lang) in first, (pdf, gate)
        # An interval is printed with its own centre (the mean over every capture), since the
        # Mean column is the SOP's, over the recorded captures only: GOLD's 2560x1440 tier
        # printed a mean of 91.42 beside an interval of 85.43-93.56 without saying why.
        for tier in record["uncertainty"]["tiers"]:
            if tier["interval"] is not None:
                around = AROUND[lang] + _margin_text(tier["centre"], lang).lstrip("+")
                assert around in first, (pdf, tier["tier"], around)
                centred += 1
    assert centred, "no sample prints an interval: GOLD's repeats should"


def test_bundles_with_repeats_build_to_the_same_bytes_twice_with_two_jobs_and_on_dask(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        render_cache: RenderCache) -> None:
    distributed = pytest.importorskip("distributed", reason="the dask extra is part of the "
                                                            "test extra")
    monkeypatch.setenv("CERTGEN_LAB", str(ROOT / "examples" / "lab.yaml"))
    first = repeats_bundle(tmp_path / "in" / "a")
    second = repeats_bundle(tmp_path / "in" / "b", captures=2, runs=RUNS[:1])
    data = _card(second)
    data["certificate"]["id"] = "TEST-0002"
    write_card(second, data)
    bundles = [str(first), str(second)]

    def files(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes()
                for p in sorted(folder.rglob("*")) if p.is_file()}

    builds = {}
    # One worker process: the bytes made off this process are the point here (two workers
    # sharing a build are tests/test_build_cluster.py's), and each worker costs its imports.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0",
                                  **dask_preload(render_cache)) as cluster:
        for name, extra in [("once", ["--jobs", "1"]), ("again", ["--jobs", "1"]),
                            ("two jobs", ["--jobs", "2"]),
                            ("dask", ["--scheduler", str(cluster.scheduler_address)])]:
            out = tmp_path / name
            code, _, stderr = run_cli(["build", *bundles, "--out", str(out), "--lang", "en",
                                       *extra], capsys)
            assert (code, stderr) == (0, ""), name
            builds[name] = files(out)
    assert len(builds["once"]) == 2 * 4  # record, HTML, PDF, manifest each
    for name in ("again", "two jobs", "dask"):
        assert builds[name] == builds["once"], name
    record = json.loads(builds["once"]["TEST-0001/record.json"])
    assert all(g["verdict"] != "not estimated" for g in record["uncertainty"]["gates"])


@pytest.mark.parametrize("lang", ["en", "ru", "pt"])
def test_the_box_renders_without_repeats_with_them_and_without_a_measured_tier(
        tmp_path: Path, lang: str) -> None:
    from certgen.render.certificate import render_certificate_html

    def html(bundle: Path) -> str:
        return render_certificate_html(check_bundle(bundle).record, lang, record_sha256="0" * 64)

    plain = html(simple_bundle(tmp_path / "plain", [(100.0, 99.0, 98.0), (100.0, 90.0, 85.0)]))
    assert plain.count('class="gate-margin"') == 2 and 'class="note not-estimated"' in plain
    assert plain.count('class="num captures"') == 2
    repeated = html(repeats_bundle(tmp_path / "rep"))
    assert repeated.count('class="gate-margin"') == 4 and "not-estimated" not in repeated
    assert 'class="sub"' in repeated  # each run's score interval in the Captures column
    write_card(tmp_path / "none", card([run_entry("G", not_run="no hardware ray tracing")]))
    none = html(tmp_path / "none")
    assert 'class="how-sure"' in none and 'class="gate-margin"' not in none


def test_a_draft_words_a_repeated_capture_refusal_in_each_language(tmp_path: Path) -> None:
    from certgen.render.certificate import render_certificate_html

    bundle = repeats_bundle(tmp_path, captures=2)
    shutil.copyfile(bundle / "captures" / "A-0.csv", bundle / "captures" / "A-1.csv")
    record = check_bundle(bundle).record
    words = {"en": "a repeat must be a capture of its own",
             "ru": "повтор должен быть отдельной записью",
             "pt": "uma repetição precisa ser uma captura própria"}
    for lang, said in words.items():
        html = render_certificate_html(record, lang, record_sha256="0" * 64)
        assert said in html.replace("\u00a0", " "), lang


def test_too_many_repeats_or_repeats_of_a_run_not_run_are_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_presentmon(tmp_path / "captures/a.csv", frames_for(100.0, 90.0, 80.0))
    write_card(tmp_path, card([
        run_entry("A", capture="captures/a.csv", repeats=[{"capture": "captures/a.csv"}] * 10),
        run_entry("B", not_run="no ray tracing", repeats=[{"capture": "captures/a.csv"}])]))
    code, out, err = run_cli(["check", str(tmp_path)], capsys)
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "certgen: card.yaml: runs[0].repeats: expected at most 9 repeats, got 10",
        "card.yaml: runs[1]: expected no repeats for a run declared not_run"]
