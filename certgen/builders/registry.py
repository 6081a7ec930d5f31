"""Certificate folders → the verification registry (gather → entries → render → write).

`certgen registry OUT --out DIR` and `certgen site` (for the samples) both call `build_registry`:
it reads every finished certificate folder under OUT (record.json and the build manifest, as
`certgen build` writes them), applies revocations.yaml on the registry's date, renders one page
per certificate in en, ru and pt, copies each certificate's PDFs beside its page and writes
index.json (layout: certgen/render/registry.py). The folder it writes is what the laboratory
publishes at its verification base (docs/registry.md). Nothing in it is edited by hand: a
change of status is a rebuild.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from certgen.builders.certificate import pdf_name
from certgen.errors import RegistryError
from certgen.record import load_record
from certgen.registry import (
    INDEX_FORMAT,
    NO_REVOCATIONS,
    SOFTWARE_FOLDER,
    IssuedCertificate,
    RegistryEntry,
    Revocations,
    load_revocations,
    pdf_path,
    registry_entries,
    registry_index,
)
from certgen.render.i18n import LANGUAGES
from certgen.render.registry import (
    CSS_PATH,
    default_language,
    page_path,
    registry_css,
    render_registry_page,
)
from certgen.render.sign import sign_detached
from certgen.writer import Writer, read_manifest, verify_manifest

if TYPE_CHECKING:
    from certgen.registry import PublishedWheel
    from certgen.render.sign import SigningKey

SIGNATURE_SUFFIX = ".p7s"
"""index.json's detached CMS signature is index.json.p7s, beside it."""

RECORD_NAME = "record.json"
CA_NAME = "ca.pem"
"""The lab's CA certificate in the registry (what customers give `certgen verify --trust`)."""
CRL_NAME = "ca.crl"
"""The CA's current CRL in the registry (`certgen verify --crl`)."""


def read_certificates(records: Path) -> list[IssuedCertificate]:
    """Every finished certificate folder directly under `records` (one with record.json), sorted.

    Refused (RegistryError naming the file): no such folder at all; a folder without its
    manifest (an interrupted build); a file changed since the build; a folder not named
    after its certificate.
    """

    if not records.is_dir():
        raise RegistryError("not a folder of certificate builds", file=str(records))
    folders = sorted(p for p in records.iterdir()
                     if p.is_dir() and not p.is_symlink() and (p / RECORD_NAME).is_file())
    if not folders:
        raise RegistryError("no certificate folder (a folder with record.json, as `certgen build` "
                            "writes it)", file=str(records))
    found = []
    for folder in folders:
        source = str(folder / RECORD_NAME)
        manifest = read_manifest(folder)
        if manifest is None:
            raise RegistryError("no manifest.json beside it: an interrupted build; build the "
                                "certificate again", file=source)
        if not verify_manifest(folder, manifest):
            raise RegistryError("a file of this folder differs from its manifest.json: changed "
                                "or removed after the build; build the certificate again",
                                file=str(folder / "manifest.json"))
        data = (folder / RECORD_NAME).read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        if manifest.get("record_sha256") != sha:
            raise RegistryError(f"SHA-256 {sha} differs from the manifest's record_sha256",
                                file=source)
        record = load_record(data, source=source)
        if folder.name != record.certificate.id:
            raise RegistryError(f"certificate {record.certificate.id!r} is in a folder named "
                                f"{folder.name!r}; the registry needs the build's own layout",
                                file=source)
        listed = manifest.get("languages")
        langs = tuple(lang for lang in (listed if isinstance(listed, list) else [])
                      if isinstance(lang, str) and (folder / pdf_name(lang)).is_file())
        found.append(IssuedCertificate(record=record, record_sha256=sha, source=source,
                                       languages=langs, manifest=manifest))
    return found


def _entries(certificates: list[IssuedCertificate], as_of: dt.date,
             revocations: Path | None) -> list[RegistryEntry]:
    revoked: Revocations = NO_REVOCATIONS if revocations is None else load_revocations(revocations)
    return registry_entries(certificates, revoked, as_of)


def registry_statuses(records: Path, *, as_of: dt.date,
                      revocations: Path | None = None) -> dict[str, str]:
    """{certificate id: valid | expired | revoked} on `as_of`, as the registry built from the
    same folders and revocations.yaml shows them (the site's index marks each sample)."""
    return {e.id: e.status for e in _entries(read_certificates(records), as_of, revocations)}


def build_registry(records: Path, out: Path, *, as_of: dt.date,
                   revocations: Path | None = None, folder: str = "",
                   home: str | None = None, software: PublishedWheel | None = None,
                   sign: SigningKey | None = None, next_update: dt.date | None = None,
                   ca: bytes | None = None, crl: bytes | None = None) -> list[str]:
    """Write the registry of the certificates under `records` into out/folder; return the
    registry-relative paths written, sorted.

    `home` is the site's index page relative to the registry root, with `{lang}` for the
    page's language (None: the registry is published alone and links nowhere else).
    `software`: the checked certgen wheel (certgen.distribution) published under software/,
    which every page tells customers to install. `sign`: the lab's key; index.json then gets a
    detached signature, index.json.p7s (certgen.render.sign.sign_detached), which `certgen
    verify --revocations index.json` checks against --trust, and index.json names the signing
    certificate's SHA-256. `next_update`: when the statuses are due again (index.json's
    next_update; default a week after `as_of`). `ca`, `crl`: the lab's CA certificate and its
    current CRL, published as ca.pem and ca.crl for `certgen verify --trust` and `--crl`.
    """

    certificates = read_certificates(records)
    entries = _entries(certificates, as_of, revocations)
    folders = {c.record.certificate.id: Path(c.source).parent for c in certificates}

    with Writer(out, folder) as writer:
        writer.write(CSS_PATH, registry_css().encode("utf-8"))
        for entry in entries:
            pages = [(page_path(entry.id, lang), lang) for lang in LANGUAGES]
            pages.append((page_path(entry.id), default_language(entry)))
            for at, lang in pages:
                writer.write(at, render_registry_page(
                    entry, lang, at=at, as_of=as_of, software=software, crl=crl is not None,
                    home=None if home is None else home.format(lang=lang)).encode("utf-8"))
            for lang in entry.languages:
                writer.write(pdf_path(entry.id, lang),
                             (folders[entry.id] / pdf_name(lang)).read_bytes())
        if software is not None:
            writer.write(f"{SOFTWARE_FOLDER}/{software.name}", software.data)
            writer.write(f"{SOFTWARE_FOLDER}/SHA256SUMS", software.sums())
        if ca is not None:
            writer.write(CA_NAME, ca)
        if crl is not None:
            writer.write(CRL_NAME, crl)
        index = registry_index(entries, as_of, next_update, software=software,
                               signer_sha256=None if sign is None else sign.fingerprint)
        writer.write("index.json", index)
        if sign is not None:
            writer.write(f"index.json{SIGNATURE_SUFFIX}", sign_detached(index, sign))
        writer.finish({"registry": INDEX_FORMAT, "as_of": as_of.isoformat(),
                       "certificates": [e.id for e in entries]})
    return sorted(writer.written())
