"""One error tree. Every error knows where it happened and what was expected.

The CLI prints `certgen: <str(error)>` on one line and exits 1 for any CertgenError; anything
else is a bug and keeps its traceback (exit 70). Messages are API: tests assert them word for
word.

Every class lives here, and every instance pickles with all its fields (file, line, field and a
subclass's own, such as RefusalError.reasons): a worker process of a parallel build sends the
error itself to its parent, which reports it exactly as a one-process build would.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_SHOWN_PATH = 160
"""Longest file name a message prints whole; a longer one keeps its start and its end."""


def shorten_path(path: str) -> str:
    """A path as a message shows it: whole up to MAX_SHOWN_PATH characters, else its first 40
    and last 100 around '…' (a 4 KB path must not fill the terminal; its end names the file)."""
    if len(path) <= MAX_SHOWN_PATH:
        return path
    return path[:40] + "…" + path[-100:]


def _restore(cls: type[CertgenError], args: tuple[object, ...]) -> CertgenError:
    """An unpickled CertgenError before its fields are restored (see CertgenError.__reduce__)."""
    error = cls.__new__(cls)
    error.args = args
    return error


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
            where = shorten_path(self.file)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        if self.field is not None:
            where += f"{self.field}: "
        return where + self.message

    def __reduce__(self) -> tuple[Callable[[type[CertgenError], tuple[object, ...]], CertgenError],
                                  tuple[type[CertgenError], tuple[object, ...]],
                                  dict[str, object]]:
        """Pickle as (class, args) plus every attribute, without calling __init__ again.

        Exception's own pickling calls `cls(*self.args)`, which fails or garbles any subclass
        whose __init__ takes other arguments (RefusalError takes a list of reasons). Restoring
        the attribute dict instead works for every subclass, present and future, unchanged.
        """
        return (_restore, (type(self), self.args), dict(self.__dict__))


class CaptureFormatError(CertgenError, ValueError):
    """A capture file that cannot be read as frame times (malformed, wrong shape, sampled)."""


class CaptureEmptyError(CaptureFormatError):
    """A capture with no usable frame left: it is rejected, never scored as 0 FPS."""


class NoProcessGroupsError(CaptureFormatError):
    """A process was asked for in a capture that has no process groups (never ignored silently).

    `what` names the capture's kind ("a MangoHud log"), so a caller reading several captures
    can say which ones a process choice did not apply to.
    """

    def __init__(self, process: str, what: str, *, file: str) -> None:
        self.process = process
        self.what = what
        super().__init__(
            f"process {process!r} given, but {what} has no process groups (only PresentMon, "
            "OCAT, FrameView and CapFrameX CSV captures have them)",
            file=file,
        )


class BundleError(CertgenError, ValueError):
    """card.yaml or the bundle layout is invalid (schema, paths, zip entries)."""


class BundleErrors(BundleError):
    """Every problem of one bundle, one line each (`errors`), raised as one error."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


class BuildDateError(CertgenError, ValueError):
    """SOURCE_DATE_EPOCH is set but is not whole seconds since 1970-01-01."""


class RulesError(CertgenError, ValueError):
    """A versioned SOP rules file is missing or malformed."""


class LabError(CertgenError, ValueError):
    """A laboratory profile that is missing, unreadable or invalid, or a build it cannot issue
    (every problem, one line each, in `errors`)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


class RegistryError(CertgenError, ValueError):
    """The verification registry cannot be built: a certificate folder that is not a finished,
    issued build, or a --as-of date that is not a date."""


class RevocationsError(RegistryError):
    """revocations.yaml is unreadable or invalid (every problem, one `file:line:` line each)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


class RefusalError(CertgenError):
    """The rules refuse to issue a certificate (Soft Limit, re-run audit, hash mismatch)."""

    def __init__(self, reasons: list[str], *, file: str | None = None) -> None:
        self.reasons = list(reasons)
        super().__init__("; ".join(self.reasons), file=file)


class RecordError(CertgenError, ValueError):
    """A record.json that cannot be read (not JSON, wrong schema version, wrong shape)."""


class FleetError(CertgenError, ValueError):
    """The fleet database or an import file is invalid."""


class FleetImportError(FleetError):
    """A JSON Lines file with invalid lines; `errors` lists every one (file:line: field: …)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        shown = self.errors[:20]
        more = len(self.errors) - len(shown)
        message = "; ".join(shown) + (f"; … and {more} more" if more else "")
        super().__init__(message)


class ClusterError(CertgenError, RuntimeError):
    """The Dask cluster cannot run this build (unreachable, misconfigured workers)."""


class IntervalTooCostlyError(CertgenError):
    """A capture whose bootstrap would exceed certgen.metrics.uncertainty.MAX_BOOTSTRAP_BLOCKS
    (a one-line refusal of the interval; the figures without it are not affected)."""


class CompareError(CertgenError, ValueError):
    """A before/after input that cannot be compared (wrong number of runs, bad series file)."""


class CalibrationError(CertgenError, ValueError):
    """The fleet calibration review cannot be made (an empty fleet, a bad candidate rules file)."""


class ExplainerError(CertgenError, ValueError):
    """An explainer page cannot be built (unknown placeholder, bad front matter, bad formula)."""


class RenderError(CertgenError):
    """A document could not be rendered (template, locale, fetcher refusal)."""


class OutputError(CertgenError, OSError):
    """The writer refused a path or could not write an output."""


class InternalError(RuntimeError):
    """A bug in certgen that certgen itself notices: a template that does not render, a
    message with no translation. Deliberately not a CertgenError: the input is not at fault
    and the user cannot fix it, so the CLI keeps the traceback and exits 70 (internal error),
    never 1 (refused input). A plain RuntimeError with one argument, so it pickles from a
    worker process unchanged."""
