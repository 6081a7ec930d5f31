"""Bundles → out/<certificate id>/{record.json, certificate.<lang>.html, certificate.<lang>.pdf}.

One bundle is built by `build_bundle` (pure up to the writer): make the record, render every
language in memory, then hand the bytes to the writer (atomic, confined, manifest last).

The bundle is read once (`load_bundle`: card.yaml and the files it names); the same bytes give
the cache key and the record. The cache: `inputs_key` hashes everything an output depends on —
card.yaml and every file it names (name and SHA-256; files it does not name are never read),
the rules files (packaged and on CERTGEN_RULES_PATH), templates/, locales/, the certgen
version and software stack, the lab profile's content, when a fleet is used the fleet content of
the bundle's own cohorts (FleetStore.cohort_digest: adding a run to another cohort does not
rebuild this certificate), the languages, the draft flag, the verification base and, for a
signed build, the signing certificate's fingerprint (never the passphrase). A build
that is not a draft needs a lab profile (certgen.inputs.lab); so does a signed one (`sign`: every PDF
gets the lab's PAdES signature, certgen.render.sign, made at the build's signing time). The manifest of a finished folder records that key; when the key is unchanged and every
file the manifest lists is intact, the bundle is not rebuilt.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, cast
from urllib.parse import urlsplit

from certgen import __version__
from certgen.errors import BundleError, CertgenError, LabError
from certgen.fleet import FleetStore
from certgen.inputs.bundle import load_bundle
from certgen.inputs.lab import NO_LAB_MESSAGE, check_issuable_base
from certgen.pipeline import bundle_cohorts, record_from_bundle
from certgen.record import dump_record
from certgen.render.certificate import (
    DEFAULT_VERIFY_BASE,
    certificate_print_html,
    html_file_name,
    pdf_file_name,
    render_certificate_html,
    render_certificate_pdf,
)
from certgen.render.i18n import check_language
from certgen.render.sign import (
    check_key_outlives,
    check_signing_key,
    sign_pdf,
    stale_crl_note,
)
from certgen.sop import rules_folders
from certgen.support.paths import locales_dir, templates_dir
from certgen.support.software import creator_line, current_software
from certgen.support.untrusted import shorten
from certgen.writer import Writer, read_manifest, verify_manifest

if TYPE_CHECKING:
    from certgen.inputs.bundle import LoadedBundle
    from certgen.inputs.lab import LabProfile
    from certgen.record import Record
    from certgen.render.sign import SigningKey

RECORD_NAME = "record.json"

CERTIFICATE_TEMPLATE_FILES = ("base.html.j2", "certificate.html.j2", "certificate.css", "fonts.conf",
                              "nav.html.j2", "nav.css")
"""The templates/ files a certificate is rendered from (with templates/fonts/): the cache key."""


def pdf_name(lang: str) -> str:
    """The file name of a certificate's PDF in one language."""

    return pdf_file_name(lang)


DocumentSteps = Callable[[str, int, int], object]
"""A build's progress through its documents: called with (the file about to be made, files
done, files in all) before each PDF, and ("", n, n) once all are made. Only `certgen build` of
a single bundle on a terminal passes one (a 100-run certificate takes about 45 s a language);
it never reaches a pool worker or a cluster task."""


class BuildOptions(TypedDict, total=False):
    """The keyword arguments of build_bundle that a batch passes to every bundle's build (to a
    pool worker or a cluster task as one picklable dict)."""

    languages: Sequence[str] | None
    fleet: str | None
    draft: bool
    verify_base: str | None
    use_cache: bool
    lab: LabProfile | None
    sign: SigningKey | None
    home: str | None


class _Digest(Protocol):
    """What _hash_tree feeds: a hashlib hash object."""

    def update(self, data: bytes, /) -> None: ...


@dataclass(frozen=True)
class BuildResult:
    """What one bundle produced: its id, languages, folder, and whether it was rebuilt."""

    bundle: str
    certificate_id: str
    languages: tuple[str, ...]
    folder: str
    rebuilt: bool
    record_sha256: str
    notes: tuple[str, ...] = ()
    """What a build should know but did not stop it (printed as `note:` lines): a timestamped
    certificate without a CRL issued after its signature."""


def _hash_tree(root: Path, digest: _Digest, label: str) -> None:
    """Feed every regular file under root (sorted relative paths, then contents) to digest."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        rel = path.relative_to(root).as_posix()
        digest.update(f"{label}/{rel}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())


@lru_cache(maxsize=4)
def _static_inputs_digest(templates: str, locales: str, sop: tuple[str, ...], stack: str) -> bytes:
    digest = hashlib.sha256()
    digest.update(f"certgen {__version__}\0".encode())
    # The renderer stack is in record.json (`software`): another stack, another output.
    digest.update(f"stack {stack}\0".encode())
    # Only what certificates read: their templates, the stylesheet, fonts.conf and the fonts
    # (the report and site templates of other commands do not change a certificate).
    root = Path(templates)
    for name in CERTIFICATE_TEMPLATE_FILES:
        digest.update(f"templates/{name}\0".encode())
        digest.update(hashlib.sha256((root / name).read_bytes()).digest())
    _hash_tree(root / "fonts", digest, "templates/fonts")
    # Only what certificates read: the message catalogs and the glossary (explainer pages
    # under locales/<lang>/explainers/ do not change a certificate).
    for catalog in sorted(Path(locales).glob("*/LC_MESSAGES")):
        _hash_tree(catalog, digest, f"locales/{catalog.parent.name}")
    glossary = Path(locales) / "glossary.yaml"
    if glossary.is_file():
        digest.update(b"glossary\0" + hashlib.sha256(glossary.read_bytes()).digest())
    for number, folder in enumerate(sop):
        _hash_tree(Path(folder), digest, f"sop{number}")
    return digest.digest()


def static_inputs_digest() -> bytes:
    """Digest of the certgen version and stack, templates/, locales/ and the rules files (the
    packaged ones and those on CERTGEN_RULES_PATH) (cached)."""

    sop = tuple(str(folder) for folder in rules_folders() if folder.is_dir())
    return _static_inputs_digest(str(templates_dir()), str(locales_dir()), sop,
                                 creator_line(current_software()))


def inputs_key(
    bundle: LoadedBundle,
    *,
    languages: Sequence[str] | None,
    draft: bool,
    verify_base: str,
    fleet: Path | str | None,
    store: FleetStore | None = None,
    lab: LabProfile | None = None,
    sign: SigningKey | None = None,
    home: str | None = None,
) -> str:
    """The content hash that decides whether a bundle must be rebuilt (see module doc).

    With a fleet, only its content for the bundle's cohorts enters (from `store` when open);
    everything the record takes from the fleet (ranks, `fleet.fleet_runs`) comes from those
    cohorts alone, so a cached certificate is the one a fresh build would make.
    """
    digest = hashlib.sha256(static_inputs_digest())
    digest.update(f"lab={'-' if lab is None else lab.sha256}\0".encode())
    digest.update(f"bundle={bundle.content_sha256()}\0".encode())
    digest.update(f"langs={','.join(languages) if languages else '*'}\0".encode())
    digest.update(f"draft={draft}\0verify={verify_base}\0".encode())
    digest.update(f"sign={'-' if sign is None else sign.fingerprint}\0".encode())
    if sign is not None and sign.signing_time_given and sign.signing_time is not None:
        # Re-signing at a given time rebuilds; the clock's time does not (a no-change rebuild
        # keeps the PDFs signed before).
        digest.update(f"signed-at={sign.signing_time.isoformat()}\0".encode())
    if sign is not None and sign.tsa_url is not None:
        digest.update(f"tsa={sign.tsa_url}\0".encode())
    if home is not None:  # the site's link home (certgen.builders.site); plain builds have none
        digest.update(f"home={home}\0".encode())
    if fleet is not None:
        digest.update(b"fleet\0")
        if store is not None:
            digest.update(store.cohort_digest(bundle_cohorts(bundle)).encode())
        else:
            with FleetStore.open(os.fspath(fleet), readonly=True) as opened:
                digest.update(opened.cohort_digest(bundle_cohorts(bundle)).encode())
    return digest.hexdigest()


def _check_folder_name(cert_id: str) -> None:
    if not cert_id or "/" in cert_id or "\\" in cert_id or cert_id in (".", "..") or "\x00" in cert_id:
        raise BundleError(
            f"expected a certificate id usable as a folder name, got {cert_id!r}",
            file="card.yaml", field="certificate.id",
        )


def choose_languages(record: Record, requested: Sequence[str] | None) -> tuple[str, ...]:
    """--lang when given, else card.yaml's `languages`; validated, order kept, no repeats."""

    wanted = list(requested) if requested else list(record.certificate.languages or ("en",))
    out: list[str] = []
    for lang in wanted:
        check_language(lang)
        if lang not in out:
            out.append(lang)
    return tuple(out)


def render_documents(
    record: Record, languages: Iterable[str], *, verify_base: str,
    sign: SigningKey | None = None, home: str | None = None,
    steps: DocumentSteps | None = None,
) -> tuple[bytes, dict[str, bytes]]:
    """record.json bytes and {file name: bytes} of every HTML and PDF, all in memory; with
    `sign`, every PDF signed for the record's issuer by its signatory at the key's signing time
    (refused when the key expires before the certificate does; `home`: see
    render_certificate_html; `steps`: see DocumentSteps)."""

    if sign is not None and record.issuer is not None:
        check_key_outlives(sign, certificate_id=record.certificate.id,
                           valid_until=dt.date.fromisoformat(record.issuer.valid_until))
    record_bytes = dump_record(record)
    sha = hashlib.sha256(record_bytes).hexdigest()
    documents: dict[str, bytes] = {}
    langs = tuple(languages)
    for done, lang in enumerate(langs):
        if steps is not None:
            steps(pdf_name(lang), done, len(langs))
        html = render_certificate_html(record, lang, record_sha256=sha, verify_base=verify_base,
                                       languages=langs, signed=sign is not None, home=home)
        documents[html_file_name(lang)] = html.encode("utf-8")
        # The PDF comes from the print form: the HTML without the screen's links to the other
        # languages and the site, the very HTML `certgen verify` renders again from the record.
        printed = certificate_print_html(record, lang, record_sha256=sha,
                                         verify_base=verify_base, signed=sign is not None)
        pdf = render_certificate_pdf(printed, record, record_bytes, lang)
        if sign is not None:
            assert record.issuer is not None  # render_certificate_html refused it otherwise
            pdf = sign_pdf(pdf, sign, name=record.issuer.signatory.name)
        documents[pdf_name(lang)] = pdf
    if steps is not None:
        steps("", len(langs), len(langs))
    return record_bytes, documents


def with_signing_certificate(record: Record, sign: SigningKey | None) -> Record:
    """A signed certificate's record names the certificate that signs it
    (issuer.signatory.certificate_sha256, as lab.yaml's pin does): page 1 prints it beside the
    signature, and verify then requires that very certificate of the signer (issue 40)."""
    if sign is None or record.issuer is None or \
            record.issuer.signatory.certificate_sha256 is not None:
        return record
    signatory = record.issuer.signatory.model_copy(
        update={"certificate_sha256": sign.fingerprint})
    return record.model_copy(update={"issuer": record.issuer.model_copy(
        update={"signatory": signatory})})


def ready_to_sign(sign: SigningKey | None, lab: LabProfile | None) -> SigningKey | None:
    """`sign` with its signing time set (the clock now, unless one was given) and checked
    against the lab's signatory (certgen.render.sign.check_signing_key); None stays None."""
    if sign is None or lab is None:
        return sign

    if sign.signing_time is None:
        sign = sign.at(dt.datetime.now(dt.UTC), given=False)
    signatory = lab.lab.signatory
    check_signing_key(sign, signatory=signatory.name,
                      certificate_sha256=signatory.certificate_sha256,
                      organization=lab.lab.name)
    return sign


NO_LAB_TO_SIGN_MESSAGE = ("--sign: a signed certificate is signed in the name of the "
                          "laboratory's signatory; give --lab FILE (or set $CERTGEN_LAB)")
"""The refusal of a signed build without a lab profile (tests assert it word for word)."""


def resolve_verify_base(verify_base: str | None, lab: LabProfile | None, *, draft: bool,
                        signed: bool = False) -> str:
    """The verification base a build prints, checked: refuses a build that is not a draft
    without a lab profile (a signed one too), and one pointing to a reserved example domain
    (certgen.inputs.lab)."""

    check_verify_base(verify_base)
    if lab is None and not draft:
        raise LabError([NO_LAB_MESSAGE])
    if lab is None and signed:
        raise LabError([NO_LAB_TO_SIGN_MESSAGE])
    base = verify_base or (lab.lab.verification_base if lab is not None else DEFAULT_VERIFY_BASE)
    check_issuable_base(base, lab, draft=draft, from_profile=verify_base is None)
    return base


def build_bundle(
    bundle: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    languages: Sequence[str] | None = None,
    fleet: str | os.PathLike[str] | None = None,
    draft: bool = False,
    verify_base: str | None = None,
    use_cache: bool = True,
    lab: LabProfile | None = None,
    sign: SigningKey | None = None,
    home: str | None = None,
    steps: DocumentSteps | None = None,
) -> BuildResult:
    """Build one bundle into out_dir/<certificate id>/ unless its cached output is current.

    `lab` is the issuing laboratory (certgen.inputs.lab): required unless `draft`; its verification
    base is the QR code's unless `verify_base` is given. `sign`: the lab's key
    (certgen.render.sign.signing_key); every PDF is then signed (needs `lab`). `home` is the
    site index the navigation links to (see render_certificate_html); None outside a site.
    `steps` hears of each document as it is made (DocumentSteps).
    """

    base = resolve_verify_base(verify_base, lab, draft=draft, signed=sign is not None)
    sign = ready_to_sign(sign, lab)
    loaded = load_bundle(bundle)
    with ExitStack() as stack:
        store = None
        if fleet is not None:
            # A str keeps a postgresql:// URL whole (a Path would fold its `//`).
            store = stack.enter_context(FleetStore.open(os.fspath(fleet), readonly=True))
        key = inputs_key(loaded, languages=languages, draft=draft, verify_base=base,
                         fleet=None if fleet is None else os.fspath(fleet), store=store,
                         lab=lab, sign=sign, home=home)
        out = Path(out_dir)
        if use_cache:
            cert_id = str(loaded.card.certificate.id)
            _check_folder_name(cert_id)
            folder = out / cert_id
            manifest = read_manifest(folder)
            if (manifest is not None and manifest.get("inputs_sha256") == key
                    and verify_manifest(folder, manifest)):
                # finish() below wrote "languages" as a list of str.
                languages = cast("list[str]", manifest.get("languages", []))
                return BuildResult(str(bundle), cert_id, tuple(languages),
                                   str(folder), False, str(manifest.get("record_sha256", "")))
        record = record_from_bundle(loaded, fleet=store, draft=draft, lab=lab)
    record = with_signing_certificate(record, sign)
    cert_id = record.certificate.id
    _check_folder_name(cert_id)
    langs = choose_languages(record, languages)
    record_bytes, documents = render_documents(record, langs, verify_base=base, sign=sign,
                                               home=home, steps=steps)
    record_sha = hashlib.sha256(record_bytes).hexdigest()

    with Writer(out, cert_id) as writer:
        writer.write(RECORD_NAME, record_bytes)
        for name in sorted(documents):
            writer.write(name, documents[name])
        writer.finish({
            "certificate": cert_id,
            "languages": list(langs),
            "record_sha256": record_sha,
            "inputs_sha256": key,
            "certgen_version": __version__,
            # What the registry shows of the signature (certgen.registry.signature_of): the name the
            # PDFs are signed in, and the signing certificate. Absent: the PDFs are not signed.
            **({} if sign is None or record.issuer is None else {"signature": {
                "signer": record.issuer.signatory.name,
                "certificate_subject": sign.subject,
                "certificate_sha256": sign.fingerprint,
                "signing_time": None if sign.signing_time is None else sign.signing_time.isoformat(),
                "timestamp_authority": sign.tsa_url,
            }}),
        })
    stale = [] if sign is None or sign.tsa_url is None else sorted(
        {note for name, data in documents.items() if name.endswith(".pdf")
         and (note := stale_crl_note(data)) is not None})
    return BuildResult(str(bundle), cert_id, langs, str(writer.root), True, record_sha,
                       tuple(stale))


def check_verify_base(url: str | None) -> None:
    """Refuse a verification base that is not an absolute http(s) URL (it goes into a link and a
    QR code: `javascript:` or a relative path must never be printed there)."""
    if url is None:
        return

    parts = urlsplit(url) if url.isprintable() and " " not in url else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise CertgenError(
            f"expected an http:// or https:// URL, got {shorten(url)!r}", field="--verify-base"
        )
    if len(url) > MAX_VERIFY_BASE:
        raise CertgenError(
            f"expected at most {MAX_VERIFY_BASE} characters, got {len(url)}", field="--verify-base"
        )


MAX_VERIFY_BASE = 200
"""Longest verification base URL (it is printed under the QR code)."""


def build_one(bundle: str, out_dir: str, kwargs: BuildOptions) -> BuildResult | Exception:
    """One bundle as a pool worker or a cluster task builds it: a CertgenError is returned in
    the result's place (the caller reports it with the bundle), anything else propagates."""
    try:
        return build_bundle(bundle, out_dir, **kwargs)
    except CertgenError as exc:
        # Returned, not raised: the parent reports it in the bundle's place. It pickles with its
        # class and every field (RefusalError.reasons, file, line, field); see certgen.errors.
        return exc
