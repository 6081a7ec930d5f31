"""`certgen verify CERT.pdf [--bundle DIR] [--trust CA.pem] [--tsa-trust CA.pem]
[--revocations FILE [--allow-unsigned-list]] [--crl FILE] [--offline] [--lang en|ru|pt] [--json]`.

Checks of one certificate PDF (certgen.verify, docs/verify.md), offline but for the CA's CRL
when the file shows none issued after the signature (--offline: never): one verdict line per
check (PASS, FAIL, SKIP), warnings, and a last line: VERIFIED (exit 0) when every check ran and
held, VERIFIED EXCEPT naming the checks that did not run (exit 3), NOT VERIFIED naming every
failed check (exit 1). Every input is a regular file within its size limit. Needs the `sign`
extra (pyHanko, pypdf). No library log line or traceback reaches the terminal unless --debug.
Each check's detail and the summary's words print in the PDF's language (--lang: another); the
words PASS, FAIL, SKIP, the check names and VERIFIED / VERIFIED EXCEPT / NOT VERIFIED stay
English, and --json keeps every `detail` English (adding `lang` and `detail_localized`).
"""

from __future__ import annotations

import json
import logging

import click

from certgen.commands.build import time_option
from certgen.verify.reading import MAX_PDF_BYTES, MAX_TRUST_BYTES, read_input
from certgen.verify.revocation import load_revocations
from certgen.verify.verdict import verify_pdf


@click.command("verify")
@click.argument("pdf", type=click.Path(dir_okay=False))
@click.option("--bundle", type=click.Path(exists=True, file_okay=False), default=None,
              help="The certificate's bundle: check every capture it cites (archived first "
                   "captures included) and recompute every figure from them.")
@click.option("--trust", type=click.Path(dir_okay=False), default=None,
              metavar="CA.pem", help="The laboratory's CA certificate the signature must chain to.")
@click.option("--tsa-trust", type=click.Path(dir_okay=False), default=None, metavar="CA.pem",
              help="The timestamp authority's root (for a timestamped certificate), kept apart "
                   "from --trust so that it never vouches for a signatory (default: --trust).")
@click.option("--revocations", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="The lab's revocations.yaml, or its registry's "
                                   "verify/index.json (a saved copy of the published one).")
@click.option("--allow-unsigned-list", is_flag=True,
              help="Accept a registry index.json without its signature (index.json.p7s); the "
                   "verdict says it was accepted unsigned.")
@click.option("--crl", "crl", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="The CA's current certificate revocation list (the registry's ca.crl): the "
                   "signer's certificate must not be revoked in it.")
@click.option("--offline", is_flag=True,
              help="Do not fetch the CA's CRL from the address the signer's certificate names "
                   "(by default verify does when the file shows no CRL issued after the "
                   "signature and --crl is not given).")
@click.option("--lang", "lang", type=click.Choice(["en", "ru", "pt"]), default=None,
              help="The language the details and the summary's words print in (default: the "
                   "PDF's own language, else English); PASS, FAIL, SKIP, the check names and "
                   "VERIFIED stay English.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as one JSON object.")
@click.option("--at", "at_time", default=None, metavar="TIME",
              help="Check the signer's certificate at this time (ISO 8601 with its zone) "
                   "instead of now: e.g. whether a timestamped certificate still verifies after "
                   "its key expired.")
@click.option("--debug", is_flag=True, help="Let pyHanko's and pypdf's log lines through to "
                                            "stderr (for a bug report).")
def command(pdf: str, bundle: str | None, trust: str | None, tsa_trust: str | None,
            revocations: str | None, allow_unsigned_list: bool, crl: str | None,
            offline: bool, lang: str | None, as_json: bool, at_time: str | None,
            debug: bool) -> None:
    """Check a certificate PDF: signature, record, what it prints, grade, captures."""

    at = None if at_time is None else time_option(at_time, "--at")
    if debug:
        logging.basicConfig(level=logging.DEBUG)
        logging.getLogger("certgen").setLevel(logging.DEBUG)
    data = read_input(pdf, limit=MAX_PDF_BYTES, what="a certificate PDF")
    roots = None if trust is None else read_input(trust, limit=MAX_TRUST_BYTES,
                                                  what="a CA certificate")
    tsa_roots = None if tsa_trust is None else read_input(tsa_trust, limit=MAX_TRUST_BYTES,
                                                          what="a CA certificate")
    result = verify_pdf(
        data, source=pdf, trust=roots, trust_source=trust or "", tsa_trust=tsa_roots,
        revocations=None if revocations is None else load_revocations(revocations),
        bundle=bundle, debug=debug, at=at, allow_unsigned_list=allow_unsigned_list,
        crl=None if crl is None else read_input(crl, limit=MAX_TRUST_BYTES, what="a CRL"),
        offline=offline, lang=lang,
    )
    if as_json:
        click.echo(json.dumps(result.as_json(localized=True), ensure_ascii=False, indent=2))
    else:
        for line in result.lines():
            click.echo(line)
        for warning in result.warnings_in():
            click.echo(f"warning: {warning}", err=True)
        click.echo(result.summary())
    if result.exit_code:
        raise click.exceptions.Exit(result.exit_code)
