"""certgen.verify.revocation: --revocations read from the lab's revocations.yaml or the registry's
index.json (refusals naming the file and the entry), and the revocation check: issuance (the id
listed with this record's SHA-256), the list's signature, its age against the signing time and
its next update, the id's revocation, its reason in the PDF's language (issue 40)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from certgen.errors import CertgenError
from certgen.registry import INDEX_FORMAT
from certgen.verify.revocation import (
    Holding,
    RevocationList,
    load_revocations,
    parse_revocation_list,
    revocation_check,
)

ROOT = Path(__file__).resolve().parent.parent
REVOKED = "SAMPLE-SILVER-0003"
SHA_A, SHA_B = "a" * 64, "b" * 64
SIGNED = dt.datetime(2026, 12, 1, 10, tzinfo=dt.UTC)
CHECKED = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)


def _row(cid: str, sha: str = SHA_A, revoked: object = None, status: str | None = None) -> object:
    return {"id": cid, "record_sha256": sha, "revoked": revoked,
            "status": status or ("valid" if revoked is None else "revoked")}


def _index(rows: list[object], as_of: str = "2026-12-02",
           next_update: str | None = "2026-12-09") -> bytes:
    document: dict[str, object] = {"format": INDEX_FORMAT, "as_of": as_of, "certificates": rows}
    if next_update is not None:
        document["next_update"] = next_update
    return json.dumps(document).encode()


def _listed(tmp_path: Path, data: bytes) -> RevocationList:
    path = tmp_path / "index.json"
    path.write_bytes(data)
    return load_revocations(path)


def _check(listed: RevocationList, cid: str = "OTHER", sha: str = SHA_A,
           at: dt.datetime = CHECKED, lang: str = "en", allow: bool = True) -> str:
    check = revocation_check(cid, listed, None, "A. Sample", None,
                             Holding(record_sha256=sha, signed_at=SIGNED, at=at, lang=lang,
                                     allow_unsigned=allow))
    return f"{check.verdict} {check.detail}"


def test_the_lab_s_revocations_yaml_is_read() -> None:
    items = parse_revocation_list((ROOT / "examples" / "revocations.yaml").read_bytes(),
                                  source="revocations.yaml")
    assert [(r.id, r.date) for r in items] == [(REVOKED, "2026-11-29")]
    assert items[0].reason.startswith("Illustrative revocation")
    assert items[0].reason_in("ru").startswith("Отзыв для примера")


@pytest.mark.parametrize(("rows", "reason"), [
    ([{"id": "A", "record_sha256": SHA_A, "status": "revoked", "revoked": {"date": "2026-01-01"}}],
     "certificates[0].revoked: expected revoked: {date, reason: {en, …}} or null"),
    ([_row("A", status="revoked")], "certificates[0]: status revoked with revoked: null"),
    ([_row("A", revoked={"date": "2026-01-01", "reason": {"en": "x"}}, status="valid")],
     "certificates[0]: status valid with revoked: a revocation"),
    ([_row("A"), _row("A")], "certificates[1]: A is listed twice"),
    ([_row("A", sha="00")], "certificates[0].record_sha256: expected the record's SHA-256"),
])
def test_an_entry_that_contradicts_itself_is_refused_by_name(rows: list[object],
                                                             reason: str) -> None:
    with pytest.raises(CertgenError) as refused:
        parse_revocation_list(_index(rows), source="index.json")
    assert str(refused.value).startswith("index.json: "), refused.value
    assert reason in str(refused.value), refused.value
    with pytest.raises(CertgenError, match=r"index\.json"):
        parse_revocation_list(b'{"format": "something else"}', source="index.json")


def test_issuance_the_id_listed_with_this_record(tmp_path: Path) -> None:
    listed = _listed(tmp_path, _index([_row("OTHER", SHA_A)]))
    assert _check(listed).startswith("pass OTHER is not in the revocation list (index.json, as "
                                     "of 2026-12-02, unsigned: accepted with "
                                     "--allow-unsigned-list)")
    assert _check(listed, "MINTED").startswith(
        "fail not issued: the registry's list does not list MINTED")
    assert _check(listed, sha=SHA_B).startswith(
        f"fail not issued: the registry lists OTHER with the record SHA-256 {SHA_A}, not this "
        f"certificate's {SHA_B}")


def test_an_unsigned_index_is_refused_unless_accepted_on_purpose(tmp_path: Path) -> None:
    listed = _listed(tmp_path, _index([_row("OTHER")]))
    assert _check(listed, allow=False).startswith(
        "fail the registry's list index.json is unsigned: its signature index.json.p7s is not "
        "beside it")


def test_a_list_older_than_the_signature_or_past_its_next_update(tmp_path: Path) -> None:
    old = _listed(tmp_path, _index([_row("OTHER")], as_of="2026-11-30"))
    assert _check(old).startswith("fail the list is as of 2026-11-30, before the certificate "
                                  "was signed (2026-12-01): an older list cannot show")
    stale = _listed(tmp_path, _index([_row("OTHER")]))
    late = revocation_check("OTHER", stale, None, "A. Sample", None,
                            Holding(SHA_A, SIGNED, dt.datetime(2026, 12, 10, tzinfo=dt.UTC),
                                    allow_unsigned=True))
    assert late.verdict == "skip" and late.short == "status list out of date"
    assert late.detail.startswith("status list out of date: its next update was due on "
                                  "2026-12-09 (checked on 2026-12-10)")
    undated = _listed(tmp_path, _index([_row("OTHER")], next_update=None))
    assert _check(undated).startswith("skip status list out of date: the list states no next "
                                      "update")


def test_a_revoked_id_fails_with_its_reason_in_the_pdf_s_language(tmp_path: Path) -> None:
    listed = _listed(tmp_path, _index([_row(REVOKED, revoked={
        "date": "2026-11-29", "reason": {"en": "withdrawn", "ru": "отозван", "pt": "revogado"}})]))
    assert _check(listed, REVOKED) == (
        f"fail revoked: {REVOKED} was revoked on 2026-11-29: withdrawn (index.json, as of "
        "2026-12-02, unsigned: accepted with --allow-unsigned-list)")
    assert "revoked on 2026-11-29: отозван (" in _check(listed, REVOKED, lang="ru")
    assert "revoked on 2026-11-29: revogado (" in _check(listed, REVOKED, lang="pt")
