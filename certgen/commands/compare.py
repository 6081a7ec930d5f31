"""`certgen compare`: the before/after report (docs/spec/compare.md).

    certgen compare BEFORE AFTER --out DIR [--lang en,ru,pt]
    certgen compare BOTH.csv --out DIR          (a benchmark-page CSV holding both sides)
    certgen compare --series SERIES.yaml --out DIR

Writes into DIR: `report.<lang>.html` and `report.<lang>.pdf` per language, `frame-times.svg`
(both sides; two-capture mode), `compare.csv` (side,kind,name,value) and `manifest.json` last.
The work is certgen.builders.report's; this module parses the options and prints what was written.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from certgen.builders.report import build_report, report_date
from certgen.render.i18n import LANGUAGES


def parse_langs(value: str) -> list[str]:
    langs = [v.strip() for v in value.split(",") if v.strip()]
    bad = [v for v in langs if v not in LANGUAGES]
    if not langs or bad:
        raise click.BadParameter(
            f"{', '.join(bad) or value!r}: expected a comma-separated list of {', '.join(LANGUAGES)}",
            param_hint="--lang",
        )
    return list(dict.fromkeys(langs))


@click.command("compare")
@click.argument("captures", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Output folder.")
@click.option("--lang", "lang", default="en", show_default=True,
              help="Report languages, comma-separated (en, ru, pt).")
@click.option("--series", "series", type=click.Path(dir_okay=False, path_type=Path),
              help="A paired-series file (YAML: pairs of before/after captures, optional pilot).")
@click.option("--format", "fmt", default=None, help="Force a capture reader (see certgen metrics).")
@click.option("--process", default=None,
              help="PresentMon family: the application to read, or one group as certgen prints "
              "it, e.g. 'Game.exe (pid 7124)'.")
@click.option("--date", "date", default=None, type=click.DateTime(formats=["%Y-%m-%d"]),
              help="Date to print on the report (YYYY-MM-DD). SOURCE_DATE_EPOCH, when set, "
              "takes precedence; with neither, the report prints no date.")
@click.option("--description", "description", default=None,
              help="What changed between before and after, printed at the top of the report "
                   "(plain text, in English unless --description-lang says otherwise, at most "
                   "1000 characters; a series file may say it "
                   "instead, also per language).")
@click.option("--description-lang", "description_lang", default="en", show_default=True,
              type=click.Choice(["en", "ru", "pt"]),
              help="The language --description is written in: a report in another language "
                   "marks it as written in this one.")
@click.option("--changed", "changed", multiple=True,
              type=click.Choice(["game", "resolution", "api"]),
              help="What changed between the sides that the captures record: the game (or "
                   "the process read), the resolution or the graphics API. Without it, captures "
                   "that record different ones are refused (a before/after compares one "
                   "configuration). Repeatable; the report names it.")
@click.option("--settings", "settings", default=None,
              help="The game settings both sides share, e.g. '2560x1440, Ultra' (plain text, at "
                   "most 200 characters).")
def command(captures: tuple[Path, ...], out: Path, lang: str, series: Path | None,
            fmt: str | None, process: str | None, date: dt.datetime | None,
            description: str | None, description_lang: str, changed: tuple[str, ...],
            settings: str | None) -> None:
    """Before/after report with a noise floor: BEFORE AFTER, one CSV with both sides, or --series.

    \b
    The series file (YAML, paths relative to it):
      series: 1
      order: ABBA            # optional
      description: ReBAR off -> on   # optional: the change (or --description); or per
                                     # language: {en: ..., ru: ..., pt: ...}
      settings: 2560x1440, Ultra     # optional: what both sides share (or --settings)
      pairs:                 # at least 6, 8 recommended, in run order
        - {before: runs/01-a.csv, after: runs/01-b.csv}
      pilot: [pilot/01.csv, ...]   # optional: 10 runs, no change

    Writes report.<lang>.html/.pdf, frame-times.svg, compare.csv (side,kind,name,value) and
    manifest.json (last) into --out. The report is dated from SOURCE_DATE_EPOCH, else --date,
    else it carries no date (never the clock).
    """

    langs = parse_langs(lang)
    when = report_date(None if date is None else date.date())
    if series is not None and captures:
        raise click.UsageError("give either --series or BEFORE AFTER, not both")
    if series is None and len(captures) not in (1, 2):
        raise click.UsageError("expected BEFORE AFTER, one benchmark CSV with both sides, or --series")

    written = build_report(list(captures), out, langs, series=series, fmt=fmt, process=process,
                           date=when, description=description, settings=settings,
                           description_lang=description_lang, changed=changed)
    for name in written:
        click.echo(str(out / name))


