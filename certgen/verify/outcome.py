"""What `certgen verify` says: one Check per check (pass, fail or skip), the Verification of a
certificate (its verdict, summary line, exit code and `--json` form) and the exit codes.

Every detail is a `Said`: a msgid (English, with `%(name)s` placeholders) and its values, kept
as a message until it is printed, so that a line comes out in the PDF's language (issue 40;
locales/<lang>/LC_MESSAGES/verify.po). Values that are data (dates, addresses, subjects,
numbers, object numbers) are inserted as they are; a value that is itself a Said (a sub-reason
from another function) is rendered in the same language. The words PASS, FAIL, SKIP, the check
names and the summary's VERIFIED / VERIFIED EXCEPT / NOT VERIFIED stay English: scripts grep
them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Union

from certgen.render.i18n import LANGUAGES, SOURCE_LANGUAGE, translations

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

Value = Union[str, int, float, "Said", "Joined", None]
"""A placeholder's value: data (printed as it is), or a message rendered in the same language."""


@dataclass(frozen=True, init=False)
class Said:
    """One message of verify: its msgid and its placeholders' values, rendered per language."""

    msgid: str
    params: tuple[tuple[str, Value], ...]

    def __init__(self, msgid: str, /, **params: Value) -> None:
        object.__setattr__(self, "msgid", msgid)
        object.__setattr__(self, "params", tuple(sorted(params.items())))

    def render(self, lang: str = SOURCE_LANGUAGE) -> str:
        """The message in `lang` (en, ru, pt; any other language prints English)."""
        if lang == SOURCE_LANGUAGE or lang not in LANGUAGES or self.msgid == _VERBATIM:
            text = self.msgid
        else:
            # The catalog binds short words with no-break spaces for documents; a terminal line
            # is wrapped by the terminal, and a copied line must grep as typed.
            text = translations(lang).gettext(self.msgid).replace("\u00a0", " ")
        if not self.params:
            return text
        values = {name: _text(value, lang) for name, value in self.params}
        return text % values

    def __str__(self) -> str:
        return self.render()


_VERBATIM = "%(text)s"
"""The msgid of a text that is data only (a test's detail, another program's words)."""


def verbatim(text: str) -> Said:
    """A Said that prints `text` as it is in every language: for data, never for prose."""
    return Said(_VERBATIM, text=text)


@dataclass(frozen=True)
class Joined:
    """Several messages printed one after the other with a separator ("; " between reasons)."""

    items: tuple[Said, ...]
    separator: str = "; "


def joined(items: list[Said] | tuple[Said, ...], separator: str = "; ") -> Said:
    """The reasons as one message (each rendered in the language of the line)."""
    return Said(_VERBATIM, text=Joined(tuple(items), separator))


def _text(value: Value, lang: str) -> str:
    if isinstance(value, Said):
        return value.render(lang)
    if isinstance(value, Joined):
        return value.separator.join(item.render(lang) for item in value.items)
    return str(value)


@dataclass(frozen=True, init=False)
class Check:
    """One check's verdict and what it found (one line of `certgen verify`)."""

    name: str
    verdict: Verdict
    said: Said
    short_said: Said | None
    """What the summary line says of a skipped check instead of "<name> not checked" (e.g.
    "status list out of date")."""

    def __init__(self, name: str, verdict: Verdict, detail: Said | str,
                 short: Said | str | None = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "said", detail if isinstance(detail, Said) else verbatim(detail))
        object.__setattr__(self, "short_said", short if short is None or isinstance(short, Said)
                           else verbatim(short))

    @property
    def detail(self) -> str:
        """What the check found, in English (the `--json` `detail`)."""
        return self.said.render()

    @property
    def short(self) -> str | None:
        """The summary's words for a skipped check, in English."""
        return None if self.short_said is None else self.short_said.render()

    def detail_in(self, lang: str) -> str:
        """What the check found, in `lang`."""
        return self.said.render(lang)

    def line(self, lang: str = SOURCE_LANGUAGE) -> str:
        """`PASS name: detail` (FAIL, SKIP); the detail in `lang`."""
        return f"{self.verdict.upper()} {self.name}: {self.said.render(lang)}"


@dataclass(frozen=True)
class Verification:
    """Every check of one certificate, in order, and the warnings; `lang` is the language its
    lines print in (the PDF's /Lang, or --lang)."""

    source: str
    certificate_id: str | None
    checks: tuple[Check, ...]
    notes: tuple[Said | str, ...] = ()
    """The warnings, as messages."""
    lang: str = SOURCE_LANGUAGE

    @property
    def warnings(self) -> tuple[str, ...]:
        """The warnings in English."""
        return tuple(self.warnings_in(SOURCE_LANGUAGE))

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

    def lines(self) -> list[str]:
        """One line per check, in the Verification's language."""
        return [c.line(self.lang) for c in self.checks]

    def warnings_in(self, lang: str | None = None) -> list[str]:
        """The warnings in `lang` (default: the Verification's)."""
        return [w.render(lang or self.lang) if isinstance(w, Said) else w
                for w in self.notes]

    def summary(self, lang: str | None = None) -> str:
        """The last line: VERIFIED, VERIFIED EXCEPT: … not checked, or NOT VERIFIED: … (the
        tokens English, the words after them in `lang`, default the Verification's)."""
        lang = lang or self.lang
        if not self.ok:
            failed = self.failed()
            said = Said("%(count)s check(s) failed: %(names)s", count=len(failed),
                        names=", ".join(failed))
            return f"NOT VERIFIED: {self.source}: {said.render(lang)}"
        if not self.complete:
            skipped = [c for c in self.checks if c.verdict == "skip"]
            if any(c.short_said for c in skipped):
                said = joined([c.short_said or Said("%(name)s not checked", name=c.name)
                               for c in skipped], ", ")
            else:
                said = Said("%(names)s not checked", names=", ".join(self.skipped()))
            return f"VERIFIED EXCEPT: {said.render(lang)}: {self.source} ({self.certificate_id})"
        return f"VERIFIED: {self.source} ({self.certificate_id})"

    def as_json(self, *, localized: bool = False) -> dict[str, JSONValue]:
        """The `--json` form: file, certificate, ok, verdict, checks, warnings (every detail in
        English); `localized` adds `lang` and each check's `detail_localized` (and
        `summary`'s and the warnings' words in that language: `summary_localized`,
        `warnings_localized`)."""
        checks: list[JSONValue] = []
        for c in self.checks:
            item: dict[str, JSONValue] = {"check": c.name, "verdict": c.verdict,
                                          "detail": c.detail}
            if localized:
                item["detail_localized"] = c.detail_in(self.lang)
            checks.append(item)
        out: dict[str, JSONValue] = {
            "file": self.source,
            "certificate": self.certificate_id,
            "ok": self.ok,
            "verdict": self.verdict,
            "checks": checks,
            "warnings": _json_list(self.warnings_in(SOURCE_LANGUAGE)),
        }
        if localized:
            out["lang"] = self.lang
            out["summary_localized"] = self.summary()
            out["warnings_localized"] = _json_list(self.warnings_in())
        return out


def _json_list(items: list[str]) -> list[JSONValue]:
    return [*items]
