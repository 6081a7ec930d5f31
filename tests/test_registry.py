"""The verification registry: status on a date, revocations.yaml, index.json, the pages.

Certificate folders are written here as `certgen build` writes them (record.json, the PDFs, the
manifest last, through the Writer), from complete records (recordkit), so each case is fast.
The QR code of the real sample certificates is checked against the built site in test_site.py
and, in a browser, in test_browser.py.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from recordkit import complete_record

from certgen.builders.registry import build_registry
from certgen.errors import RegistryError, RevocationsError
from certgen.record import dump_record
from certgen.registry import RegistryEntry, Revocation, Signature, parse_revocations
from certgen.render.registry import render_registry_page
from certgen.writer import Writer

ISSUER: dict[str, Any] = {
    "name": "Frame Lab GmbH", "address": "Musterweg 5, 10115 Berlin", "accreditation": None,
    "signatory": {"name": "Dr. Jana Weber",
                  "role": {"en": "Head of laboratory", "ru": "Руководитель лаборатории",
                           "pt": None}},
    "contact": "certs@framelab.de", "verification_base": "https://verify.framelab.de/c",
    "validity_months": 24, "valid_until": "2028-11-29", "specimen": False,
    "profile_sha256": "0" * 64,
}
DAY = dt.date(2026, 11, 29)


def write_certificate(out: Path, cid: str, *, issuer: dict[str, Any] | None = None,
                      draft: bool = False, manifest_extra: dict[str, Any] | None = None) -> str:
    """out/<cid>/ as a build leaves it; returns the record's SHA-256."""
    record = complete_record({
        "certificate": {"id": cid},
        "issuer": ISSUER if issuer is None else issuer,
        "status": {"draft": draft},
    })
    data = dump_record(record)
    sha = hashlib.sha256(data).hexdigest()
    writer = Writer(out, cid)
    writer.write("record.json", data)
    for lang in ("en", "ru"):
        writer.write(f"certificate.{lang}.pdf", f"%PDF-1.7 {cid} {lang}".encode())
    writer.finish({"certificate": cid, "languages": ["en", "ru"], "record_sha256": sha,
                   **(manifest_extra or {})})
    return sha


@pytest.fixture()
def records(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    write_certificate(out, "LAB-2026-0002")
    write_certificate(out, "LAB-2026-0001")
    return out


def _index(reg: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((reg / "index.json").read_bytes())
    return data


def test_a_page_per_certificate_and_language_the_pdfs_and_the_index(records: Path,
                                                                    tmp_path: Path) -> None:
    reg = tmp_path / "reg"
    files = build_registry(records, reg, as_of=DAY)
    for cid in ("LAB-2026-0001", "LAB-2026-0002"):
        for page in ("index.html", "en/index.html", "ru/index.html", "pt/index.html"):
            assert f"{cid}/{page}" in files
        assert (reg / cid / "certificate.ru.pdf").read_bytes() == f"%PDF-1.7 {cid} ru".encode()
        sha = hashlib.sha256((records / cid / "record.json").read_bytes()).hexdigest()
        page = (reg / cid / "pt" / "index.html").read_text("utf-8")
        assert f'<code class="hash" id="record-sha256">{sha}</code>' in page
        assert '<html lang="pt">' in page and "VÁLIDO" in page
        assert 'href="../certificate.ru.pdf"' in page
    # The default page is in the certificate's first language (en here), with an x-default.
    assert '<html lang="en">' in (reg / "LAB-2026-0001" / "index.html").read_text("utf-8")
    index = _index(reg)
    assert [c["id"] for c in index["certificates"]] == ["LAB-2026-0001", "LAB-2026-0002"]
    first = index["certificates"][0]
    assert first["status"] == "valid" and first["revoked"] is None
    assert first["signed"] is False and first["signer"] is None
    assert first["page"] == "LAB-2026-0001/"
    assert first["pdf"] == {"en": "LAB-2026-0001/certificate.en.pdf",
                            "ru": "LAB-2026-0001/certificate.ru.pdf"}
    assert index["as_of"] == "2026-11-29" and index["format"] == "certgen-registry/1"
    assert (reg / "manifest.json").is_file()


def test_unsigned_unless_the_build_manifest_records_a_signature(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_certificate(out, "LAB-1")
    write_certificate(out, "LAB-2", manifest_extra={"signature": {"signer": "Frame Lab GmbH"}})
    reg = tmp_path / "reg"
    build_registry(out, reg, as_of=DAY)
    unsigned = (reg / "LAB-1" / "en" / "index.html").read_text("utf-8")
    signed = (reg / "LAB-2" / "en" / "index.html").read_text("utf-8")
    assert "Unsigned: the PDF carries no digital signature" in unsigned
    assert "The PDF is signed by Frame Lab GmbH." in signed and "Unsigned" not in signed
    for page in (signed, unsigned):
        assert "Dr. Jana Weber, Head of laboratory" in page
    rows = {c["id"]: c for c in _index(reg)["certificates"]}
    assert (rows["LAB-1"]["signed"], rows["LAB-2"]["signer"]) == (False, "Frame Lab GmbH")


def test_expired_after_the_last_valid_day_by_as_of(records: Path, tmp_path: Path) -> None:
    last, after = dt.date(2028, 11, 29), dt.date(2028, 11, 30)
    build_registry(records, tmp_path / "a", as_of=last)
    build_registry(records, tmp_path / "b", as_of=after)
    assert {c["status"] for c in _index(tmp_path / "a")["certificates"]} == {"valid"}
    assert {c["status"] for c in _index(tmp_path / "b")["certificates"]} == {"expired"}
    page = (tmp_path / "b" / "LAB-2026-0001" / "ru" / "index.html").read_text("utf-8")
    assert "СРОК ДЕЙСТВИЯ ИСТЁК" in page and "status-expired" in page
    assert "30 ноября 2028" in page  # the date the status is given for


REVOKED = b"""# withdrawn
- id: LAB-2026-0002
  date: 2027-03-01
  reason:
    en: "The card was <b>modified</b> after testing."
    ru: "\xd0\x9a\xd0\xb0\xd1\x80\xd1\x82\xd1\x83 \xd0\xb8\xd0\xb7\xd0\xbc\xd0\xb5\xd0\xbd\xd0\xb8\xd0\xbb\xd0\xb8."
"""


def test_revoked_from_its_date_on_with_reason_in_red_and_in_words(records: Path,
                                                                   tmp_path: Path) -> None:
    rev = tmp_path / "revocations.yaml"
    rev.write_bytes(REVOKED)
    build_registry(records, tmp_path / "before", as_of=dt.date(2027, 2, 28), revocations=rev)
    build_registry(records, tmp_path / "after", as_of=dt.date(2027, 3, 1), revocations=rev)
    before = {c["id"]: c for c in _index(tmp_path / "before")["certificates"]}
    after = {c["id"]: c for c in _index(tmp_path / "after")["certificates"]}
    assert before["LAB-2026-0002"]["status"] == "valid"
    assert after["LAB-2026-0001"]["status"] == "valid"
    assert after["LAB-2026-0002"]["status"] == "revoked"
    assert after["LAB-2026-0002"]["revoked"] == {
        "date": "2027-03-01",
        "reason": {"en": "The card was <b>modified</b> after testing.", "ru": "Карту изменили.",
                   "pt": None}}
    en = (tmp_path / "after" / "LAB-2026-0002" / "en" / "index.html").read_text("utf-8")
    assert '<section class="status status-revoked" id="status">' in en
    assert "<strong>REVOKED</strong>" in en and "March 1, 2027" in en
    # The reason is text, never markup.
    assert "The card was &lt;b&gt;modified&lt;/b&gt; after testing." in en and "<b>" not in en
    ru = (tmp_path / "after" / "LAB-2026-0002" / "ru" / "index.html").read_text("utf-8")
    assert "ОТОЗВАН" in ru and "Карту изменили." in ru
    pt = (tmp_path / "after" / "LAB-2026-0002" / "pt" / "index.html").read_text("utf-8")
    assert "REVOGADO" in pt and "(texto original em inglês)" in pt
    css = (tmp_path / "after" / "registry.css").read_text("utf-8")
    assert ".registry .status-revoked .verdict { color: #b00020; }" in css


def test_index_json_is_the_same_bytes_whatever_the_folder_order(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for cid in ("B-2", "A-1", "C-3"):
        write_certificate(one, cid)
    for cid in ("C-3", "A-1", "B-2"):
        write_certificate(two, cid)
    build_registry(one, tmp_path / "r1", as_of=DAY)
    build_registry(two, tmp_path / "r2", as_of=DAY)
    data = (tmp_path / "r1" / "index.json").read_bytes()
    assert data == (tmp_path / "r2" / "index.json").read_bytes()
    assert data.endswith(b"}\n")
    assert [c["id"] for c in json.loads(data)["certificates"]] == ["A-1", "B-2", "C-3"]
    for cid in ("A-1", "B-2", "C-3"):
        assert ((tmp_path / "r1" / cid / "ru" / "index.html").read_bytes()
                == (tmp_path / "r2" / cid / "ru" / "index.html").read_bytes())


@pytest.mark.parametrize(("text", "message"), [
    (b"id: X\n", "revocations.yaml:1: expected a list of revocations, each with id, date and reason"),
    (b"- id: LAB-1\n  date: 2027-02-30\n  reason: x\n",
     "revocations.yaml:2: [0].date: not a calendar date: '2027-02-30' (day is out of range for month)"),
    (b"- id: LAB-1\n  date: '1 May'\n  reason: x\n",
     "revocations.yaml:2: [0].date: expected a date YYYY-MM-DD, got '1 May'"),
    (b"- id: LAB-1\n  date: 2027-01-01\n  reason: x\n  by: me\n",
     "revocations.yaml:4: [0].by: unknown key (expected id, date, reason)"),
    (b"- id: LAB-1\n  date: 2027-01-01\n", "revocations.yaml:1: [0].reason: required key missing"),
    (b"- id: LAB-1\n  date: 2027-01-01\n  reason: 5\n",
     "revocations.yaml:3: [0].reason: expected a text or en/ru/pt texts, got 5"),
    (b"- id: LAB-1\n  date: 2027-01-01\n  reason: {en: x, de: y}\n",
     "revocations.yaml:3: [0].reason.de: unknown key"),
    (b"- id: LAB-1\n  date: 2027-01-01\n  date: 2027-01-02\n  reason: x\n",
     "revocations.yaml:3: duplicate key 'date' (first at line 2)"),
    (b"- id: LAB-1\n  date: 2027-01-01\n  reason: x\n- id: LAB-1\n  date: 2027-01-02\n  reason: y\n",
     "revocations.yaml:4: [1].id: 'LAB-1' is revoked twice (first at line 1)"),
])
def test_revocations_yaml_errors_name_the_line(text: bytes, message: str) -> None:
    with pytest.raises(RevocationsError) as info:
        parse_revocations(text)
    assert str(info.value) == message


def test_every_problem_of_the_file_is_reported_at_once() -> None:
    text = b"- id: A\n  date: x\n  reason: r\n- id: ''\n  date: 2027-01-01\n  reason: r\n"
    with pytest.raises(RevocationsError) as info:
        parse_revocations(text)
    assert info.value.errors == (
        "revocations.yaml:2: [0].date: expected a date YYYY-MM-DD, got 'x'",
        "revocations.yaml:4: [1].id: expected a text, got an empty one",
    )


def test_an_empty_file_revokes_nothing_and_quoted_dates_are_dates() -> None:
    assert parse_revocations(b"# nothing withdrawn\n").items == ()
    got = parse_revocations(b'- id: A\n  date: "2027-01-01"\n  reason: r\n')
    assert got.items[0].date == dt.date(2027, 1, 1) and got.lines == (1,)


def test_a_revocation_must_name_an_issued_certificate_after_its_issue(records: Path,
                                                                      tmp_path: Path) -> None:
    rev = tmp_path / "revocations.yaml"
    rev.write_bytes(b"- id: LAB-2026-0001\n  date: 2027-01-01\n  reason: r\n"
                    b"- id: LAB-2026-9999\n  date: 2027-01-01\n  reason: r\n")
    with pytest.raises(RevocationsError) as info:
        build_registry(records, tmp_path / "reg", as_of=DAY, revocations=rev)
    assert str(info.value) == f"{rev}:4: LAB-2026-9999: no such certificate among the records"
    rev.write_bytes(b"- id: LAB-2026-0001\n  date: 2026-11-28\n  reason: r\n")
    with pytest.raises(RevocationsError) as info:
        build_registry(records, tmp_path / "reg", as_of=DAY, revocations=rev)
    assert str(info.value) == (f"{rev}:1: LAB-2026-0001: revoked on 2026-11-28, before its issue "
                               "date 2026-11-29")


def test_drafts_interrupted_or_edited_builds_and_early_dates_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_certificate(out, "DRAFT-1", draft=True)
    with pytest.raises(RegistryError, match="is a draft or was refused, not an issued certificate"):
        build_registry(out, tmp_path / "reg", as_of=DAY)
    (out / "DRAFT-1" / "manifest.json").unlink()
    with pytest.raises(RegistryError) as info:
        build_registry(out, tmp_path / "reg", as_of=DAY)
    assert str(info.value) == (f"{out / 'DRAFT-1' / 'record.json'}: no manifest.json beside it: "
                               "an interrupted build; build the certificate again")
    other = tmp_path / "other"
    write_certificate(other, "LAB-1")
    (other / "LAB-1" / "certificate.en.pdf").write_bytes(b"%PDF-1.7 edited")
    with pytest.raises(RegistryError, match=r"differs from its manifest\.json"):
        build_registry(other, tmp_path / "reg", as_of=DAY)
    third = tmp_path / "third"
    write_certificate(third, "LAB-1")
    with pytest.raises(RegistryError) as info:
        build_registry(third, tmp_path / "reg", as_of=dt.date(2026, 11, 28))
    assert str(info.value) == (f"{third / 'LAB-1' / 'record.json'}: certificate 'LAB-1' is issued "
                               "on 2026-11-29, after the registry's date 2026-11-28 (--as-of)")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RegistryError, match="no certificate folder"):
        build_registry(tmp_path / "empty", tmp_path / "x", as_of=DAY)


def test_cli_registry_needs_a_date_and_never_reads_the_clock(
        records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from bundlekit import run_cli

    from certgen.commands.registry import NO_DATE_MESSAGE

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    reg = tmp_path / "reg"
    code, _, err = run_cli(["registry", str(records), "--out", str(reg)], capsys)
    assert (code, err.strip()) == (1, f"certgen: {NO_DATE_MESSAGE}")
    code, _, err = run_cli(["registry", str(records), "--out", str(reg),
                            "--as-of", "2026-02-30"], capsys)
    assert (code, err.strip()) == (1, "certgen: --as-of: expected a date YYYY-MM-DD, "
                                      "got '2026-02-30'")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1985651200")  # 2032-12-03: long expired
    code, out, err = run_cli(["registry", str(records), "--out", str(reg)], capsys)
    assert code == 0, err
    assert "2 certificates" in out and "as of 2032-12-03" in out
    assert {c["status"] for c in _index(reg)["certificates"]} == {"expired"}


# --------------------------------------------------------------------------- snapshots


def _entry(status: str, *, signed: bool = False) -> RegistryEntry:
    revocation = Revocation(id="LAB-2026-0007", date=dt.date(2027, 3, 1),
                            reason="Card modified after testing <script>alert(1)</script>")
    return RegistryEntry(
        id="LAB-2026-0007", record_sha256="ab" * 32, grade="GOLD", vendor="ASUS",
        model="TUF Gaming RTX 4070 <i>OC</i>", issued=DAY, valid_until=dt.date(2028, 11, 29),
        issuer="Frame Lab GmbH", signatory="Dr. Jana Weber", signatory_role="Head of laboratory",
        signature=Signature("Frame Lab GmbH") if signed else None, specimen=False,
        languages=("en", "ru", "pt"), status=status,  # type: ignore[arg-type]
        revocation=revocation if status == "revoked" else None,
        serial="SN-<b>4070</b>-0042", driver="566.14",
        tiers=(("1920x1080", 96.02), ("2560x1440", None)))


@pytest.mark.parametrize(("status", "lang"), [("valid", "en"), ("revoked", "ru"),
                                              ("expired", "pt"), ("revoked", "en")])
def test_registry_page_snapshot(status: str, lang: str, snapshot: Any) -> None:
    html = render_registry_page(_entry(status, signed=status == "valid"), lang,
                                at=f"LAB-2026-0007/{lang}/index.html",
                                as_of=dt.date(2029, 1, 15) if status == "expired" else DAY,
                                home=f"../{lang}/index.html")
    assert "<script>alert" not in html and "<i>OC</i>" not in html and "<b>4070" not in html
    assert html == snapshot


def test_the_page_says_what_it_can_know_and_names_the_lab() -> None:
    """It never claims to describe the PDF in hand: it gives what to compare by eye (hash,
    serial, driver, tier scores, grade); the lab, not certgen, is named as its publisher."""
    html = render_registry_page(_entry("valid", signed=True), "en",
                                at="LAB-2026-0007/en/index.html", as_of=DAY)
    assert "describes the certificate you hold" not in html
    assert ("The address you opened carries the SHA-256 of certificate LAB-2026-0007, issued on "
            "November 29, 2026. That alone does not prove your PDF is this certificate") in html
    assert "<dd>SN-&lt;b&gt;4070&lt;/b&gt;-0042</dd>" in html and "<dd>566.14</dd>" in html
    assert "<dd>1920x1080: 96.02 · 2560x1440: —</dd>" in html
    assert "<title>Certificate LAB-2026-0007: verification · Frame Lab GmbH</title>" in html
    assert "Published by Frame Lab GmbH." in html and "· certgen</title>" not in html
    assert '<a href="../../index.json">index.json</a>' in html
    assert "certgen verify certificate.pdf --trust ca.pem --revocations index.json" in html


def test_a_timestamped_signed_page_gives_the_whole_command_and_the_signer_s_sha256() -> None:
    """Issue 40: the command a customer copies is complete for the certificate (--tsa-trust for
    a timestamped one, --crl where the registry publishes the CA's CRL), and the page prints the
    signing certificate's SHA-256 to compare."""
    import dataclasses

    entry = dataclasses.replace(_entry("valid"), signature=Signature(
        "Dr. Jana Weber", certificate_sha256="cd" * 32, timestamped=True))
    html = render_registry_page(entry, "ru", at="LAB-2026-0007/ru/index.html", as_of=DAY,
                                crl=True)
    assert ("certgen verify certificate.pdf --trust ca.pem --tsa-trust tsa-root.pem "
            "--revocations index.json --crl ca.crl") in html
    assert "<dt>SHA-256 сертификата подписи</dt>" in html and "cd" * 32 in html


def test_the_registry_publishes_the_ca_its_crl_and_a_next_update(records: Path,
                                                                  tmp_path: Path) -> None:
    reg = tmp_path / "reg"
    files = build_registry(records, reg, as_of=DAY, ca=b"CA PEM", crl=b"CRL DER",
                           next_update=dt.date(2026, 12, 31))
    assert "ca.pem" in files and "ca.crl" in files
    assert (reg / "ca.pem").read_bytes() == b"CA PEM" and (reg / "ca.crl").read_bytes() == b"CRL DER"
    assert _index(reg)["next_update"] == "2026-12-31"
    assert "--crl ca.crl" in (reg / "LAB-2026-0001" / "en" / "index.html").read_text("utf-8")
    default = tmp_path / "default"
    build_registry(records, default, as_of=DAY)
    assert _index(default)["next_update"] == "2026-12-06"  # a week after --as-of
    from certgen.registry import PublishedWheel

    wheel = PublishedWheel("certgen-0.2.0-py3-none-any.whl", b"wheel", "ef" * 32)
    build_registry(records, tmp_path / "soft", as_of=DAY, software=wheel)
    assert _index(tmp_path / "soft")["software"] == {
        "wheel": "software/certgen-0.2.0-py3-none-any.whl", "sha256": "ef" * 32}
    with pytest.raises(RegistryError, match="before the registry's date"):
        build_registry(records, tmp_path / "bad", as_of=DAY, next_update=dt.date(2026, 11, 1))
