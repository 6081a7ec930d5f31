"""Fetch a CA's certificate revocation list from the address a certificate names (its CRL
distribution point): what `build --tsa` embeds after signing and what `verify` reads when the
file itself does not show the signer's key unrevoked at signing (issue 40).

Bounded like every other input (docs/limits.md): http:// and https:// only (a redirect to
anything else is refused), one answer of at most MAX_CRL_BYTES, within CRL_TIMEOUT_S. What comes
back is not trusted: the caller checks the CRL's signature against the CA it was given.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

CRL_TIMEOUT_S = 20
"""How long one CRL address may take to answer (connect and read)."""
MAX_CRL_BYTES = 10 * 1024 * 1024
"""The largest CRL read (a lab's CA lists a few revocations; a large public CA's CRL is a few
MB): a longer answer is refused, not read to the memory's end."""


STEP_S = 5.0
"""The longest one socket operation (connect, one read) may wait within a fetch."""


class CrlFetchError(Exception):
    """A CRL address that could not be read (the message says why, in one line; `kind` and
    `value` say it for a reader that words it in another language: certgen verify)."""

    def __init__(self, message: str, kind: str = "", value: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.value = value


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    # urllib would follow a redirect to ftp://; a CRL address is http(s) and so is its move.
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if urlsplit(newurl).scheme not in ("http", "https"):
            raise CrlFetchError(f"redirected to {newurl[:200]!r}, not an http(s) address",
                                "redirect", repr(newurl[:200]))
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def crl_addresses(points: object) -> list[str]:
    """The http(s) URLs among a certificate's CRL distribution points (asn1crypto's
    `crl_distribution_points`), in order; LDAP and the like are skipped."""
    found = []
    for point in points or []:  # type: ignore[attr-defined]
        try:
            names = point["distribution_point"].native
        except Exception:
            continue
        for name in names if isinstance(names, list) else []:
            if isinstance(name, str) and urlsplit(name).scheme in ("http", "https"):
                found.append(name)
    return found


def fetch_crl(url: str, *, timeout: float = CRL_TIMEOUT_S, limit: int = MAX_CRL_BYTES) -> bytes:
    """The bytes at `url` (a CRL, DER or PEM: the caller parses it); CrlFetchError naming why
    not in one line."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise CrlFetchError("not an http:// or https:// address", "scheme")
    opener = urllib.request.build_opener(_HttpOnlyRedirects)
    deadline = time.monotonic() + timeout
    try:
        # Each socket operation waits at most STEP_S; the deadline bounds them all, checked
        # after every read of what has arrived (read1: a dripped answer is not waited for a
        # whole chunk at a time), so the whole fetch ends within timeout + STEP_S.
        with opener.open(urllib.request.Request(url, headers={"User-Agent": "certgen"}),
                         timeout=min(timeout, STEP_S)) as answer:
            chunks: list[bytes] = []
            size = 0
            while size <= limit:
                if time.monotonic() > deadline:
                    raise TimeoutError
                chunk = answer.read1(min(65536, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
    except CrlFetchError:
        raise
    except urllib.error.HTTPError as exc:
        raise CrlFetchError(f"answered HTTP {exc.code}", "http", str(exc.code)) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
            raise CrlFetchError(f"did not answer within {timeout:g} s", "timeout",
                                f"{timeout:g}") from None
        raise CrlFetchError(f"cannot be reached ({type(reason).__name__})", "unreachable",
                            type(reason).__name__) from None
    if len(data) > limit:
        raise CrlFetchError(f"answered more than {limit} bytes", "size", str(limit))
    return data
