"""`certgen calibrate`: the fleet calibration review the SOP promises (docs/spec/calibration.md).

    certgen calibrate --fleet DB --out DIR [--rules CANDIDATE.yaml …] [--lang en,ru,pt]

Reads the fleet (read-only, one snapshot), reviews the thresholds of `--sop` (default the
current SOP) against it, re-grades every certificate under each candidate rules file, and
writes calibration.json, calibration.csv and calibration.<lang>.html / .pdf into DIR
(manifest.json last). The work is certgen.builders.calibration's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from certgen.builders.calibration import (
    calibrate_fleet,
    left_out_text,
    read_candidate,
    write_calibration,
)
from certgen.commands.compare import parse_langs
from certgen.commands.fleet import revocations_option, withdrawn
from certgen.fleet import fleet_path
from certgen.sop import DEFAULT_SOP, load_rules


@click.command("calibrate")
@click.option("--fleet", "fleet", default=None,
              help="The fleet: an SQLite file or a postgresql:// URL (default $CERTGEN_FLEET, "
              "else ./fleet.sqlite). Opened read-only.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Output folder.")
@click.option("--rules", "candidates", multiple=True,
              type=click.Path(dir_okay=True, path_type=Path),
              help="A candidate rules file (the SOP rules-file schema, weights adding up to 1); "
              "every certificate is re-graded under it beside the current rules. Repeatable.")
@click.option("--sop", "sop", default=DEFAULT_SOP, show_default=True,
              help="The SOP whose thresholds are reviewed.")
@click.option("--lang", "lang", default="en", show_default=True,
              help="Report languages, comma-separated (en, ru, pt).")
@revocations_option
def command(fleet: str | None, out: Path, candidates: tuple[Path, ...], sop: str,
            lang: str, revocations: str | None) -> None:
    """The fleet calibration review of the SOP's thresholds (grade lines, Soft Limit,
    weights, ranking minimum), with any candidate rules versions re-graded beside them.

    Left out of the review, and said so on stderr: specimens (SAMPLE- ids), the certificates
    --revocations revokes, and certificates sharing a capture with another one."""
    langs = parse_langs(lang)
    rules = load_rules(sop)
    proposed = [read_candidate(path) for path in candidates]
    revoked = withdrawn(revocations)
    location = fleet_path(fleet)
    # Progress on a terminal only: a refusal stays the one line on stderr scripts read.
    progress = sys.stderr.isatty()
    if progress:
        click.echo("reviewing the fleet (read-only, one snapshot) …", err=True)
    review, left = calibrate_fleet(location, rules=rules, candidates=proposed, revoked=revoked)
    if left.certificates:
        click.echo(f"left out of the review: {left_out_text(left)}", err=True)
    if progress:
        click.echo(f"{review.cards} certified cards, {review.runs} runs; rendering "
                   f"{', '.join(langs)}", err=True)
    for name in write_calibration(review, out, langs):
        click.echo(str(out / name))
