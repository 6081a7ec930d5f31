"""`certgen verify CERT.pdf [--bundle DIR] [--trust CA.pem] [--revocations FILE] [--json]`.

Offline checks of one certificate PDF (certgen.verify, docs/verify.md): one verdict line per
check (PASS, FAIL, SKIP), warnings, and a last line naming every failed check. Exit 0 only when
no check failed, 1 otherwise. Needs the `sign` extra (pyHanko, pypdf).
"""

from __future__ import annotations

import json

import click


@click.command("verify")
@click.argument("pdf", type=click.Path(exists=True, dir_okay=False))
@click.option("--bundle", type=click.Path(exists=True, file_okay=False), default=None,
              help="The certificate's bundle: check every capture's SHA-256 and recompute "
                   "every figure from the captures.")
@click.option("--trust", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="CA.pem", help="The laboratory's CA certificate the signature must chain to.")
@click.option("--revocations", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE", help="The lab's revocations.yaml (a list of {id, date, reason}).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as one JSON object.")
def command(pdf: str, bundle: str | None, trust: str | None, revocations: str | None,
            as_json: bool) -> None:
    """Check a certificate PDF: signature, record, printed figures, grade, captures."""
    import logging
    from pathlib import Path

    from certgen.verify import load_revocations, verify_pdf

    # pyHanko logs a failed path search with its traceback; the verdict line already says it.
    for name in ("pyhanko", "pyhanko_certvalidator"):
        logging.getLogger(name).disabled = True

    result = verify_pdf(
        Path(pdf).read_bytes(), source=pdf,
        trust=None if trust is None else Path(trust).read_bytes(), trust_source=trust or "",
        revocations=None if revocations is None else load_revocations(revocations),
        bundle=bundle,
    )
    if as_json:
        click.echo(json.dumps(result.as_json(), ensure_ascii=False, indent=2))
    else:
        for check in result.checks:
            click.echo(check.line())
        for warning in result.warnings:
            click.echo(f"warning: {warning}", err=True)
        failed = result.failed()
        if failed:
            click.echo(f"NOT VERIFIED: {pdf}: {len(failed)} check(s) failed: {', '.join(failed)}")
        else:
            click.echo(f"VERIFIED: {pdf} ({result.certificate_id})")
    if not result.ok:
        raise click.exceptions.Exit(1)
