"""A CA's certificate revocation list held against the signer's certificate (issue 40): signed
by the CA that issued it, complete for it, and issued at or after the time it must cover. Used
for the CRL given with --crl, the one fetched from the certificate's CRL address, and each one
the file embeds (certgen.verify.signature): one rule for all three.

A CRL the CA signed can still leave the key out without lying: a delta CRL lists only what
changed since the full one, a CRL with an issuing distribution point may cover only CA
certificates, some reasons or another partition, a CRL issued after the certificate expired
may have dropped it (RFC 5280 §3.3, unless it states ExpiredCertsOnCRL), and one dated in the
future was signed ahead of time. None of them shows the key unrevoked. A keyCompromise entry's
invalidity date, when earlier than the revocation date, is when the key is known to have been
compromised: the revocation counts from then (RFC 5280 §5.3.2).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from certgen.errors import CertgenError
from certgen.verify.outcome import Said

if TYPE_CHECKING:
    from asn1crypto import x509
    from cryptography import x509 as cx509

CLOCK_SKEW = dt.timedelta(minutes=5)
"""How far in the future a CRL's date may lie (clocks differ) before it counts as pre-signed."""

_EXPIRED_CERTS_ON_CRL = "2.5.29.60"
"""X.509's ExpiredCertsOnCRL extension: the CRL keeps certificates that expired since that date."""


@dataclass(frozen=True)
class CrlFinding:
    """What the CA's CRL says of the signer's key at the time it must cover: `pass` (not
    revoked then), `fail` (revoked then, or a CRL that is not the CA's), `stale` (issued before
    that time, so it cannot say: no fault of the file, but nothing shown either) or `unfit` (a
    CRL of the CA that does not speak for this certificate: a delta or partial CRL, one dated
    in the future, or after the certificate expired; it shows nothing either)."""

    verdict: Literal["pass", "fail", "stale", "unfit"]
    detail: Said


def crl_finding(data: bytes, cert: x509.Certificate, roots: list[x509.Certificate], *,
                signed_at: dt.datetime | None, proven: dt.datetime | None,
                source: str | Said = "--crl") -> CrlFinding:
    """The signer's certificate held against its CA's CRL (--crl, as the registry publishes it:
    ca.crl, or as fetched from the certificate's CRL address). The CRL must be signed by a CA of
    --trust that issued the certificate and be issued at or after the time it must cover (the
    time the timestamps prove, else the signing time the signature states): an older one shows
    the key unrevoked only until its own date. A certificate revoked at or before that time
    fails; without a timestamp any revocation fails, since nothing proves when the key
    signed."""
    from asn1crypto import pem
    from cryptography import x509 as cx509
    from cryptography.exceptions import InvalidSignature

    try:
        der = pem.unarmor(data)[2] if pem.detect(data) else data
        crl = cx509.load_der_x509_crl(der)
    except Exception:
        if source == "--crl":
            raise CertgenError("expected the CA's certificate revocation list (CRL, PEM or DER)",
                               file=source) from None
        return CrlFinding("fail", Said("the CRL at %(source)s is not a certificate revocation list",
                                       source=source))
    issuer = next((r for r in roots if r.subject.dump() == cert.issuer.dump()), None)
    if issuer is None:
        return CrlFinding("fail", Said("the CRL %(source)s cannot be checked: no CA of --trust "
                                       "issued the signer's certificate", source=source))
    try:
        ca = cx509.load_der_x509_certificate(issuer.dump())
        signed = crl.issuer == ca.subject and crl.is_signature_valid(
            ca.public_key())  # type: ignore[arg-type]
    except (InvalidSignature, ValueError, TypeError):
        signed = False
    if not signed:
        return CrlFinding("fail", Said("the CRL %(source)s is not signed by the CA that issued the"
                                       " signer's certificate", source=source))
    unfit = _unfit(crl, cert, source)
    if unfit is not None:
        return CrlFinding("unfit", unfit)
    issued = crl.last_update_utc
    covers = proven or signed_at
    entry = crl.get_revoked_certificate_by_serial_number(int(cert.serial_number))
    when = None if entry is None else _revoked_as_of(entry)
    if when is not None and (proven is None or when <= proven):
        values = {"serial": str(cert.serial_number), "when": when.isoformat(sep=" "),
                  "issued": issued.date().isoformat()}
        return CrlFinding("fail", Said(
            "revoked: the signer's certificate (serial %(serial)s) was revoked by its CA on "
            "%(when)s (CRL of %(issued)s)", **values) if proven is not None else Said(
            "revoked: the signer's certificate (serial %(serial)s) was revoked by its CA on "
            "%(when)s (CRL of %(issued)s); without a timestamp nothing proves the key signed "
            "before that", **values))
    if covers is not None and issued < covers:
        return CrlFinding("stale", Said("the CRL %(source)s was issued on %(issued)s, before the "
                                        "signature (%(covers)s): it cannot show the key was not "
                                        "revoked when it signed", source=source,
                                        issued=issued.isoformat(sep=' '),
                                        covers=covers.isoformat(sep=' ')))
    if when is not None:
        assert proven is not None  # a revocation with nothing proving the time failed above
        return CrlFinding("pass", Said("revoked by its CA on %(when)s, after the timestamps prove "
                                       "the signature existed (%(proven)s)",
                                       when=when.isoformat(sep=' '),
                                       proven=proven.isoformat(sep=' ')))
    day = issued.date().isoformat()
    return CrlFinding("pass", Said("not revoked in its CA's CRL of %(issued)s", issued=day)
                      if source == "--crl" else
                      Said("not revoked in its CA's CRL of %(issued)s (%(source)s)", issued=day,
                           source=source))


def _revoked_as_of(entry: cx509.RevokedCertificate) -> dt.datetime:
    """When a revocation counts from: its date, or the invalidity date the CA states (when the
    key was compromised), whichever is earlier."""
    from cryptography import x509 as cx509

    when = entry.revocation_date_utc
    try:
        invalid = entry.extensions.get_extension_for_class(cx509.InvalidityDate).value
    except cx509.ExtensionNotFound:
        return when
    stated = invalid.invalidity_date_utc
    return min(when, stated)


def _unfit(crl: cx509.CertificateRevocationList, cert: x509.Certificate,
           source: str | Said) -> Said | None:
    """Why a CRL the CA signed cannot show this certificate unrevoked (module doc), or None."""
    from asn1crypto import core
    from cryptography import x509 as cx509

    known = {cx509.oid.ExtensionOID.AUTHORITY_KEY_IDENTIFIER, cx509.oid.ExtensionOID.CRL_NUMBER,
             cx509.oid.ExtensionOID.ISSUING_DISTRIBUTION_POINT,
             cx509.oid.ExtensionOID.AUTHORITY_INFORMATION_ACCESS,
             cx509.oid.ExtensionOID.FRESHEST_CRL}
    for extension in crl.extensions:
        if extension.oid == cx509.oid.ExtensionOID.DELTA_CRL_INDICATOR:
            return Said("the CRL %(source)s is a delta CRL: it lists only what changed since a "
                        "full one, so it cannot show the key unrevoked", source=source)
        if extension.critical and extension.oid not in known:
            return Said("the CRL %(source)s has a critical extension verify does not know "
                        "(%(oid)s)", source=source, oid=extension.oid.dotted_string)
    try:
        point = crl.extensions.get_extension_for_class(cx509.IssuingDistributionPoint).value
    except cx509.ExtensionNotFound:
        point = None
    if point is not None:
        ours = {name for item in (cert.crl_distribution_points or [])
                for name in (item["distribution_point"].native or [])
                if isinstance(name, str)}
        named = {name.value for name in point.full_name or []
                 if isinstance(name, cx509.UniformResourceIdentifier)}
        if (point.only_contains_ca_certs or point.only_contains_attribute_certs
                or point.only_some_reasons or point.indirect_crl or point.relative_name
                or (named and not named & ours)):
            return Said("the CRL %(source)s covers only part of its CA's certificates (its "
                        "issuing distribution point), not this one", source=source)
    issued = crl.last_update_utc
    if issued > dt.datetime.now(dt.UTC) + CLOCK_SKEW:
        return Said("the CRL %(source)s is dated %(issued)s, in the future", source=source,
                    issued=issued.isoformat(sep=" "))
    expires = cert["tbs_certificate"]["validity"]["not_after"].native
    if issued > expires:
        kept = next((e for e in crl.extensions
                     if e.oid.dotted_string == _EXPIRED_CERTS_ON_CRL), None)
        since = None
        if kept is not None:
            try:
                since = core.GeneralizedTime.load(kept.value.public_bytes()).native
            except Exception:
                since = None
        if since is None or since > expires:
            return Said("the CRL %(source)s was issued on %(issued)s, after the signer's "
                        "certificate expired (%(expires)s): a CA may drop an expired "
                        "certificate from its CRLs, so it cannot show the key unrevoked",
                        source=source, issued=issued.isoformat(sep=" "),
                        expires=expires.isoformat(sep=" "))
    return None
