"""`certgen schema`: the JSON Schema of card.yaml (from the models in certgen.inputs.bundle), or with
`--record` that of record.json (from the models in certgen.record, docs/record.schema.json), or
with `--lab` that of a laboratory profile (certgen.inputs.lab)."""

from __future__ import annotations

import json

import click

from certgen.inputs.bundle import card_json_schema
from certgen.inputs.lab import lab_json_schema
from certgen.record import record_schema_text


@click.command("schema")
@click.option("--record", "record", is_flag=True,
              help="Print the JSON Schema of record.json instead of card.yaml.")
@click.option("--lab", "lab", is_flag=True,
              help="Print the JSON Schema of a laboratory profile (lab.yaml) instead.")
def command(record: bool, lab: bool) -> None:
    """Print the JSON Schema of card.yaml (deterministic: sorted keys, 2-space indent).

    With --record, the JSON Schema of record.json, exactly docs/record.schema.json; with --lab,
    that of lab.yaml (certgen.inputs.lab).
    """
    if record and lab:
        raise click.UsageError("give at most one of --record and --lab")
    if lab:
        click.echo(json.dumps(lab_json_schema(), indent=2, sort_keys=True, ensure_ascii=False))
        return
    if record:
        click.echo(record_schema_text(), nl=False)
        return

    click.echo(json.dumps(card_json_schema(), indent=2, sort_keys=True, ensure_ascii=False))
