"""`certgen errata`: the known defects of the capture tools certgen reads
(certgen/captures/errata.yaml), as a table, as JSON or as the Markdown page docs/errata.md."""

from __future__ import annotations

import json

import click

from certgen.captures.errata import ERRATA_FILE, Erratum, load_errata


def errata_markdown() -> str:
    """docs/errata.md: the file as a page (regenerated with `certgen errata --markdown`)."""
    found = load_errata()
    lines = [
        "# Known defects of the capture tools",
        "",
        f"Generated from `certgen/captures/{ERRATA_FILE.name}` (errata version "
        f"{found.errata_version}) by `certgen errata --markdown`; do not edit by hand.",
        "",
        "A capture is held against this list through its tool and the version it records (in a "
        "bundle, card.yaml's `tool_version` where the file records none). An entry matches when "
        "the tool is the same, the version lies in the range and one of its columns is a column "
        "certgen read from the capture; the match is a capture-check finding on the certificate "
        "and in `metrics --json` (`errata`). Effect `refuse` refuses issue; `warn` and `none` are "
        "findings only.",
        "",
        "| id | tool | versions | columns | effect | confidence |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {e.id} | {e.tool} | {e.versions_text()} | {', '.join(e.columns)} | "
              f"{e.effect} | {e.confidence} |" for e in found.errata]
    for e in found.errata:
        lines += ["", f"## {e.id}", "", " ".join(e.defect.split()), "",
                  f"Source: <{e.source}>. How it was checked: {' '.join(e.note.split())}"]
    return "\n".join(lines) + "\n"


def _line(e: Erratum) -> str:
    return f"{e.id}  {e.tool} {e.versions_text()}  [{', '.join(e.columns)}]  effect {e.effect}"


@click.command("errata")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.option("--markdown", is_flag=True, help="Print the docs page (docs/errata.md).")
def command(as_json: bool, markdown: bool) -> None:
    """List the known defects of the capture tools that certgen checks each capture against."""
    if as_json and markdown:
        raise click.UsageError("give at most one of --json and --markdown")
    found = load_errata()
    if markdown:
        click.echo(errata_markdown(), nl=False)
        return
    if as_json:
        click.echo(json.dumps({"errata_version": found.errata_version,
                               "errata": [e.model_dump(mode="json", by_alias=True)
                                          for e in found.errata]},
                              indent=2, ensure_ascii=False))
        return
    click.echo(f"errata version {found.errata_version}: {len(found.errata)} entries")
    for e in found.errata:
        click.echo(_line(e))
