"""One error tree. Every error knows where it happened and what was expected.

The CLI prints `certgen: <str(error)>` on one line and exits 1 for any CertgenError; anything
else is a bug and keeps its traceback. Messages are API: tests assert them word for word.
"""

from __future__ import annotations


class CertgenError(Exception):
    """A refusal a user can act on: `file:line: message` or `file: field: message`."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        if self.field is not None:
            where += f"{self.field}: "
        return where + self.message


class CaptureFormatError(CertgenError, ValueError):
    """A capture file that cannot be read as frame times (malformed, wrong shape, sampled)."""


class CaptureEmptyError(CaptureFormatError):
    """A capture with no usable frame left: it is rejected, never scored as 0 FPS."""


class BundleError(CertgenError, ValueError):
    """card.yaml or the bundle layout is invalid (schema, paths, zip entries)."""


class RulesError(CertgenError, ValueError):
    """A versioned SOP rules file is missing or malformed."""


class RefusalError(CertgenError):
    """The rules refuse to issue a certificate (Soft Limit, re-run audit, hash mismatch)."""

    def __init__(self, reasons: list[str], *, file: str | None = None) -> None:
        self.reasons = list(reasons)
        super().__init__("; ".join(self.reasons), file=file)


class FleetError(CertgenError, ValueError):
    """The fleet database or an import file is invalid."""


class RenderError(CertgenError):
    """A document could not be rendered (template, locale, fetcher refusal)."""


class OutputError(CertgenError, OSError):
    """The writer refused a path or could not write an output."""
