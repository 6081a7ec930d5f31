"""What `certgen verify` says: one Check per check (pass, fail or skip), the Verification of a
certificate (its verdict, summary line, exit code and `--json` form) and the exit codes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:

    from certgen.support.jsonload import JSONValue

Verdict = Literal["pass", "fail", "skip"]

EXIT_VERIFIED = 0
"""Every check ran and held."""
EXIT_NOT_VERIFIED = 1
"""A check failed (or an input was refused)."""
EXIT_VERIFIED_EXCEPT = 3
"""No check failed, but one did not run (it is named: "VERIFIED EXCEPT: revocation not
checked"); 2 stays click's bad usage."""


@dataclass(frozen=True)
class Check:
    """One check's verdict and what it found (one line of `certgen verify`)."""

    name: str
    verdict: Verdict
    detail: str
    short: str | None = None
    """What the summary line says of a skipped check instead of "<name> not checked" (e.g.
    "status list out of date")."""

    def line(self) -> str:
        """`PASS name: detail` (FAIL, SKIP)."""
        return f"{self.verdict.upper()} {self.name}: {self.detail}"


@dataclass(frozen=True)
class Verification:
    """Every check of one certificate, in order, and the warnings."""

    source: str
    certificate_id: str | None
    checks: tuple[Check, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No check failed (a skipped one leaves `complete` false)."""
        return all(c.verdict != "fail" for c in self.checks)

    @property
    def complete(self) -> bool:
        """Every check ran (none skipped)."""
        return all(c.verdict != "skip" for c in self.checks)

    @property
    def verdict(self) -> Literal["verified", "verified-except", "not-verified"]:
        """verified: every check ran and held; verified-except: none failed, some skipped."""
        if not self.ok:
            return "not-verified"
        return "verified" if self.complete else "verified-except"

    @property
    def exit_code(self) -> int:
        """0 verified, 3 verified except the skipped checks, 1 not verified."""
        return {"verified": EXIT_VERIFIED, "verified-except": EXIT_VERIFIED_EXCEPT,
                "not-verified": EXIT_NOT_VERIFIED}[self.verdict]

    def failed(self) -> list[str]:
        """The names of the failed checks, in order."""
        return [c.name for c in self.checks if c.verdict == "fail"]

    def skipped(self) -> list[str]:
        """The names of the checks that did not run, in order."""
        return [c.name for c in self.checks if c.verdict == "skip"]

    def summary(self) -> str:
        """The last line: VERIFIED, VERIFIED EXCEPT: … not checked, or NOT VERIFIED: …."""
        if not self.ok:
            failed = self.failed()
            return (f"NOT VERIFIED: {self.source}: {len(failed)} check(s) failed: "
                    f"{', '.join(failed)}")
        if not self.complete:
            skipped = [c for c in self.checks if c.verdict == "skip"]
            if any(c.short for c in skipped):
                said = ", ".join(c.short or f"{c.name} not checked" for c in skipped)
                return f"VERIFIED EXCEPT: {said}: {self.source} ({self.certificate_id})"
            return (f"VERIFIED EXCEPT: {', '.join(self.skipped())} not checked: {self.source} "
                    f"({self.certificate_id})")
        return f"VERIFIED: {self.source} ({self.certificate_id})"

    def as_json(self) -> dict[str, JSONValue]:
        """The `--json` form: file, certificate, ok, verdict, checks, warnings."""
        return {
            "file": self.source,
            "certificate": self.certificate_id,
            "ok": self.ok,
            "verdict": self.verdict,
            "checks": [{"check": c.name, "verdict": c.verdict, "detail": c.detail}
                       for c in self.checks],
            "warnings": list(self.warnings),
        }
