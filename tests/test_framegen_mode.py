"""Frame-generation modes in the cohort (issue 42): card.yaml's `frame_generation_mode`, the
cohort key, the fleet's migration on both backends and the JSON Lines of an older certgen."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import card, run_cli, run_entry, write_card
from realdata import REAL
from renderkit import visible_text
from test_fleet import fill, gaps, metrics, record, run
from test_framegen import presentmon_2x

from certgen.commands.metrics import measure
from certgen.fleet import SCHEMA_VERSION, Cohort, FleetStore, migrate
from certgen.fleet import store as fleet_store
from certgen.fleet.schema import MIGRATIONS, _fill_aggregates
from certgen.metrics.diagnostics import DisplayedBesideGraded, displayed_beside_graded
from certgen.pipeline import check_bundle
from certgen.render.certificate import render_certificate_html

BASE = Cohort("Cyberpunk 2077", "2560x1440", "Ultra", True, "DLSS", "Quality", True)
"""Frame generation on, mode not stated (what every card said before modes)."""


def test_a_mode_left_out_is_derived_never_guessed() -> None:
    off = Cohort("T", "1920x1080", "High", False, "none", None, False)
    assert off.frame_generation_mode == "off"
    assert BASE.frame_generation_mode is None
    with pytest.raises(ValueError, match="frame_generation off"):
        Cohort("T", "1920x1080", "High", False, "none", None, False, "2x")
    with pytest.raises(ValueError, match="'off' with frame_generation on"):
        Cohort("T", "1920x1080", "High", False, "none", None, True, "off")


def test_keys_from_before_modes_are_unchanged_and_a_mode_is_its_own_cohort() -> None:
    # The keys a certgen before modes wrote (a JSON array ending in the flag).
    assert BASE.key() == '["Cyberpunk 2077","2560x1440","Ultra",true,"DLSS","Quality",true]'
    off = BASE._replace(frame_generation=False)
    assert off.key().endswith(",false]") and off.line().endswith("|fg:off")
    two, four = BASE._replace(frame_generation_mode="2x"), BASE._replace(frame_generation_mode="4x")
    assert len({BASE.key(), off.key(), two.key(), four.key()}) == 4
    assert two.line().endswith("|fg:2x") and BASE.line().endswith("|fg:on")
    for c in (BASE, off, two, four, BASE._replace(frame_generation_mode="dynamic")):
        assert Cohort.from_key(json.loads(c.key())) == c


def test_a_2x_and_a_4x_run_of_one_title_rank_in_different_cohorts(fleet_location: str) -> None:
    two, four = BASE._replace(frame_generation_mode="2x"), BASE._replace(frame_generation_mode="4x")
    with FleetStore.open(fleet_location) as store:
        fill(store, two, gaps(5), "TWO")
        fill(store, four, gaps(9), "FOUR")
        fill(store, BASE, gaps(3), "UNSTATED")
        assert store.ranks_for(two, metrics(0.1, 0.2), "NEW")["stutter"]["n"] == 6
        assert store.ranks_for(four, metrics(0.1, 0.2), "NEW")["stutter"]["n"] == 10
        assert store.ranks_for(BASE, metrics(0.1, 0.2), "NEW")["stutter"]["n"] == 4
        sizes = {c: n for c, n in store.cohorts()}
        assert sizes == {four: 9, two: 5, BASE: 3}
        modes = {row.certificate_id[:3]: row.cohort.frame_generation_mode
                 for row in store.iter_runs()}
        assert modes == {"TWO": "2x", "FOU": "4x", "UNS": None}


def _old_rows() -> list[Sequence[object]]:
    """Rows as schema 3 held them (no mode column): one FG on, one FG off."""
    rows = []
    for cert, cohort in (("OLD-ON", BASE), ("OLD-OFF", BASE._replace(frame_generation=False))):
        rows.extend(fleet_store.runs_from_record(record(cert, [run(0, cohort, metrics(0.1, 0.2))]),
                                                 source="test"))
    keep = [i for i, c in enumerate(fleet_store._COLUMNS) if c != "frame_generation_mode"]
    columns = [fleet_store._COLUMNS[i] for i in keep]
    return [columns, *[[fleet_store._to_sql(r)[i] for i in keep] for r in rows]]


def _insert(conn: Any, mark: str, rows: list[Sequence[object]]) -> None:
    columns, *values = rows
    sql = (f"INSERT INTO runs ({', '.join(map(str, columns))}) "
           f"VALUES ({', '.join([mark] * len(columns))})")
    for value in values:
        conn.execute(sql, value)
    # Schema 3 keeps the cohort aggregates: computed from the rows as its step 3 does.
    _fill_aggregates(conn, mark)


def _before_change(fleet_location: str) -> None:
    """A fleet at schema 3, the last one before modes, holding two runs."""
    if fleet_location.startswith("postgresql"):
        from certgen.fleet.postgres import connect

        conn, _, _ = connect(fleet_location, target=3)
        try:
            _insert(conn, "%s", _old_rows())
        finally:
            conn.close()
        return
    conn = sqlite3.connect(fleet_location, isolation_level=None)
    migrate(conn, where=fleet_location, target=3)
    _insert(conn, "?", _old_rows())
    conn.close()


def test_a_fleet_from_before_reads_not_stated_and_is_never_rekeyed(fleet_location: str) -> None:
    assert SCHEMA_VERSION == len(MIGRATIONS) == 5  # 4: captures (issue 39), 5: the mode
    _before_change(fleet_location)
    keys_before = {BASE.key(), BASE._replace(frame_generation=False).key()}
    with FleetStore.open(fleet_location) as store:
        assert store.found_version == 3 and store.schema_version == SCHEMA_VERSION
        runs = {r.certificate_id: r.cohort for r in store.iter_runs()}
        assert runs["OLD-ON"].frame_generation_mode is None  # on, mode not stated
        assert runs["OLD-OFF"].frame_generation_mode == "off"
        assert {c.key() for c in runs.values()} == keys_before
        # The stored keys are the ones schema 3 wrote: nothing re-keyed.
        stored = {k for (k,) in store._execute("SELECT cohort_key FROM runs").fetchall()}
        assert stored == keys_before
        # A 2x run does not rank against the unstated run; an unstated one does.
        two = BASE._replace(frame_generation_mode="2x")
        assert store.ranks_for(two, metrics(0.1, 0.2), "NEW")["stutter"]["n"] == 1
        assert store.ranks_for(BASE, metrics(0.1, 0.2), "NEW")["stutter"]["n"] == 2
        out = io.StringIO()
        store.export_jsonl(out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(x["certificate_id"], x["frame_generation"], x["frame_generation_mode"])
            for x in lines] == [("OLD-OFF", False, "off"), ("OLD-ON", True, None)]


def test_an_export_from_before_modes_imports_as_not_stated(fleet_location: str) -> None:
    row = fleet_store.runs_from_record(record("X-1", [run(0, BASE, metrics(0.1, 0.2))]),
                                       source="test")[0].as_json()
    del row["frame_generation_mode"]  # an older certgen's line
    off = {**row, "certificate_id": "X-2", "frame_generation": False}
    bad = {**row, "certificate_id": "X-3", "frame_generation": False,
           "frame_generation_mode": "2x"}
    with FleetStore.open(fleet_location) as store:
        assert store.import_jsonl(io.StringIO(f"{json.dumps(row)}\n{json.dumps(off)}\n")) == (2, 0)
        modes = {r.certificate_id: r.cohort.frame_generation_mode for r in store.iter_runs()}
        assert modes == {"X-1": None, "X-2": "off"}
        with pytest.raises(Exception) as err:
            store.import_jsonl(io.StringIO(json.dumps(bad) + "\n"), name="f")
        assert str(err.value).splitlines()[-1].endswith(
            'f:1: frame_generation_mode: expected off with frame_generation false, got "2x"')


# --- the declared mode held against the capture's frame types --------------------------------


def _frames_of(mode_every: int, presents: int = 1200) -> tuple[tuple[str, str, str], ...]:
    """PresentMon 2.x rows of `presents` presents, each shown as `mode_every - 1` generated
    frames and then the application frame (PresentMon writes the generated instances first)."""
    shown = f"{16.6667 / mode_every:.4f}"  # the screen changes with every frame shown
    present = (("DLSS FG", "16.6667", shown),) * (mode_every - 1) + \
        (("Application", "16.6667", shown),)
    return tuple(r for _ in range(presents) for r in present)


def _fg_bundle(root: Path, *, mode: str, shown: int, **run_extra: Any) -> Path:
    root.mkdir(parents=True)
    (root / "captures").mkdir()
    (root / "captures" / "fg.csv").write_bytes(presentmon_2x(rows=_frames_of(shown)))
    run = run_entry("Cyberpunk 2077", capture="captures/fg.csv", process="game.exe",
                    frame_generation=mode != "off", frame_generation_mode=mode, **run_extra)
    return write_card(root, card([run]))


def test_four_frame_types_per_present_against_a_card_saying_2x_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _fg_bundle(tmp_path / "b", mode="2x", shown=4)
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1
    assert err.splitlines() == [
        'certgen: card.yaml: runs[0].capture: run "Cyberpunk 2077 2560x1440": captures/fg.csv '
        "records frame-generation multiplier '4.00x (FrameType)', runs[0].frame_generation_mode "
        "says '2x'; explain it in runs[0].provenance_note or correct card.yaml"]
    [detail] = check_bundle(bundle).record.status.refusal_details
    assert detail.code == "provenance_mismatch" and detail.what == "frame_generation_mode"


def test_the_same_capture_with_a_note_or_its_own_mode_is_issuable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    noted = _fg_bundle(tmp_path / "noted", mode="2x", shown=4,
                       provenance_note="The driver overrode the game's 2x setting to 4x.")
    right = _fg_bundle(tmp_path / "right", mode="4x", shown=4)
    for bundle in (noted, right):
        code, _, err = run_cli(["check", str(bundle)], capsys)
        assert (code, err) == (0, ""), err
    record = check_bundle(right).record
    run0 = record.runs[0]
    assert run0.frame_generation_mode == "4x" and run0.cohort.endswith("|fg:4x")
    assert run0.frame_diagnostics is not None
    observed = run0.frame_diagnostics.frame_generation_observed
    assert observed is not None and observed.observed_multiplier == 4.0
    assert observed.per_second is not None and observed.per_second.min == observed.per_second.max == 4.0


def test_a_mode_the_card_does_not_state_is_never_held(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _fg_bundle(tmp_path / "b", mode="2x", shown=4)
    data = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    del data["runs"][0]["frame_generation_mode"]  # on, mode not stated: nothing to hold
    write_card(bundle, data)
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert (code, err) == (0, ""), err
    assert check_bundle(bundle).record.runs[0].frame_generation_mode is None


def test_a_mode_against_frame_generation_is_a_card_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _fg_bundle(tmp_path / "b", mode="2x", shown=2)
    data = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    data["runs"][0]["frame_generation"] = False
    write_card(bundle, data)
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1 and len(err.splitlines()) == 1
    assert "runs[0]" in err and "expected frame_generation_mode to agree with " \
        "frame_generation (false), got '2x'" in err
    # Left out, frame_generation is derived from the mode.
    del data["runs"][0]["frame_generation"]
    write_card(bundle, data)
    assert run_cli(["check", str(bundle)], capsys)[0] == 0


def test_metrics_json_gives_the_multiplier_or_why_not(tmp_path: Path) -> None:
    shown = tmp_path / "fg.csv"
    shown.write_bytes(presentmon_2x(rows=_frames_of(2)))
    [two, cfx] = measure([str(shown), str(REAL / "CapFrameXFileWithHeader.csv")], None, None)
    assert two["frame_generation"] == {"observed_multiplier": 2.0,
                                       "per_second": {"min": 2.0, "max": 2.0}, "not_shown": None}
    assert cfx["frame_generation"] == {
        "observed_multiplier": None, "per_second": None,
        "not_shown": "not shown by this capture: it has no frame-type column (PresentMon 2.x "
                     "FrameType)"}
    [real] = measure([str(REAL / "test_case_5.csv")], None, None)
    assert real["frame_generation"]["observed_multiplier"] == 1.0  # every frame an application's


def test_a_dynamic_mode_shows_its_spread_per_second(tmp_path: Path) -> None:
    rows = _frames_of(2, presents=180) + _frames_of(4, presents=180)  # 3 s at 2x, 3 s at 4x
    path = tmp_path / "dyn.csv"
    path.write_bytes(presentmon_2x(rows=rows))
    [entry] = measure([str(path)], None, None)
    fg = entry["frame_generation"]
    assert fg["observed_multiplier"] == 3.0
    assert fg["per_second"] == {"min": 2.0, "max": 4.0}


# --- displayed beside graded on page 1 --------------------------------------------------------


def _page_one(html: str) -> str:
    """The grade box's text (page 1's "Why this grade")."""
    start = html.index('<section class="grade-section">')
    return visible_text(html[start:html.index("</section>", start)])


def test_the_re2_capture_names_both_rates_on_page_one_in_every_language(tmp_path: Path) -> None:
    from test_provenance import _matching_card, _real_bundle

    record = check_bundle(_real_bundle(tmp_path / "b", _matching_card())).record
    re2 = record.runs[2]
    assert re2.metrics is not None and re2.metrics.avg_fps == 286.3
    found = displayed_beside_graded(re2.metrics, re2.frame_diagnostics)
    assert found == DisplayedBesideGraded(286.3, 119.8, 4236)
    expected = {
        "en": "The SOP grades the frames the game presented; the display showed a different "
              "rate for run 3 (Resident Evil 2 2560x1440), graded at 286.3 FPS and displayed "
              "at 119.8 FPS (4236 frames never displayed). The grade is unchanged.",
        "ru": "для прогона 3 (Resident Evil 2 2560x1440): оценено 286,3 FPS, на экран "
              "выведено 119,8 FPS",
        "pt": "a execução 3 (Resident Evil 2 2560x1440), avaliada a 286,3 FPS e exibida a "
              "119,8 FPS",
    }
    for lang, sentence in expected.items():
        html = render_certificate_html(record, lang, record_sha256="0" * 64)
        page_one = " ".join(_page_one(html).split())
        assert sentence.replace("\u00a0", " ") in page_one.replace("\u00a0", " "), (lang, page_one)
        # Only the RE2 run: the other two runs' rates agree (or they have no display column).
        assert page_one.count("FPS") == 2, (lang, page_one)
        assert "119" in visible_text(html[html.index('<table class="runs"'):]), lang


def test_a_steady_run_names_no_displayed_rate(tmp_path: Path) -> None:
    bundle = _fg_bundle(tmp_path / "b", mode="off", shown=1)  # display changes every present
    record = check_bundle(bundle).record
    run0 = record.runs[0]
    assert run0.frame_diagnostics is not None and run0.frame_diagnostics.display is not None
    assert displayed_beside_graded(run0.metrics, run0.frame_diagnostics) is None
    for lang in ("en", "ru", "pt"):
        html = render_certificate_html(record, lang, record_sha256="0" * 64)
        assert 'class="note displayed-rate"' not in html
        assert "FPS" not in _page_one(html)


# --- diagnostics that speak or stay out of the way ---------------------------------------------


def test_diagnostics_follow_the_graded_content_open_plainly_and_leave_out_empty_rows(
        tmp_path: Path) -> None:
    from test_provenance import _matching_card, _real_bundle

    from certgen.model.measured import LatencySpread

    record = check_bundle(_real_bundle(tmp_path / "b", _matching_card())).record
    run0 = record.runs[0]
    assert run0.measured is not None
    latency = run0.measured.latency.model_copy(update={"pc_latency_ms": LatencySpread(
        frames=4, median=20.0, p90=24.0, p99=25.0, left_out=0, column="MsPCLatency")})
    runs = [run0.model_copy(update={"measured": run0.measured.model_copy(
        update={"latency": latency})}), *record.runs[1:]]
    record = record.model_copy(update={"runs": tuple(runs)})
    assert all(not r.measured.any for r in record.runs[1:] if r.measured)
    for lang in ("en", "ru", "pt"):
        html = render_certificate_html(record, lang, record_sha256="0" * 64)
        frames = html.index('<section class="frame-diagnostics">')
        latency_at = html.index('<section class="measured-diagnostics">')
        # After the graded content (runs, charts, fleet, calibration), before the audit trail.
        assert html.index('<table class="runs"') < html.index('class="chart-fig"') < frames
        assert html.index('<table class="audit"') > latency_at > frames
        # Each section opens with one plain sentence.
        for start in (frames, latency_at):
            section = html[start:html.index("</section>", start)]
            assert '</h2>\n  <p class="lead">' in section, lang
        # Only the run that measured something has a row; its p99 of 4 values is marked.
        section = html[latency_at:html.index("</section>", latency_at)]
        assert section.count("<tr data-run=") == 1 and 'data-run="0"' in section
        assert '<span class="few">' in section and "4" in visible_text(section)


def test_a_capture_typing_no_frame_as_generated_cannot_contradict_a_declared_mode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PresentMon writes NVIDIA's generated frames as Application: a 1.00x capture is not
    compared with a declared 2x (a note says so); a declared off is held against 2x."""
    bundle = _fg_bundle(tmp_path / "b", mode="2x", shown=1)
    code, out, err = run_cli(["check", str(bundle)], capsys)
    assert (code, err) == (0, ""), err
    assert "types no frame as generated, so it cannot show the declared mode '2x'" in out
    off = _fg_bundle(tmp_path / "off", mode="off", shown=2)
    code, _, err = run_cli(["check", str(off)], capsys)
    assert code == 1 and "records frame-generation multiplier '2.00x (FrameType)', " \
        "runs[0].frame_generation_mode says 'off'" in err


def test_a_capture_with_generated_frames_runs_on_the_application_clock(tmp_path: Path) -> None:
    """1200 presents of 16.6667 ms shown 4x: 4800 rows, each carrying its present's interval.
    The capture lasts 20 s (the running sum of every row would say 80 s), and its chart too."""
    record = check_bundle(_fg_bundle(tmp_path / "b", mode="4x", shown=4)).record
    run0 = record.runs[0]
    assert run0.capture is not None and run0.chart is not None and run0.metrics is not None
    assert run0.metrics.frames == 4800
    assert run0.capture.duration_s == 20.0
    assert 19_900.0 < run0.chart.duration_ms <= 20_000.04
    # Without generated frames nothing changes: the running sum is the clock.
    plain = check_bundle(_fg_bundle(tmp_path / "c", mode="off", shown=1)).record.runs[0]
    assert plain.capture is not None and plain.capture.duration_s == 20.0
