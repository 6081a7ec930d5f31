"""The fleet calibration review (`certgen calibrate`, issue 26; docs/spec/calibration.md).

Fleets whose distributions are known by construction give exact percentiles, shares and
re-grade counts; on a random fleet of many-tier cards every card's grade under the current and a
candidate rules version is the one certgen.rules.verdict gives it run for run; SQLite and a real
PostgreSQL server give the same bytes; bad input is one line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from bundlekit import run_cli

from certgen.builders.calibration import (
    calibrate,
    json_bytes,
    read_candidate,
    write_calibration,
)
from certgen.errors import CalibrationError
from certgen.fleet import FleetStore
from certgen.fleet.calibration import card_spans, grades_of, read_fleet, run_scores, tier_means
from certgen.fleet.model import FleetRun
from certgen.metrics.figures import fluidity_score
from certgen.model import Weights
from certgen.model.cohort import Cohort
from certgen.rules.verdict import RunFacts, grade_gates, grade_tiers
from certgen.sop import load_rules

RULES = load_rules()
W = Weights(consistency_gap=0.7, stutter=0.3)


def _cohort(title: str = "Game", resolution: str = "2560x1440") -> Cohort:
    return Cohort(title=title, resolution=resolution, preset="Ultra", ray_tracing=False,
                  upscaler="none", upscaler_mode=None, frame_generation=False)


def _run(cert: str, index: int, gap: float | None, stutter: float | None,
         cohort: Cohort | None = None, score: float | None = None) -> FleetRun:
    if score is None and gap is not None and stutter is not None:
        score = fluidity_score(gap, stutter, W)
    return FleetRun(certificate_id=cert, run_index=index, issued="2026-11-01",
                    card_model="Card", card_serial=f"S-{cert}", cohort=cohort or _cohort(),
                    avg_fps=100.0, low_1pct_fps=90.0, low_0_1pct_fps=80.0,
                    consistency_gap=gap, stutter=stutter, fluidity_score=score,
                    source="test")


def _pages(rows: list[FleetRun]) -> list[tuple[object, ...]]:
    """Rows as FleetStore.calibration_pages gives them (one page)."""
    return [(r.certificate_id, r.issued, r.cohort.resolution, r.cohort.key(), r.fluidity_score,
             r.consistency_gap, r.stutter, r.run_index) for r in rows]


def _grid_fleet() -> list[FleetRun]:
    """100 one-run cards: S_F = 100 - 0.2 i (g = s = 0.002 i, so any weights adding up to 1
    give the same score), i = 0..99; and a stutter-only check below."""
    return [_run(f"C-{i:03d}", 0, 0.002 * i, 0.002 * i) for i in range(100)]


def _write(location: str, rows: list[FleetRun]) -> str:
    with FleetStore.open(location) as store:
        store.add_runs(rows)
    return location


def _candidate(tmp: Path, name: str, **changes: object) -> Path:
    text = (Path(__file__).parent / "data/sop/sop-gpu-001-v1.2-test.yaml").read_text()
    for key, value in changes.items():
        text = text.replace(key, str(value))
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_grid_fleet_gives_exact_figures(tmp_path: Path) -> None:
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    candidate = read_candidate(_candidate(tmp_path, "c.yaml"))  # gold 80, platinum 92; 0.5/0.5
    got = calibrate(location, candidates=[candidate])
    assert (got.cards, got.runs, got.target_cards) == (100, 100, 300)
    # Tier means 100, 99.8, …, 80.2: under 88 from i = 61 (39), under 95 from i = 26 (74).
    assert got.lines["gold"].fleet_percentile == 39.0
    assert got.lines["platinum"].fleet_percentile == 74.0
    # Stutter 0.002 i stays under 0.60: every run below the Soft Limit, none past it.
    assert got.lines["soft_limit"].fleet_percentile == 100.0 and got.past_soft_limit == 0.0
    # PLATINUM: i <= 25 (26); GOLD: 26..60 (35); SILVER: 61..99 (39).
    assert got.grade_shares == {"PLATINUM": 26.0, "GOLD": 35.0, "SILVER": 39.0}
    at_88 = next(p for p in got.sensitivity if p.line == "gold" and p.value == 88.0)
    assert at_88.grade_shares == got.grade_shares
    at_90 = next(p for p in got.sensitivity if p.line == "gold" and p.value == 90.0)
    assert at_90.grade_shares == {"PLATINUM": 26.0, "GOLD": 25.0, "SILVER": 49.0}
    # Every weight pair gives the same scores here (g = s).
    assert {tuple(w.grade_shares.values()) for w in got.weights} == {(26.0, 35.0, 39.0)}
    # Candidate: PLATINUM i <= 40 (S_F >= 92: 41), GOLD 41..100 (S_F >= 80: 59), SILVER none.
    [c] = got.candidates
    assert c.grade_shares == {"PLATINUM": 41.0, "GOLD": 59.0, "SILVER": 0.0}
    assert c.weights_recomputed
    assert len(c.changes) == 15 + 39 and (c.up, c.down) == (54, 0)
    by_id = {ch.certificate_id: ch for ch in c.changes}
    assert (by_id["C-026"].from_, by_id["C-026"].to, by_id["C-026"].gate) == (
        "GOLD", "PLATINUM", "platinum_one_tier")
    assert (by_id["C-070"].from_, by_id["C-070"].to, by_id["C-070"].gate) == (
        "SILVER", "GOLD", "gold_every_tier")
    # Within one point of 88: 87.0..89.0 is i = 55..65 (11); of 95: i = 20..30 (11).
    assert sum(1 for n in got.near_lines if n.line == "gold") == 11
    assert sum(1 for n in got.near_lines if n.line == "platinum") == 11
    # Readiness: one cohort of 100 runs, ranked at 20, 30 and 50.
    assert got.readiness.published_ranks == {"20": 100, "30": 100, "50": 100}
    assert got.readiness.cohorts_ranked == 1


def test_the_json_keeps_the_pinned_names(tmp_path: Path) -> None:
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    data = json.loads(json_bytes(calibrate(location, candidates=[
        read_candidate(_candidate(tmp_path, "c.yaml"))])))
    assert list(data)[:6] == ["cards", "runs", "target_cards", "lines", "grade_shares",
                              "candidates"]
    assert set(data["lines"]) == {"gold", "platinum", "soft_limit"}
    for line in data["lines"].values():
        assert {"value", "fleet_percentile", "interval"} <= set(line)
        lo, hi = line["interval"]
        assert lo <= line["fleet_percentile"] <= hi
    change = data["candidates"][0]["changes"][0]
    assert list(change) == ["certificate_id", "from", "to", "gate"]
    assert data["candidates"][0]["rules"] == "SOP-GPU-001 v1.2-test"


def _random_fleet(seed: int) -> list[FleetRun]:
    """Cards of 1 to 6 runs over three tiers, some runs unscored, scores from g and s."""
    rng = random.Random(seed)
    rows = []
    tiers = ("1920x1080", "2560x1440", "3840x2160")
    for c in range(300):
        for r in range(rng.randint(1, 6)):
            tier = rng.choice(tiers)
            if rng.random() < 0.1:
                rows.append(_run(f"R-{c:04d}", r, None, None, _cohort(f"G{r % 2}", tier)))
                continue
            g, s = round(rng.uniform(0.0, 0.3), 4), round(rng.uniform(0.0, 0.7), 4)
            rows.append(_run(f"R-{c:04d}", r, g, s, _cohort(f"G{r % 2}", tier)))
    return rows


@pytest.mark.parametrize("weights", [None, Weights(consistency_gap=0.5, stutter=0.5),
                                     Weights(consistency_gap=0.65, stutter=0.35)])
def test_grades_agree_card_for_card_with_the_rules_path(weights: Weights | None) -> None:
    """Each card graded by certgen.fleet.calibration equals certgen.rules.verdict.grade_gates over its runs
    (RunFacts with the stored score, or fluidity_score under other weights)."""
    rows = _random_fleet(7)
    fleet = read_fleet([_pages(rows)])
    spans = card_spans(fleet, tier_means(fleet, *run_scores(fleet, weights)))
    for gold, platinum in ((RULES.gold_line, RULES.platinum_line), (80.0, 92.0), (90.5, 96.5)):
        rules = RULES if (gold, platinum) == (RULES.gold_line, RULES.platinum_line) else \
            __import__("dataclasses").replace(RULES, gold_line=gold, platinum_line=platinum)
        got = grades_of(spans, gold, platinum, rules)
        by_card: dict[str, list[FleetRun]] = {}
        for row in rows:
            by_card.setdefault(row.certificate_id, []).append(row)
        for i, (cert, runs) in enumerate(by_card.items()):
            assert fleet.card_id(i) == cert
            facts = [RunFacts(index=r.run_index, title=r.cohort.title,
                              resolution=r.cohort.resolution, recorded=True,
                              fluidity_score=(r.fluidity_score if weights is None or
                                              r.consistency_gap is None or r.stutter is None
                                              else fluidity_score(r.consistency_gap, r.stutter,
                                                                  weights)))
                     for r in runs]
            expected = grade_gates(grade_tiers(facts, rules), None, rules).value
            assert rules.grades[int(got[i])] == expected, (cert, gold, platinum)


def test_a_score_with_more_decimals_takes_the_rules_own_mean() -> None:
    rows = [_run("X", 0, 0.1, 0.1, score=88.004), _run("X", 1, 0.1, 0.1, score=87.995)]
    fleet = read_fleet([_pages(rows)])
    means = tier_means(fleet, *run_scores(fleet, None))
    from certgen.rules.verdict import mean_score

    assert means.centi.tolist() == [round(mean_score([88.004, 87.995]) * 100)]


def test_sqlite_and_postgresql_give_the_same_bytes(tmp_path: Path,
                                                   postgres_admin: str) -> None:
    from pgserver import drop_database, fresh_database

    rows = _random_fleet(11)
    candidate = read_candidate(_candidate(tmp_path, "c.yaml"))
    url = fresh_database(postgres_admin)
    try:
        outputs = []
        for location, out in ((str(tmp_path / "fleet.sqlite"), tmp_path / "a"), (url, tmp_path / "b")):
            review = calibrate(_write(location, rows), candidates=[candidate])
            write_calibration(review, out, ["en", "ru"])
            outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    finally:
        drop_database(postgres_admin, url)
    assert len(outputs[0]) == 7  # json, csv, two languages' HTML and PDF, the manifest
    assert outputs[0] == outputs[1]  # every file, PDFs and manifest included


def test_the_command_writes_the_report_in_three_languages(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    out = tmp_path / "out"
    code, _, err = run_cli(["calibrate", "--fleet", location, "--out", str(out),
                                 "--lang", "en,ru,pt", "--rules",
                                 str(_candidate(tmp_path, "c.yaml"))], capsys)
    assert code == 0, err
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["calibration.json", "calibration.csv", "manifest.json",
                            *(f"calibration.{lang}.{ext}" for lang in ("en", "ru", "pt")
                              for ext in ("html", "pdf"))])
    assert err == ""  # progress only on a terminal
    html = (out / "calibration.en.html").read_text(encoding="utf-8")
    assert "Not enough data yet" in html  # 100 cards of the 300 the SOP asks for
    csv_text = (out / "calibration.csv").read_text(encoding="utf-8")
    assert "line,fleet_percentile,gold,39.0" in csv_text
    # The same inputs give the same bytes.
    again = tmp_path / "again"
    assert run_cli(["calibrate", "--fleet", location, "--out", str(again), "--lang",
                    "en,ru,pt", "--rules", str(tmp_path / "c.yaml")], capsys)[0] == 0
    for name in names:
        if name != "manifest.json":
            assert (out / name).read_bytes() == (again / name).read_bytes(), name


@pytest.mark.parametrize("lang", ["en", "ru", "pt"])
def test_report_snapshot(lang: str, tmp_path: Path, snapshot: object) -> None:
    from certgen.render.calibration import render_html

    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet()[:40])
    review = calibrate(location, candidates=[read_candidate(_candidate(tmp_path, "c.yaml"))])
    html = render_html(review, lang, languages=("en", "ru", "pt"))
    body = html.split("<main>", 1)[1]
    assert body == snapshot


@pytest.mark.parametrize(("change", "message"), [
    ({"  gold: 80": "  gold: 80\n  silver: 70"}, "c.yaml:11: grade_lines.silver: unknown key"),
    ({"consistency_gap: 0.5": "consistency_gap: 0.6"}, "add up to 1, got 0.6 + 0.5 = 1.1"),
    ({"sop: SOP-GPU-001 v1.2-test": "sop: [1"}, "c.yaml"),
])
def test_a_bad_candidate_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     change: dict[str, str], message: str) -> None:
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    path = _candidate(tmp_path, "c.yaml", **change)
    code, _, err = run_cli(["calibrate", "--fleet", location, "--out", str(tmp_path / "o"),
                            "--rules", str(path)], capsys)
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 1 and "Traceback" not in err, err
    assert message in lines[-1] and lines[-1].count("c.yaml") == 1, err
    assert not (tmp_path / "o").exists()


def test_every_problem_of_a_candidate_names_the_file_as_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by fuzzing (issue 27): the second and later problems named the file by its base
    name only, the first by the path given."""
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    path = _candidate(tmp_path, "c.yaml", **{"  gold: 80": "  gold: 80\n  silver: 70",
                                             "platinum: 92": "platinum: high"})
    code, _, err = run_cli(["calibrate", "--fleet", location, "--out", str(tmp_path / "o"),
                            "--rules", str(path)], capsys)
    lines = err.splitlines()
    assert code == 1 and len(lines) == 2 and "Traceback" not in err, err
    assert lines[0].startswith(f"certgen: {path}:") and lines[1].startswith(f"{path}:"), err
    assert "grade_lines.platinum" in err and "grade_lines.silver: unknown key" in err, err


def test_a_candidate_that_is_no_file_is_one_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import os

    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (1024 * 1024 + 1))
    # Worded as every other input file's refusal (certgen.support.untrusted.read_limited), issue 27.
    for path, words in ((tmp_path / "missing.yaml", "no such file"),
                        (fifo, "is a FIFO (named pipe), expected a rules file"),
                        (tmp_path, "is a directory, expected a rules file"),
                        (Path("/dev/zero"), "is a device, expected a rules file"),
                        (big, "1048577 bytes, more than the limit of 1048576 for a rules file")):
        code, _, err = run_cli(["calibrate", "--fleet", location, "--out",
                                str(tmp_path / "o"), "--rules", str(path)], capsys)
        assert (code, err) == (1, f"certgen: {path}: {words}\n")


def test_an_empty_fleet_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    location = str(tmp_path / "fleet.sqlite")
    with FleetStore.open(location):
        pass
    code, _, err = run_cli(["calibrate", "--fleet", location, "--out", str(tmp_path / "o")],
                           capsys)
    assert (code, err) == (1, f"certgen: {location}: the fleet holds no certified card: "
                              "nothing to review\n")
    code, _, err = run_cli(["calibrate", "--fleet", str(tmp_path / "none.sqlite"), "--out",
                            str(tmp_path / "o")], capsys)
    assert code == 1 and "no such fleet database" in err


def test_a_cohort_of_one_run_and_no_scores_say_not_enough(tmp_path: Path) -> None:
    rows = [_run("ONE", 0, None, None)]
    got = calibrate(_write(str(tmp_path / "fleet.sqlite"), rows))
    assert got.cards == 1 and got.lines["gold"].fleet_percentile is None
    assert got.lines["gold"].interval is None
    assert got.grade_shares == {"PLATINUM": 0.0, "GOLD": 0.0, "SILVER": 100.0}
    assert got.readiness.cohorts_ranked == 0
    assert [d.quantiles for d in got.distributions if d.figure == "fluidity_score"] == [None,
                                                                                          None]


def test_calibration_error_is_a_certgen_error() -> None:
    from certgen.errors import CertgenError

    assert issubclass(CalibrationError, CertgenError)


def test_the_bootstrap_is_seeded() -> None:
    from certgen.fleet.calibration import bootstrap_interval

    below = np.array([1, 0, 1, 1, 0] * 20)
    total = np.ones(100, dtype=np.int64)
    assert bootstrap_interval(below, total, 5) == bootstrap_interval(below, total, 5)


def test_a_damaged_stored_figure_is_named_not_reviewed(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    with sqlite3.connect(location) as conn:
        conn.execute("UPDATE runs SET stutter = 7.5 WHERE certificate_id = 'C-010'")
        conn.execute("UPDATE runs SET fluidity_score = 'x' WHERE certificate_id = 'C-020'")
    code, _, err = run_cli(["calibrate", "--fleet", location, "--out", str(tmp_path / "o")],
                           capsys)
    assert code == 1 and "Traceback" not in err
    assert "certificate C-010" in err or "certificate C-020" in err, err


# ------------------------------------------------------------------ many changes, streamed


def test_totals_by_gate_and_the_changes_in_id_order(tmp_path: Path) -> None:
    """The grid fleet under the candidate (80/92): i = 26..40 rise to PLATINUM through the
    platinum gate (15), i = 61..99 to GOLD through the gold gate (39), none falls."""
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    [c] = calibrate(location, candidates=[read_candidate(_candidate(tmp_path, "c.yaml"))]
                    ).candidates
    assert {g: (t.up, t.down) for g, t in c.by_gate.items()} == {
        "platinum_one_tier": (15, 0), "gold_every_tier": (39, 0)}
    expected = [f"C-{i:03d}" for i in [*range(26, 41), *range(61, 100)]]
    assert [ch.certificate_id for ch in c.changes] == expected
    assert [ch.certificate_id for ch in c.changes[50:]] == expected[50:]
    assert c.changes[-1].certificate_id == "C-099" and c.changes[-1].to == "GOLD"
    with pytest.raises(IndexError):
        c.changes[len(expected)]


def test_changes_are_in_id_order_whatever_order_the_pages_come_in() -> None:
    from certgen.fleet.calibration import review

    rows = _grid_fleet()
    fleet = read_fleet([_pages(list(reversed(rows)))])
    assert not fleet.ordered
    candidate = __import__("dataclasses").replace(RULES, gold_line=80.0, platinum_line=92.0)
    [c] = review(fleet, [], RULES, [candidate]).candidates
    ids = [ch.certificate_id for ch in c.changes]
    assert ids == sorted(ids) and len(ids) == 54


@pytest.mark.parametrize("piece", [1, 3, 8192])
def test_the_streamed_json_is_what_json_dumps_writes(tmp_path: Path, piece: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """However the stream is cut, calibration.json is byte for byte json.dumps(indent=2) of
    its own content, with every change at its pinned place; a candidate that changes nothing
    gives an empty list."""
    import certgen.builders.calibration as builder

    monkeypatch.setattr(builder, "STREAM_ROWS", piece)
    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    same = _candidate(tmp_path, "same.yaml", **{  # the current lines and weights
        "gold: 80": "gold: 88", "platinum: 92": "platinum: 95",
        "consistency_gap: 0.5\n  stutter: 0.5\n": "consistency_gap: 0.7\n  stutter: 0.3\n"})
    review = calibrate(location, candidates=[read_candidate(_candidate(tmp_path, "c.yaml")),
                                             read_candidate(same)])
    text = b"".join(builder.json_chunks(review)).decode("utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    moved, unmoved = data["candidates"]
    assert list(moved)[:7] == ["rules", "rules_version", "weights_recomputed", "grade_shares",
                               "changes", "up", "down"]
    assert [ch["certificate_id"] for ch in moved["changes"]] == [
        f"C-{i:03d}" for i in [*range(26, 41), *range(61, 100)]]
    assert moved["changes"][0] == {"certificate_id": "C-026", "from": "GOLD", "to": "PLATINUM",
                                   "gate": "platinum_one_tier"}
    assert moved["by_gate"] == {"platinum_one_tier": {"up": 15, "down": 0},
                                "gold_every_tier": {"up": 39, "down": 0}}
    assert unmoved["changes"] == [] and unmoved["up"] == unmoved["down"] == 0
    rows = builder.csv_bytes(review).decode("utf-8").splitlines()
    assert sum(1 for r in rows if r.startswith("candidate_change,")) == 54
    assert "candidate_change,SOP-GPU-001 v1.2-test,C-070,SILVER->GOLD gold_every_tier" in rows
    assert "candidate_gate,SOP-GPU-001 v1.2-test,gold_every_tier up,39" in rows
    monkeypatch.setattr(builder, "STREAM_ROWS", 8192)
    assert builder.csv_bytes(review).decode("utf-8").splitlines() == rows


def test_a_candidate_that_changes_every_grade_is_written_in_bounded_pieces() -> None:
    """60,000 one-run cards, all GOLD now and all SILVER under a candidate: the JSON and CSV
    come in pieces of a few hundred KB (never the whole list at once), and hold every change."""
    import certgen.builders.calibration as builder
    from certgen.fleet.calibration import review

    cards = 60_000
    page = [(f"M-{i:06d}", "2026-11-01", "2560x1440", _cohort().key(), 90.0, 0.1, 0.1, 0)
            for i in range(cards)]
    candidate = __import__("dataclasses").replace(RULES, gold_line=91.0)
    got = review(read_fleet([page]), [], RULES, [candidate])
    [c] = got.candidates
    assert (len(c.changes), c.up, c.down) == (cards, 0, cards)
    for chunks in (builder.json_chunks(got), builder.csv_chunks(got)):
        sizes = [len(piece) for piece in chunks]
        assert max(sizes) < 2 << 20 < sum(sizes), (max(sizes), sum(sizes))
    data = json.loads(builder.json_bytes(got))
    assert len(data["candidates"][0]["changes"]) == cards
    assert data["candidates"][0]["changes"][-1]["certificate_id"] == "M-059999"


def test_the_report_lists_the_first_changes_and_says_where_the_rest_are(tmp_path: Path) -> None:
    from certgen.render.calibration import render_html

    location = _write(str(tmp_path / "fleet.sqlite"), _grid_fleet())
    got = calibrate(location, candidates=[read_candidate(_candidate(tmp_path, "c.yaml"))])
    said = {"en": "The first 40 by certificate id are listed here; calibration.json and "
                  "calibration.csv list all 54.",
            "ru": "Здесь показаны первые 40 по идентификатору сертификата; все 54 перечислены "
                  "в calibration.json и calibration.csv.",
            "pt": "Aqui estão os primeiros 40 por identificador do certificado; calibration.json "
                  "e calibration.csv listam todos os 54."}
    for lang, sentence in said.items():
        html = render_html(got, lang).replace("\u00a0", " ")  # ru binds short words
        assert sentence in html, lang
        assert "C-085" in html and "C-086" not in html  # the 40th listed, the 41st not


def test_counts_in_the_report_are_grouped_as_the_language_writes_them() -> None:
    """1,200 one-run cards: the lines' counts of tier means and runs read as every other
    count does in the language ("1,200", "1 200", "1.200"), never "1200"."""
    from certgen.fleet.calibration import review
    from certgen.render.calibration import render_html

    page = [(f"G-{i:05d}", "2026-11-01", "2560x1440", _cohort().key(), 80.0 + i / 100, 0.1,
             0.1, 0) for i in range(1200)]
    got = review(read_fleet([page]), [], RULES, [])
    said = {"en": ("1,200 tier means", "1,200 runs"),
            "ru": ("1 200 средних по уровню", "1 200 прогонов"),
            "pt": ("1.200 médias da faixa", "1.200 execuções")}
    for lang, phrases in said.items():
        html = render_html(got, lang).replace("\u00a0", " ").replace("\u202f", " ")
        for phrase in phrases:
            assert phrase in html, (lang, phrase)
        assert "1200" not in html, lang
