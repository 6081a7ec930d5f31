"""certgen.verify.revocation: --revocations read from the lab's revocations.yaml or the registry's
index.json, refusals naming the file and the entry, and the revocation check's verdict on an id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from certgen.errors import CertgenError
from certgen.registry import INDEX_FORMAT
from certgen.verify.revocation import (
    RevocationList,
    load_revocations,
    parse_revocation_list,
    revocation_check,
)

ROOT = Path(__file__).resolve().parent.parent
REVOKED = "SAMPLE-SILVER-0003"


def _index(rows: list[object]) -> bytes:
    return json.dumps({"format": INDEX_FORMAT, "as_of": "2026-12-01",
                       "certificates": rows}).encode()


def test_the_lab_s_revocations_yaml_is_read() -> None:
    items = parse_revocation_list((ROOT / "examples" / "revocations.yaml").read_bytes(),
                                  source="revocations.yaml")
    assert [(r.id, r.date) for r in items] == [(REVOKED, "2026-11-29")]
    assert items[0].reason.startswith("Illustrative revocation")


def test_an_index_entry_that_is_not_a_revocation_is_refused_by_name() -> None:
    with pytest.raises(CertgenError) as refused:
        parse_revocation_list(_index([{"id": "A", "revoked": {"date": "2026-01-01"}}]),
                              source="index.json")
    assert "certificates[0].revoked" in str(refused.value)
    with pytest.raises(CertgenError, match=r"index\.json"):
        parse_revocation_list(b'{"format": "something else"}', source="index.json")


def test_a_revoked_id_fails_and_another_passes_naming_the_unsigned_list(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    path.write_bytes(_index([{"id": REVOKED, "revoked": {"date": "2026-11-29",
                                                         "reason": {"en": "withdrawn"}}},
                             {"id": "OTHER", "revoked": None}]))
    listed = load_revocations(path)
    assert isinstance(listed, RevocationList) and listed.signature is None
    assert listed.as_of == "2026-12-01"
    hit = revocation_check(REVOKED, listed, None, "A. Sample", None)
    assert (hit.verdict, hit.detail) == (
        "fail", f"revoked: {REVOKED} was revoked on 2026-11-29: withdrawn "
        "(index.json, as of 2026-12-01, unsigned)")
    miss = revocation_check("OTHER", listed, None, "A. Sample", None)
    assert miss.verdict == "pass" and "unsigned" in miss.detail
