"""`certgen build BUNDLE... --out DIR [--lang en,ru,pt] [--fleet DB] [--draft] [--jobs N]`.

Per bundle: DIR/<certificate id>/record.json, certificate.<lang>.html and .pdf, manifest.json
(written last). Languages default to card.yaml's `languages`. Several bundles build in a
process pool (--jobs, default: the number of cores), or on a Dask cluster with --scheduler
ADDRESS or $CERTGEN_SCHEDULER (docs/cluster.md), with a progress bar on a terminal (one
bundle: a bar over its PDFs, which take about 45 s each for 100 runs); a
bundle whose inputs did not change since its last build is not rebuilt (content-hash cache,
see certgen/builders/certificate.py). A rebuild removes the documents the previous build of that
folder listed and this one no longer makes (fewer languages, say). Each HTML document links
its siblings of the same run (hreflang alternates and an on-screen language switcher). The QR code on each document points to
<verify base>/<certificate id>/?sha256=<record SHA-256>; the base is the lab profile's
verification_base unless --verify-base says otherwise.

The issuer: `--lab FILE` (or $CERTGEN_LAB) names the laboratory profile (certgen.inputs.lab). A build
that is not --draft refuses without one, and refuses a verification base on a reserved example
domain (a specimen lab, whose documents are all marked SPECIMEN, may use one).

Signing: `--sign KEY.p12` signs every PDF for the lab (PAdES, certgen.render.sign; the `sign`
extra). The passphrase comes from $CERTGEN_SIGN_PASSPHRASE or `--sign-passphrase-file FILE`
(its first line), never from an argument, which other users could read in the process list.
The signature is made at the clock's time when the build starts (one time for every bundle),
or at `--signing-time`; a key not in the signatory's name, not valid then, or expiring before a
certificate's "valid until" is refused (certgen.render.sign.check_signing_key).
`certgen verify` checks a signed certificate (docs/verify.md).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import click

from certgen.builders.batch import build_many, check_unique_ids
from certgen.builders.certificate import check_verify_base
from certgen.errors import CertgenError
from certgen.inputs.lab import load_lab
from certgen.render.i18n import LANGUAGES
from certgen.render.sign import require_sign_extra, signing_key
from certgen.support.untrusted import UnreadableInput, read_limited, shorten

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

    from certgen.render.sign import SigningKey


def _languages(value: str | None) -> list[str] | None:
    if value is None:
        return None

    langs = [part.strip() for part in value.split(",") if part.strip()]
    for lang in langs:
        if lang not in LANGUAGES:
            raise click.BadParameter(
                f"{lang!r}: expected a comma-separated list of {', '.join(LANGUAGES)}",
                param_hint="--lang",
            )
    if not langs:
        raise click.BadParameter("expected at least one language", param_hint="--lang")
    return langs


@click.command("build")
@click.argument("bundles", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", "out_dir", required=True, type=click.Path(),
              help="Output folder; each certificate gets DIR/<certificate id>/.")
@click.option("--lang", "lang", default=None, metavar="en,ru,pt",
              help="Languages to render (default: card.yaml's languages).")
@click.option("--fleet", type=click.Path(dir_okay=False), default=None, envvar="CERTGEN_FLEET",
              help="Fleet database for cohort ranks (default: $CERTGEN_FLEET; without either, "
                   "every rank is provisional).")
@click.option("--draft", is_flag=True,
              help="Render a refused certificate anyway, visibly marked as a draft.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Bundles built in parallel (default: the number of cores).")
# Not click.Path(dir_okay=False): a folder given as a file is the input's problem, refused
# in one line naming it (exit 1), not a usage error.
@click.option("--lab", "lab_file", type=click.Path(), default=None,
              envvar="CERTGEN_LAB",
              help="The issuing laboratory's profile, lab.yaml (default: $CERTGEN_LAB); "
                   "required unless --draft.")
@click.option("--verify-base", default=None,
              help="Base URL of the verification link and QR code (default: the lab "
                   "profile's verification_base).")
@click.option("--scheduler", default=None, envvar="CERTGEN_SCHEDULER", metavar="ADDRESS",
              help="Build on a Dask cluster (tcp://host:8786; default: $CERTGEN_SCHEDULER). "
                   "Bundles, --out and an SQLite fleet must be on a path every worker shares; "
                   "see docs/cluster.md. Needs the dask extra.")
@click.option("--sign", "sign_file", type=click.Path(), default=None,
              metavar="KEY.p12",
              help="Sign every PDF with the lab's key (PKCS#12; needs --lab and the sign "
                   "extra). Passphrase: $CERTGEN_SIGN_PASSPHRASE or --sign-passphrase-file.")
@click.option("--sign-passphrase-file", type=click.Path(), default=None,
              metavar="FILE", help="File whose first line is the passphrase of --sign's key.")
@click.option("--signing-time", default=None, metavar="TIME",
              help="Sign at this time (ISO 8601 with a zone, e.g. 2026-12-01T10:00:00Z) instead "
                   "of the clock's: re-signing with the same time gives the same bytes.")
@click.option("--tsa", "tsa_url", default=None, metavar="URL",
              help="An RFC 3161 timestamp authority (http:// or https://): adds a signature "
                   "timestamp, the validation data and a document timestamp (PAdES B-LTA), so "
                   "signatures verify after the key expires. Needs the network at build time.")
def command(
    bundles: tuple[str, ...],
    out_dir: str,
    lang: str | None,
    fleet: str | None,
    draft: bool,
    jobs: int | None,
    lab_file: str | None,
    verify_base: str | None,
    scheduler: str | None,
    sign_file: str | None,
    sign_passphrase_file: str | None,
    signing_time: str | None,
    tsa_url: str | None,
) -> None:
    """Render certificates (record.json, HTML, PDF) for one or more bundles."""

    langs = _languages(lang)
    check_verify_base(verify_base)
    lab = None if lab_file is None else load_lab(lab_file)
    sign = None if sign_file is None else signing_key_from_files(sign_file, sign_passphrase_file)
    if sign is None and sign_passphrase_file is not None:
        raise click.BadParameter("only used with --sign", param_hint="--sign-passphrase-file")
    if signing_time is not None:
        if sign is None:
            raise click.BadParameter("only used with --sign", param_hint="--signing-time")
        sign = sign.at(time_option(signing_time, "--signing-time"), given=True)
    if tsa_url is not None:
        if sign is None:
            raise click.BadParameter("only used with --sign", param_hint="--tsa")
        check_tsa_url(tsa_url)
        sign = sign.with_tsa(tsa_url)
    check_unique_ids(list(bundles))
    workers = jobs or os.cpu_count() or 1
    kwargs = dict(languages=langs, fleet=fleet, draft=draft, verify_base=verify_base,
                  jobs=workers, lab=lab, scheduler=scheduler or None, sign=sign)
    if sys.stderr.isatty() and len(bundles) > 1:
        with click.progressbar(length=len(bundles), label="building", file=sys.stderr) as bar:
            results = build_many(list(bundles), out_dir, progress=bar.update, **kwargs)  # type: ignore[arg-type]
    elif sys.stderr.isatty():
        # One bundle: a bar over its documents instead (a PDF of 100 runs takes about 45 s).
        # Never off a terminal: scripts read a refusal as the one line on stderr.
        with DocumentProgress() as steps:
            results = build_many(list(bundles), out_dir, steps=steps, **kwargs)  # type: ignore[arg-type]
    else:
        results = build_many(list(bundles), out_dir, **kwargs)  # type: ignore[arg-type]
    failures = [(bundle, r) for bundle, r in results if isinstance(r, CertgenError)]
    bugs = [r for _bundle, r in results
            if isinstance(r, Exception) and not isinstance(r, CertgenError)]
    for _bundle, result in results:
        if isinstance(result, Exception):
            continue
        state = "built" if result.rebuilt else "unchanged"
        click.echo(f"{state} {result.certificate_id} ({', '.join(result.languages)}) -> "
                   f"{result.folder}")
        for note in result.notes:
            click.echo(f"certgen: note: {result.certificate_id}: {note}", err=True)
    if bugs:
        for bundle, result in results:
            if isinstance(result, CertgenError):
                click.echo(f"certgen: {bundle}: {result}", err=True)
            elif isinstance(result, Exception):
                click.echo(f"certgen: {bundle}: not built (an internal error, below)", err=True)
        raise bugs[0]  # a bug keeps its traceback, after every bundle was reported
    if len(failures) == 1 and len(bundles) == 1:
        raise failures[0][1]
    if failures:
        for bundle, exc in failures:
            # Name the bundle once: some messages (a path refused) already start with it.
            text = str(exc)
            where = "" if text.startswith(str(bundle)) else f"{bundle}: "
            click.echo(f"certgen: {where}{text}", err=True)
        raise CertgenError(f"{len(failures)} of {len(bundles)} bundles were not built")


MAX_TSA_URL = 500
"""Longest --tsa URL."""


def check_tsa_url(url: str) -> None:
    """--tsa: an absolute http:// or https:// URL, refused in one line (exit 1) as --verify-base
    is, not as a usage error: it is an input like any other, and may be long or hostile."""
    try:
        parts = urlsplit(url) if url.isprintable() and " " not in url else None
    except ValueError:  # an unclosed IPv6 bracket, a bad port
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise CertgenError(f"expected an http:// or https:// URL, got {shorten(url)!r}",
                           field="--tsa")
    if len(url) > MAX_TSA_URL:
        raise CertgenError(f"expected at most {MAX_TSA_URL} characters, got {len(url)}",
                           field="--tsa")


class DocumentProgress:
    """The progress bar of a one-bundle build on stderr, a step per PDF (DocumentSteps), drawn
    as `fleet add` and `site` draw theirs. It opens at the first document: how many languages
    there are is known only once the record is made."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._bar: ProgressBar[str | None] | None = None

    def __enter__(self) -> DocumentProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def __call__(self, name: str, done: int, total: int) -> None:
        if self._bar is None:
            bar = click.progressbar(length=total, label="rendering", file=sys.stderr,
                                    item_show_func=lambda item: item)
            bar.current_item = name
            self._bar = self._stack.enter_context(bar)  # draws the first step
            return
        self._bar.current_item = name or None
        self._bar.update(done - self._bar.pos)


PASSPHRASE_ENV = "CERTGEN_SIGN_PASSPHRASE"
"""The environment variable holding the passphrase of --sign's key."""


def time_option(text: str, option: str) -> dt.datetime:
    """--signing-time (and verify --at): an ISO 8601 date and time with its zone (Z, ±hh:mm)."""
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise click.BadParameter(f"expected a date and time with its zone, e.g. "
                                 f"2026-12-01T10:00:00Z, got {text!r}", param_hint=option)
    return when


MAX_KEY_BYTES = 1 << 20
"""Largest --sign key file (1 MiB; a PKCS#12 key with its chain is a few KB)."""
MAX_PASSPHRASE_BYTES = 64 << 10
"""Largest --sign-passphrase-file (64 KiB; only its first line is used)."""


def _read_signing_input(path: str, limit: int, what: str) -> bytes:
    """A signing input's bytes: a regular file within `limit` (a FIFO would block and
    /dev/zero never end; both are refused before any read), or one line naming it."""
    try:
        return read_limited(path, limit=limit, what=what)
    except UnreadableInput as exc:
        raise CertgenError(str(exc), file=path) from None


def signing_key_from_files(key_file: str, passphrase_file: str | None) -> SigningKey:
    """Read --sign's PKCS#12 file and its passphrase (a file's first line, else the variable)."""

    require_sign_extra()
    if passphrase_file is not None:
        lines = _read_signing_input(passphrase_file, MAX_PASSPHRASE_BYTES,
                                    "a passphrase file").splitlines()
        passphrase = lines[0] if lines else b""
    else:
        passphrase = os.environ.get(PASSPHRASE_ENV, "").encode("utf-8")
    data = _read_signing_input(key_file, MAX_KEY_BYTES, "a PKCS#12 key file")
    return signing_key(data, passphrase, source=key_file)
