"""`certgen schema`: the JSON Schema of card.yaml, generated from the models in certgen.bundle."""

from __future__ import annotations

import json

import click


@click.command("schema")
def command() -> None:
    """Print the JSON Schema of card.yaml (deterministic: sorted keys, 2-space indent)."""
    from certgen.bundle import card_json_schema

    click.echo(json.dumps(card_json_schema(), indent=2, sort_keys=True, ensure_ascii=False))
