"""certgen.verify.outcome: a Verification's verdict, exit code, summary line and --json form from
its checks alone (the hub and every check module return these)."""

from __future__ import annotations

from certgen.verify.outcome import (
    EXIT_NOT_VERIFIED,
    EXIT_VERIFIED,
    EXIT_VERIFIED_EXCEPT,
    Check,
    Verification,
)


def _of(*verdicts: str) -> Verification:
    checks = tuple(Check(f"c{n}", v, f"detail {n}") for n, v in enumerate(verdicts))  # type: ignore[arg-type]
    return Verification("x.pdf", "ID-1", checks, ("a warning",))


def test_every_check_held_is_verified() -> None:
    result = _of("pass", "pass")
    assert (result.verdict, result.exit_code, result.ok, result.complete) == (
        "verified", EXIT_VERIFIED, True, True)
    assert result.summary() == "VERIFIED: x.pdf (ID-1)"


def test_a_skipped_check_is_verified_except_and_named() -> None:
    result = _of("pass", "skip", "skip")
    assert (result.verdict, result.exit_code) == ("verified-except", EXIT_VERIFIED_EXCEPT)
    assert result.summary() == "VERIFIED EXCEPT: c1, c2 not checked: x.pdf (ID-1)"


def test_one_failed_check_outranks_every_skip() -> None:
    result = _of("skip", "fail", "pass", "fail")
    assert (result.verdict, result.exit_code) == ("not-verified", EXIT_NOT_VERIFIED)
    assert result.failed() == ["c1", "c3"]
    assert result.summary() == "NOT VERIFIED: x.pdf: 2 check(s) failed: c1, c3"


def test_the_json_form_and_the_lines() -> None:
    result = _of("fail")
    assert result.checks[0].line() == "FAIL c0: detail 0"
    assert result.as_json() == {
        "file": "x.pdf", "certificate": "ID-1", "ok": False, "verdict": "not-verified",
        "checks": [{"check": "c0", "verdict": "fail", "detail": "detail 0"}],
        "warnings": ["a warning"]}
