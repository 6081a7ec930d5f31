"""`certgen registry OUT --out DIR [--revocations FILE] [--as-of DATE]`: the verification
registry of the certificates `certgen build` wrote into OUT, for the laboratory to publish at
its verification base (docs/registry.md).

The registry's date decides expired and revoked: --as-of, else SOURCE_DATE_EPOCH (the build
date rule, certgen/support/builddate.py); with neither the command refuses, since the clock is never read.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from certgen.builders.registry import build_registry, read_certificates
from certgen.builders.site import GUIDE_FOLDER, build_guide, guide_home, guide_languages
from certgen.commands.build import signing_key_from_files
from certgen.distribution import load_wheel
from certgen.errors import RegistryError
from certgen.registry import parse_as_of
from certgen.support.builddate import source_date_epoch
from certgen.verify.reading import MAX_TRUST_BYTES, read_input

NO_DATE_MESSAGE = ("no date for the statuses: give --as-of YYYY-MM-DD or set SOURCE_DATE_EPOCH "
                   "(the registry never reads the clock)")
"""The refusal of a registry without a date (tests assert it word for word)."""


@click.command("registry")
@click.argument("records", type=click.Path(file_okay=False))
@click.option("--out", "out", required=True, type=click.Path(),
              help="Folder to write the registry into (publish it at the verification base).")
# Input files as click.Path(): a folder or FIFO given as one is refused by the reader in one
# line naming it (exit 1), not as a usage error.
@click.option("--revocations", default=None, type=click.Path(),
              help="revocations.yaml: the withdrawn certificates (id, date, reason).")
@click.option("--as-of", "as_of", default=None, metavar="YYYY-MM-DD",
              help="The date the statuses are given for (default: SOURCE_DATE_EPOCH).")
@click.option("--wheel", "wheel", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Publish this certgen wheel (software/, with its SHA-256) for customers to "
                   "verify with; it must be this certgen, file for file.")
@click.option("--sign", "sign_file", type=click.Path(), default=None,
              metavar="KEY.p12", help="Sign index.json with the lab's key (index.json.p7s, which "
              "certgen verify --revocations checks). Passphrase: $CERTGEN_SIGN_PASSPHRASE or "
              "--sign-passphrase-file.")
@click.option("--sign-passphrase-file", type=click.Path(), default=None,
              metavar="FILE", help="File whose first line is the passphrase of --sign's key.")
@click.option("--explainers", is_flag=True, default=False,
              help="Also publish the explainers (how to read a certificate, the figures, the "
                   "diagnostics) under guide/, in the languages of the certificates; the "
                   "registry pages link them. Needs a source checkout (the GOLD sample).")
@click.option("--next-update", "next_update", default=None, metavar="YYYY-MM-DD",
              help="When the statuses are due again (index.json's next_update; default: a week "
                   "after --as-of). verify says 'status list out of date' past it.")
@click.option("--ca", "ca_file", default=None, type=click.Path(), metavar="CA.pem",
              help="Publish the lab's CA certificate as ca.pem (verify --trust).")
@click.option("--crl", "crl_file", default=None, type=click.Path(), metavar="FILE",
              help="Publish the CA's current CRL as ca.crl (verify --crl).")
def command(records: str, out: str, revocations: str | None, as_of: str | None,
            wheel: str | None, sign_file: str | None, sign_passphrase_file: str | None,
            explainers: bool, next_update: str | None, ca_file: str | None,
            crl_file: str | None) -> None:
    """Publish the verification registry of the certificates built into RECORDS."""

    if as_of is not None:
        day = parse_as_of(as_of)
    else:
        epoch = source_date_epoch()
        if epoch is None:
            raise RegistryError(NO_DATE_MESSAGE)
        day = epoch.date()
    sign = None
    if sign_file is not None:
        sign = signing_key_from_files(sign_file, sign_passphrase_file).at(
            dt.datetime.now(dt.UTC), given=False)
    software = None
    if wheel is not None:
        software = load_wheel(wheel)
    due = None if next_update is None else parse_as_of(next_update, "--next-update")
    ca = None if ca_file is None else read_input(ca_file, limit=MAX_TRUST_BYTES,
                                                   what="a CA certificate")
    crl = None if crl_file is None else read_input(crl_file, limit=MAX_TRUST_BYTES,
                                                     what="a CRL")
    home = None
    if explainers:
        # The guide first: the registry pages link it, so it must exist when they do.
        languages = guide_languages([c.record.certificate.languages
                                     for c in read_certificates(Path(records))])
        guide = build_guide(Path(out), languages=languages)
        home = guide_home(languages)
        click.echo(f"explainers in {', '.join(languages)}: {len(guide)} files written to "
                   f"{Path(out) / GUIDE_FOLDER}")
    files = build_registry(Path(records), Path(out), as_of=day,
                           revocations=None if revocations is None else Path(revocations),
                           software=software, sign=sign, home=home, next_update=due, ca=ca,
                           crl=crl)
    pages = sum(1 for f in files if f.endswith("/index.html") and f.count("/") == 1)
    click.echo(f"{pages} certificates, {len(files)} files written to {out} "
               f"(statuses as of {day.isoformat()})")
    click.echo(f"Publish {out} at the laboratory's verification base.")
