"""certgen.verify.revisions: the strict reader of the revisions after the signed one (issue 40).

The PDF syntax it reads (and what it refuses), then every variant class of tests/forgekit40.py
appended to the plainly signed GOLD certificate and read from the end of its signature: each is
refused naming the revision and the object. (tests/test_sign_tsa.py runs the same classes through
`certgen verify` on a genuine B-LTA certificate, which still verifies.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forgekit40 import restated_numbers, variants

from certgen.verify.revisions import (
    Lexer,
    Name,
    Ref,
    Refused,
    Stream,
    lta_revisions_problem,
    read_object,
)


def test_the_lexer_reads_what_pyhanko_writes() -> None:
    source = (b"<< /Type /Catalog /Kids [ 1 0 R 2 0 R ] /T (a\\(b\\)\\101) /H <6869> "
              b"/N -1.5 /B true /Z null /S /A#20B >>")
    value = Lexer(source, 0).value()
    assert value == {Name("Type"): Name("Catalog"), Name("Kids"): [Ref(1, 0), Ref(2, 0)],
                     Name("T"): b"a(b)A", Name("H"): b"hi", Name("N"): -1.5, Name("B"): True,
                     Name("Z"): None, Name("S"): Name("A B")}
    number, stream, end = read_object(b"7 0 obj\n<< /Length 3 >>\nstream\nabc\nendstream\nendobj",
                                      0)
    assert number == 7 and stream == Stream({Name("Length"): 3}, b"abc") and end == 51


@pytest.mark.parametrize(("source", "reason"), [
    (b"<< /A 1 /A 2 >>", "the key /A twice"),
    (b"<< /A 1 % hidden\n>>", "a comment"),
    (b"[" * 40 + b"]" * 40, "nested more than"),
    (b"<< 1 2 >>", "not a name"),
    (b"(open", "unterminated string"),
])
def test_the_lexer_refuses_what_certgen_never_writes(source: bytes, reason: str) -> None:
    with pytest.raises(Refused, match=reason):
        Lexer(source, 0).value()


def test_a_stream_length_must_be_direct() -> None:
    with pytest.raises(Refused, match="not a direct length"):
        read_object(b"1 0 obj\n<< /Length 9 0 R >>\nstream\nabc\nendstream\nendobj", 0)


def test_nothing_after_the_signature_is_nothing_to_refuse(signed_gold: Path) -> None:
    pdf = (signed_gold / "certificate.en.pdf").read_bytes()
    assert lta_revisions_problem(pdf, len(pdf)) is None


@pytest.fixture(scope="module")
def forged(signed_gold: Path) -> tuple[int, dict[str, bytes], int]:
    """The signed length, the variants, and the first object the link variants restate (a link
    annotation, whose number follows the render's object count)."""
    pdf = (signed_gold / "certificate.en.pdf").read_bytes()
    return len(pdf), variants(pdf), restated_numbers(pdf)[0]


@pytest.mark.parametrize(("name", "reason"), [
    ("dup-xref-table", "its cross-reference section lists object 6 twice"),
    ("dup-xref-table-origfirst", "its cross-reference section lists object 6 twice"),
    ("dup-xref-hybrid", "is not followed by `startxref`"),
    ("dup-xref-stream", "its cross-reference section lists object 6 twice"),
    ("copied-eof-table", "without a cross-reference section before it"),
    ("copied-eof-stream", "without a cross-reference section before it"),
    ("links-plain", "(/Type /Annot) of an earlier revision is redefined"),
    ("links-objstm", "is in an object stream"),
    ("links-dup", "object {link} is defined twice"),
    ("links-dup-hybrid", "is in an object stream"),
    ("links-dup-objstm", "is in an object stream"),
    ("links-copied-eof", "without a cross-reference section before it"),
    ("links-copied-eof-objstm", "without a cross-reference section before it"),
    ("noop-revision", "adds neither validation data nor a document timestamp"),
    ("orphan-objects", "(/Type /Action) is neither validation data nor a document timestamp"),
    ("catalog-version", "object 2 (the catalog) gains /Version"),
])
def test_each_forged_revision_is_named(forged: tuple[int, dict[str, bytes], int], name: str,
                                       reason: str) -> None:
    signed_end, files, link = forged
    reason = reason.format(link=link)
    problem = lta_revisions_problem(files[name], signed_end)
    assert problem is not None and problem.startswith("revision 1 after the signed one ("), problem
    assert reason in problem, problem
