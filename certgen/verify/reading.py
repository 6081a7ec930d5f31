"""verify's own inputs: the size limits of what it reads, a file read within them, the trust
roots (--trust, --tsa-trust), and the libraries' loggers kept quiet."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from certgen.errors import CertgenError
from certgen.support.untrusted import UnreadableInput, read_limited

if TYPE_CHECKING:
    from asn1crypto import x509


MAX_PDF_BYTES = 32 * 1024 * 1024
"""The largest certificate PDF verify reads (a certificate is a few hundred kB)."""
MAX_TRUST_BYTES = 1024 * 1024
"""The largest --trust file (a CA certificate, or a few, in PEM or DER)."""
MAX_REGISTRY_INDEX_BYTES = 64 * 1024 * 1024
"""The largest --revocations file read: the registry's index.json (about 1 kB a certificate:
some 60,000 certificates). A revocations.yaml in it holds certgen.registry's own, smaller
MAX_REVOCATIONS_BYTES, checked where it is parsed."""
MAX_RECORD_BYTES = 8 * 1024 * 1024
"""The largest attached record.json (a certificate's record is tens of kB)."""
MAX_PAGES = 100
"""The most pages verify reads the text of (a certificate has a handful)."""
MAX_RECORD_RUNS = 200
"""The most runs a record may hold before verify renders it (a card has tens)."""


def read_input(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of one of verify's inputs: a regular file (a FIFO or device is refused before
    any read: it could block or never end) of at most `limit` bytes; refusals name the file."""

    source = os.fspath(path)
    try:
        return read_limited(source, limit=limit, what=what)
    except UnreadableInput as exc:
        raise CertgenError(str(exc), file=source) from None



def load_trust(data: bytes, source: str) -> list[x509.Certificate]:
    from pyhanko.keys import load_certs_from_pemder_data

    try:
        roots = list(load_certs_from_pemder_data(data))
        for root in roots:
            _ = root.subject  # parse now, so a bad file is refused here
    except Exception:  # asn1crypto raises ValueError, TypeError or its own on bad DER
        raise CertgenError("expected a CA certificate (PEM or DER)", file=source) from None
    if not roots:
        raise CertgenError("expected a CA certificate (PEM or DER)", file=source)
    return roots




@contextmanager
def quiet_libraries(debug: bool = False) -> Iterator[None]:
    """pyHanko, its validator and pypdf log failed checks with tracebacks; the verdict already
    says what failed, so their loggers are off for the duration unless `debug` (verify --debug,
    which sends them to stderr)."""
    # A level on the parent logger covers its children (a child's `disabled` would not).
    loggers = [logging.getLogger(name) for name in ("pyhanko", "pyhanko_certvalidator", "pypdf")]
    before = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG if debug else logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, before):
            lg.setLevel(level)
