"""The before/after report builder: captures -> report record -> documents -> the writer.

    certgen compare BEFORE AFTER | BOTH.csv | --series SERIES.yaml  (docs/spec/compare.md)

`report_record` gathers the inputs (the only step that reads files) and computes the report
record with certgen.compare.statistics; `render_report` turns it into every document in memory
(certgen.render.report); `write_report` hands those bytes to the Writer (atomic, confined,
manifest last). `build_report` does all three.

The series file (YAML, paths relative to the file; unknown keys are refused):

    series: 1                   # format version
    order: ABBA                 # optional, how the runs were made (printed on the report)
    description: Resizable BAR off (before) and on (after)   # optional: the change compared
    #   (a text, English; or per language: {en: ..., ru: ..., pt: ...}, at least one)
    settings: 2560x1440, Ultra, ray tracing off             # optional: what both sides share
    pairs:                      # at least 6 (8 recommended), in run order
      - {before: runs/01-a.csv, after: runs/01-b.csv}
      - ...
    pilot:                      # optional: 10 runs of the unchanged configuration
      - pilot/01.csv
      - ...

Without a pilot the smallest detectable effect is unknown and no change is reported.

`description` and `settings` (or `--description` / `--settings` for two captures) are free text
under the rules of card.yaml texts (docs/limits.md: at most 1000 and 200 characters); the
report prints them as text, never as markup; a report in a language the description is not
given in shows it in the language it is written in, marked as such (as certificates show
lab-written texts). The game, card, drivers and capture dates (overall and per side) come from
the captures themselves where their format records them.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final, Literal

import yaml
from pydantic_core import PydanticCustomError

from certgen.compare import statistics as compare
from certgen.compare.report import (
    Compared,
    FloorRow,
    PairReport,
    PairSide,
    ReportRecord,
    ReportRules,
    SeriesFigureRow,
    SeriesPair,
    SeriesReport,
    SideRecorded,
)
from certgen.compare.statistics import SideInput
from certgen.errors import CompareError
from certgen.inputs.bundle import check_text
from certgen.metrics import diagnostics
from certgen.metrics.capturereport import read_runs
from certgen.metrics.figures import round_half_away, weights_of
from certgen.metrics.framegen import compute_frame_diagnostics
from certgen.metrics.measured import measured_by
from certgen.model.base import LabText, LocalText
from certgen.render.i18n import gettext_for
from certgen.render.report import (
    CHART_NAME,
    CSV_NAME,
    SIDES,
    chart_for,
    html_name,
    pdf_name,
    render_html,
    report_pdf,
)
from certgen.sop import load_rules
from certgen.support.builddate import source_date_epoch
from certgen.support.untrusted import escape_invisible, open_regular, shorten
from certgen.support.yamlload import load_yaml
from certgen.writer import Writer

if TYPE_CHECKING:
    from certgen.captures.model import Capture
    from certgen.compare.statistics import CountedSide

# --------------------------------------------------------------------------- inputs


def _read_runs(path: Path, fmt: str | None, process: str | None,
               shown: str | None = None) -> list[Capture]:
    if not path.is_file():
        raise CompareError("no such capture file", file=shown or str(path))
    return read_runs(path, name=str(path) if shown is None else shown, format=fmt, process=process)


def _one_run(path: Path, fmt: str | None, process: str | None,
             shown: str | None = None) -> Capture:
    runs = _read_runs(path, fmt, process, shown)
    if len(runs) != 1:
        raise CompareError(
            f"holds {len(runs)} runs; a side of a comparison is one run (split the file)",
            file=shown or str(path),
        )
    return runs[0]


def _two_sides(path: Path, fmt: str | None, process: str | None,
               shown: str | None = None) -> tuple[Capture, Capture]:
    """The before and after runs of one file (a benchmark-page CSV holding both sides)."""
    runs = _read_runs(path, fmt, process, shown)
    by_label = {getattr(r, "label", None): r for r in runs}
    if len(runs) != 2 or set(by_label) != set(SIDES):
        labels = ", ".join(sorted(str(getattr(r, "label", None)) for r in runs)) or "none"
        raise CompareError(
            f"one file compares only when it holds the sides 'before' and 'after' "
            f"(found: {labels}); otherwise give BEFORE and AFTER",
            file=shown or str(path),
        )
    return by_label["before"], by_label["after"]


def side_input(capture: Capture) -> SideInput:
    """A Capture as the statistics see it: frames, source, focus (none recorded), lost events."""

    return SideInput(
        frame_times_ms=capture.frame_times_ms,
        source=capture.source,
        focus=None,
        # An incomplete capture (lines dropped, a gap in tick, no end line) lost events somewhere
        # the Capture record does not locate: none of its blocks can be trusted.
        lost_events_unplaced=bool(capture.incomplete),
        lost_reason=capture.incomplete_reason,
    )


# --------------------------------------------------------------------------- the report record


def build_comparison(before: Capture, after: Capture, *, description: LabText | None = None,
                     settings: str | None = None, changed: frozenset[str] = frozenset(),
                     files: tuple[str, str] | None = None) -> PairReport:
    """The report record of two captures: every figure, chart series and the CSV computed
    here, so the renderer reads the record and a language only. `files`: how the report names
    the two capture files (default: as read)."""
    names = files or (before.source, after.source)

    weights = weights_of(load_rules())
    counted = {"before": compare.count_side(side_input(before)),
               "after": compare.count_side(side_input(after))}
    floors = compare.noise_floor(counted["before"], counted["after"])
    captures = {"before": before, "after": after}

    def side_of(side: Literal["before", "after"]) -> PairSide:
        capture = captures[side]
        said = subject(capture)
        return PairSide(
            side=side, game=said["game"], card=said["card"], captured=said["captured"],
            file=names[0] if side == "before" else names[1], format=capture.format,
            interval_column=capture.interval_column,
            incomplete_reason=capture.incomplete_reason, warnings=tuple(capture.warnings),
            **asdict(counted[side].summary), lost_events=counted[side].lost_events_unplaced,
            frame_diagnostics=compute_frame_diagnostics(capture, weights),
            measured=measured_by(capture))

    return PairReport(
        mode="pair",
        compared=_compared([before], [after], description, settings, changed, names),
        sides=(side_of("before"), side_of("after")),
        floors=tuple(FloorRow(**asdict(f), difference=_fraction(f.difference_pct),
                              floor=_fraction(f.floor_pct)) for f in floors),
        focus_recorded=all(counted[s].summary.focus_recorded for s in SIDES),
        rules=_rules(),
        charts=(compare.chart_series(counted["before"]), compare.chart_series(counted["after"])),
        csv=compare.csv_text([(s, counted[s]) for s in SIDES]),
    )


CONFIGURATION: Final = ("game", "resolution", "api")
"""What a before/after holds the same on both sides unless the user states it is the change
(`--changed`): the game (else the process the capture read), and the resolution and graphics
API where both sides' captures record them. A card, driver or system may differ: that is what
a before/after usually compares."""

_CONFIGURATION_WORDS: Final = {"game": "games", "resolution": "resolutions",
                               "api": "graphics APIs"}


def configuration(capture: Capture) -> dict[str, str | None]:
    """What a capture records of its configuration (CONFIGURATION), as written."""
    recorded = capture.recorded
    group = capture.group
    return {"game": recorded.game or (group.application if group is not None else None),
            "resolution": recorded.resolution, "api": recorded.runtime}


def _same(value: str) -> str:
    return " ".join(value.split()).casefold()


def check_one_configuration(befores: list[Capture], afters: list[Capture],
                            changed: frozenset[str], files: tuple[str, str] | None = None
                            ) -> tuple[str, ...]:
    """Refuse captures that record two configurations (docs/spec/compare.md): each side must be
    one, and the sides the same one but for what `changed` states. Returns the stated changes
    the captures bear out (what differs), in CONFIGURATION order."""
    differ = []
    shown = files or (befores[0].source, afters[0].source)
    for name in CONFIGURATION:
        sides: dict[str, dict[str, str]] = {}
        for side, captures in (("before", befores), ("after", afters)):
            seen: dict[str, str] = {}
            for capture in captures:
                value = configuration(capture)[name]
                if value:
                    seen.setdefault(_same(value), value)
            if len(seen) > 1:
                first, second = list(seen.values())[:2]
                raise CompareError(
                    f"the {side} captures record different {_CONFIGURATION_WORDS[name]} "
                    f"({_shown(first)}, {_shown(second)}); each side of a before/after is one "
                    "configuration")
            sides[side] = seen
        before, after = sides["before"], sides["after"]
        if not before or not after or before.keys() == after.keys():
            continue
        if name not in changed:
            b, a = next(iter(before.values())), next(iter(after.values()))
            raise CompareError(
                f"the captures record different {_CONFIGURATION_WORDS[name]}: before "
                f"{_shown(b)} ({shown[0]}), after {_shown(a)} ({shown[1]}); a "
                "before/after compares one configuration: if that is the change, state it with "
                f"--changed {name} (and say why with --description)")
        differ.append(name)
    return tuple(differ)


def _compared(befores: list[Capture], afters: list[Capture], description: LabText | None,
              settings: str | None, changed: frozenset[str] = frozenset(),
              files: tuple[str, str] | None = None) -> Compared:
    """What the report names at its top: the change, the settings, and every distinct game,
    card and capture date the captures record (first and last date of a series), and what
    each side's own captures record (dates, drivers)."""
    subjects = [subject(c) for c in [*befores, *afters]]
    dates = sorted(_distinct([s["captured"] for s in subjects]))
    return Compared(
        description=description,
        settings=settings,
        games=tuple(_distinct([s["game"] for s in subjects])),
        cards=tuple(_distinct([s["card"] for s in subjects])),
        first_captured=dates[0] if dates else None,
        last_captured=dates[-1] if dates else None,
        before=side_recorded(befores),
        after=side_recorded(afters),
        changed=check_one_configuration(befores, afters, changed, files),
    )


def side_recorded(captures: list[Capture]) -> SideRecorded:
    """What one side's captures record: first and last date, every distinct driver (the
    readers' `Recorded`, as written; nothing parsed again here)."""
    subjects = [subject(c) for c in captures]
    dates = sorted(_distinct([s["captured"] for s in subjects]))
    return SideRecorded(first_captured=dates[0] if dates else None,
                        last_captured=dates[-1] if dates else None,
                        drivers=tuple(_distinct([s["driver"] for s in subjects])))


SHOWN_LIMIT = 200
"""Longest name read from a capture (game, card, date) that a report prints whole."""


def _shown(value: str | None) -> str | None:
    """A name read from a capture as a report prints it: escaped, and shortened (it is the
    capture's text, never refused, but not printed at any length)."""

    return None if not value else shorten(escape_invisible(value), SHOWN_LIMIT)


def subject(capture: Capture) -> dict[str, str | None]:
    """What a capture says it measured: game (its name, else the process read), card, driver
    and when it was made; None where the format records nothing."""
    recorded = capture.recorded
    group = capture.group
    game = recorded.game or (group.application if group is not None else None)
    return {"game": _shown(game), "card": _shown(recorded.gpu),
            "driver": _shown(recorded.driver), "captured": _shown(recorded.captured_at)}


def _distinct(values: list[str | None]) -> list[str]:
    """The values that are set, each once, in first-seen order."""
    return list(dict.fromkeys(v for v in values if v))


TEXT_LIMITS = {"description": 1000, "settings": 200}
"""Lengths of the free texts of a report (the limits of card.yaml's prose and name fields)."""


def check_free_text(value: object, name: str, *, file: str | None = None,
                    field: str | None = None) -> str:
    """A description or settings text, checked like card.yaml texts (docs/limits.md), or a
    CompareError naming the file (series file; `field` the key, default `name`) or the option
    (`--description`)."""

    shown, field = (file, field or name) if file is not None else (f"--{name}", None)
    if not isinstance(value, str):
        raise CompareError("expected a text", file=shown, field=field)
    try:
        # check_text knows the limits of card.yaml fields by name: "not_run" is a 1000-character
        # prose field (line breaks allowed), "title" a 200-character name.
        check_text(value, "not_run" if name == "description" else "title")
    except PydanticCustomError as exc:
        raise CompareError(exc.message(), file=shown, field=field) from None
    return value


def _fraction(pct: float | None) -> float | None:
    """A percentage as the fraction the `pct` filter shows (rounded again: no binary tail)."""

    return None if pct is None else round_half_away(pct / 100.0, 6)


def _rules() -> ReportRules:
    return ReportRules(
        stall_ms=diagnostics.STALL_MS,
        too_short_frames=diagnostics.TOO_SHORT_FRAMES,
        block_s=compare.BLOCK_MS / 1000.0,
        min_blocks=compare.MIN_BLOCKS,
        min_floor_fps=compare.MIN_FLOOR_FPS,
        min_pairs=compare.MIN_PAIRS,
        recommended_pairs=compare.RECOMMENDED_PAIRS,
        pilot_runs=compare.MIN_PILOT_RUNS,
        resamples=compare.BOOTSTRAP_RESAMPLES,
        seed=compare.BOOTSTRAP_SEED,
        focus_regain_s=compare.FOCUS_REGAIN_DROP_MS / 1000.0,
        focus_loss_s=compare.FOCUS_LOSS_DROP_MS / 1000.0,
    )


# --------------------------------------------------------------------------- series


def _inside(base: Path, raw: str, shown: str, field: str) -> Path:
    """A capture path of a series file, confined to the series file's folder: relative, no
    `..`, no NUL, and resolving (symlinks included) inside it; else a CompareError. The path
    itself is never printed whole (it may be long) and nothing outside is ever opened."""

    posix = PurePosixPath(raw.replace("\\", "/"))
    if "\x00" in raw or posix.is_absolute() or raw[1:3] == ":/" or raw[1:3] == ":\\":
        raise CompareError("expected a relative path inside the series file's folder",
                           file=shown, field=field)
    if ".." in posix.parts:
        raise CompareError("expected a path inside the series file's folder without '..'",
                           file=shown, field=field)
    target = base.joinpath(*posix.parts)
    try:
        inside = target.resolve().is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside:
        raise CompareError("resolves outside the series file's folder (a symlink out?)",
                           file=shown, field=field)
    return target


def read_series_file(path: Path) -> tuple[list[tuple[Path, Path]], list[Path] | None, str | None]:
    """Pairs, pilot and order of a series file (see the module docstring); strict."""
    pairs, pilot, order, _texts = read_series(path)
    return pairs, pilot, order


SERIES_KEYS = ("series", "order", "description", "settings", "pairs", "pilot")


def read_series(path: Path) -> tuple[list[tuple[Path, Path]], list[Path] | None, str | None,
                                     dict[str, LabText]]:
    """Pairs, pilot, order and the free texts (description, settings) of a series file."""

    shown = str(path)

    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            text = handle.read().decode("utf-8")
    except ValueError as exc:  # a FIFO or device (refused before reading), or not UTF-8
        what = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else f"is {exc}"
        raise CompareError(f"cannot read the series file ({what})", file=shown) from None
    except OSError as exc:
        raise CompareError(f"cannot read the series file ({exc.strerror})", file=shown) from exc

    try:
        data, duplicates = load_yaml(text)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise CompareError(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=shown,
                           line=None if line is None else line + 1) from exc
    if duplicates:
        first = duplicates[0]
        raise CompareError(f"not valid YAML: duplicate key {shorten(first.key)!r}", file=shown,
                           line=first.line)
    if not isinstance(data, dict):
        raise CompareError("expected a mapping with 'series', 'pairs' and optionally 'pilot'", file=shown)
    unknown = sorted(shorten(k) for k in set(map(str, data)) - set(SERIES_KEYS))
    if unknown:
        raise CompareError(f"unknown key (expected {', '.join(SERIES_KEYS)})", file=shown,
                           field=unknown[0])
    if data.get("series") != 1:
        raise CompareError(f"expected 1 (the format version), got {shorten(repr(data.get('series')))}",
                           file=shown, field="series")
    base = path.parent
    pairs_raw = data.get("pairs")
    if not isinstance(pairs_raw, list):
        raise CompareError("expected a list of {before: PATH, after: PATH}", file=shown, field="pairs")
    pairs = []
    for i, entry in enumerate(pairs_raw):
        if not isinstance(entry, dict) or set(entry) != {"before", "after"} or not all(
            isinstance(entry[k], str) and entry[k] for k in ("before", "after")
        ):
            raise CompareError("expected {before: PATH, after: PATH}", file=shown, field=f"pairs[{i}]")
        pairs.append((_inside(base, entry["before"], shown, f"pairs[{i}].before"),
                      _inside(base, entry["after"], shown, f"pairs[{i}].after")))
    pilot = None
    if "pilot" in data:
        pilot_raw = data["pilot"]
        if not isinstance(pilot_raw, list) or not all(isinstance(p, str) and p for p in pilot_raw):
            raise CompareError("expected a list of capture paths", file=shown, field="pilot")
        pilot = [_inside(base, p, shown, f"pilot[{j}]") for j, p in enumerate(pilot_raw)]
    order = data.get("order")
    if order is not None and not isinstance(order, str):
        raise CompareError("expected a text such as ABBA", file=shown, field="order")
    texts: dict[str, LabText] = {}
    if "description" in data:
        texts["description"] = check_description(data["description"], shown)
    if "settings" in data:
        texts["settings"] = check_free_text(data["settings"], "settings", file=shown)
    return pairs, pilot, order, texts


def check_description(value: object, file: str) -> LabText:
    """A series file's description: a text (English, as lab-written texts are), or the text
    per language {en, ru, pt} (at least one), each checked as check_free_text checks one."""
    if not isinstance(value, dict):
        return check_free_text(value, "description", file=file)
    unknown = sorted(shorten(str(k)) for k in value if k not in TEXT_LANGUAGES)
    if unknown or not value:
        raise CompareError("expected a text, or one per language as {en: ..., ru: ..., pt: ...}",
                           file=file, field=f"description.{unknown[0]}" if unknown else "description")
    return LocalText(**{lang: check_free_text(value[lang], "description", file=file,
                                              field=f"description.{lang}")
                        for lang in TEXT_LANGUAGES if lang in value})


TEXT_LANGUAGES = ("en", "ru", "pt")
"""The languages a series file's description may be given in (lab-written texts' own)."""


def build_series(series_path: Path, fmt: str | None, process: str | None,
                 texts: dict[str, LabText] | None = None,
                 changed: frozenset[str] = frozenset()) -> SeriesReport:
    """The report record of a paired series; `texts` (description, settings given as options)
    stand in for the series file's own, which may not state them as well."""

    pairs, pilot_paths, order, own = read_series(series_path)
    twice = sorted(set(own) & set(texts or {}))
    if twice:
        raise CompareError(f"given in the series file and as --{twice[0]}; give it once",
                           file=str(series_path), field=twice[0])
    own = {**own, **(texts or {})}
    settings = own.get("settings")
    assert settings is None or isinstance(settings, str)  # read_series gives it as one text
    shown_base = series_path.parent

    def shown(p: Path) -> str:
        try:
            return p.relative_to(shown_base).as_posix()
        except ValueError:
            return p.name  # never a path of the machine the report is made on

    if len(pairs) < compare.MIN_PAIRS:
        raise CompareError(
            f"{len(pairs)} pairs given, at least {compare.MIN_PAIRS} are needed (with 5 the "
            "smallest possible p-value of the exact signed-rank test is 0.0625); 8 recommended, "
            "in ABBA order",
            file=str(series_path), field="pairs",
        )
    if pilot_paths is not None and len(pilot_paths) < compare.MIN_PILOT_RUNS:
        raise CompareError(
            f"{len(pilot_paths)} pilot runs given, the pilot is {compare.MIN_PILOT_RUNS} runs of "
            "the unchanged configuration",
            file=str(series_path), field="pilot",
        )
    counted_pairs = []
    runs = []
    for b, a in pairs:
        rb = _one_run(b, fmt, process, shown(b))
        ra = _one_run(a, fmt, process, shown(a))
        runs += [rb, ra]
        counted_pairs.append((compare.count_side(side_input(rb)),
                              compare.count_side(side_input(ra))))
    pilot = None
    if pilot_paths is not None:
        pilot = [compare.count_side(side_input(_one_run(p, fmt, process, shown(p)))).summary
                 for p in pilot_paths]
    figures = compare.paired_series([(b.summary, a.summary) for b, a in counted_pairs], pilot)
    return SeriesReport(
        mode="series",
        compared=_compared(runs[0::2], runs[1::2], own.get("description"), settings, changed),
        order=order,
        series_file=series_path.name,
        pairs=tuple(SeriesPair(index=i + 1, before=b.summary, after=a.summary)
                    for i, (b, a) in enumerate(counted_pairs)),
        pilot_runs=None if pilot is None else len(pilot),
        figures=tuple(
            SeriesFigureRow(**asdict(f), median=_fraction(f.median_pct),
                            ci_low=_fraction(f.ci_low_pct), ci_high=_fraction(f.ci_high_pct),
                            smallest_effect=_fraction(f.smallest_effect_pct))
            for f in figures),
        rules=_rules(),
        csv=series_csv(counted_pairs),
    )


def report_record(captures: list[Path], series: Path | None = None, *, fmt: str | None = None,
                 process: str | None = None, base: Path | None = None,
                 description: str | None = None, settings: str | None = None,
                 description_lang: str = "en", changed: Sequence[str] = ()) -> ReportRecord:
    """The report record of BEFORE AFTER, of one file holding both sides, or of a series file.

    With `base`, capture files are named relative to it on the report (the site's samples);
    otherwise as given. `description` and `settings` are the options' texts (checked here);
    `description_lang` is the language the description is written in (English by default).
    """
    said = None if description is None else check_free_text(description, "description")
    # Held as that language's text, so a report in another language marks it as written in
    # it (not as English).
    told: LabText | None = (said if said is None or description_lang == "en"
                            else LocalText(**{description_lang: said}))
    shared = None if settings is None else check_free_text(settings, "settings")
    texts: dict[str, LabText] = {name: value for name, value in
                                 (("description", told), ("settings", shared))
                                 if value is not None}

    stated = frozenset(changed)
    unknown = sorted(stated - set(CONFIGURATION))
    if unknown:
        raise CompareError(f"expected one of {', '.join(CONFIGURATION)}, got {unknown[0]!r}",
                           field="--changed")
    # A document never prints a path of the machine it is made on: the captures are named
    # relative to their common folder (the site's samples: to `base`); a refusal names the
    # file as it was given.
    names = _shown_names(captures, base)
    given = [None if base is None else name for name in names]

    if series is not None:
        return build_series(series, fmt, process, texts, stated)
    if len(captures) == 2:
        before = _one_run(captures[0], fmt, process, given[0])
        after = _one_run(captures[1], fmt, process, given[1])
        return build_comparison(before, after, description=told, settings=shared,
                                changed=stated, files=(names[0], names[1]))
    if len(captures) == 1:
        before, after = _two_sides(captures[0], fmt, process, given[0])
        return build_comparison(before, after, description=told, settings=shared,
                                changed=stated, files=(names[0], names[0]))
    raise CompareError(f"expected two captures or one with both sides, got {len(captures)}")


def _shown_names(captures: list[Path], base: Path | None) -> list[str]:
    """How the report names each capture: relative to `base`; else as typed when every path
    given is inside the current folder; else relative to the captures' common folder (one
    capture: its file name). Never an absolute path, nor one climbing out with `..`."""
    if not captures:
        return []
    if base is not None:
        return [p.relative_to(base).as_posix() for p in captures]
    if all(not p.is_absolute() and ".." not in p.parts for p in captures):
        return [p.as_posix() for p in captures]  # as typed, inside the current folder
    full = [Path(os.path.abspath(p)) for p in captures]
    if len(full) == 1:
        return [full[0].name]
    common = Path(os.path.commonpath([str(p.parent) for p in full]))
    return [p.relative_to(common).as_posix() for p in full]


def series_csv(counted_pairs: list[tuple[CountedSide, CountedSide]]) -> str:
    """The series export: one metric block per run, side = pair_NN_before / pair_NN_after."""

    sides = []
    for i, (b, a) in enumerate(counted_pairs):
        sides.append((f"pair_{i + 1:02d}_before", b))
        sides.append((f"pair_{i + 1:02d}_after", a))
    return compare.csv_text(sides)


def report_date(given: dt.date | None = None) -> dt.date | None:
    """The date a report prints: SOURCE_DATE_EPOCH when set, else `given` (--date), else none.

    Never the clock and never an invented date: without either, the report carries no date.
    """

    epoch = source_date_epoch()
    return given if epoch is None else epoch.date()


def render_report(record: ReportRecord, langs: list[str], date: dt.date | None = None,
                  home: str | None = None) -> list[tuple[str, bytes]]:
    """Every file of the report as (name, bytes), rendered in memory, in writing order
    (`home`: the site index for the navigation, see certgen.render.report.render_html)."""

    csv_data = record.csv.encode("utf-8")
    files: list[tuple[str, bytes]] = [(CSV_NAME, csv_data)]
    for i, lang in enumerate(langs):
        svg = chart_for(record, lang) if isinstance(record, PairReport) else None
        if svg is not None and i == 0:
            files.append((CHART_NAME, svg.encode("utf-8")))
        html = render_html(record, lang, svg, date, languages=tuple(langs), home=home)
        title = gettext_for(lang)("Before/after report")
        # The PDF comes from the print form: no links to the other languages or the site,
        # which print hides anyway, so the PDF is the same whatever was built beside it.
        pdf = report_pdf(render_html(record, lang, svg, date), lang=lang, title=title, date=date,
                         attachments=[(CSV_NAME, csv_data, "side,kind,name,value")])
        files.append((html_name(lang), html.encode("utf-8")))
        files.append((pdf_name(lang), pdf))
    return files


def write_report(record: ReportRecord, out: Path, langs: list[str],
                 date: dt.date | None = None, home: str | None = None) -> list[str]:
    """Render everything in memory, then write it (atomic, confined, manifest last).

    `date` is what report_date() decided (None: the report prints no date); `home` is the
    site index the navigation links to (the site builder's; None for `certgen compare`).
    """

    files = render_report(record, langs, date, home)
    with Writer(out) as writer:
        for name, data in files:
            writer.write(name, data)
        writer.finish({"kind": "compare", "mode": record.mode, "languages": list(langs),
                       "date": None if date is None else date.isoformat()})
    return [name for name, _ in files]


def build_report(captures: list[Path], out: Path, langs: list[str], *,
                 series: Path | None = None, fmt: str | None = None, process: str | None = None,
                 date: dt.date | None = None, base: Path | None = None,
                 description: str | None = None, settings: str | None = None,
                 description_lang: str = "en", changed: Sequence[str] = ()) -> list[str]:
    """The whole report of BEFORE AFTER, one file with both sides, or a series file, written
    into `out`; returns the file names written (manifest.json last, not listed)."""
    record = report_record(captures, series, fmt=fmt, process=process, base=base,
                           description=description, settings=settings,
                           description_lang=description_lang, changed=changed)
    return write_report(record, out, langs, date)
