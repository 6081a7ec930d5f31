"""Helpers every reader shares: reading a file's start, text checks, numbers with exact errors.

Error messages here are API (tests assert them word for word); they always name the file as the
user named it, and the line where there is one.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import pathlib
from collections.abc import Iterator

from certgen.errors import CaptureFormatError
from certgen.model.capture import RECORDED_MAX
from certgen.support.untrusted import open_regular, shorten

HEAD_BYTES = 65536
"""How much of a file detection looks at (the first line of every format fits in it)."""

UTF8_BOM = b"\xef\xbb\xbf"

MAX_CAPTURE_BYTES = 1 << 30
"""Largest capture file read (1 GiB, as for a zip entry: about 20 million PresentMon rows)."""

MAX_CAPTURE_FRAMES = 20_000_000
"""Most frames one capture may hold (46 hours at 120 FPS; what 1 GiB of PresentMon holds). The
byte limit alone would let a terse format (one short number a line) hold 25 times more, and
every frame costs the metrics a few arrays of 8 bytes."""


def read_capture_bytes(path: pathlib.Path, name: str) -> bytes:
    """A whole capture file's bytes, read with one open (its SHA-256 and every reader use them).

    Refused here, with the file named as the user named it: a missing file, a directory, a
    FIFO or device (before anything is read from it: it could block or never end), a name
    too long, a symlink loop and an unreadable file; `check_head` then refuses what cannot be
    a text capture.
    """
    fd = _open_capture(path, name)
    try:
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_CAPTURE_BYTES:
                raise CaptureFormatError(
                    f"{size} bytes, more than the limit of {MAX_CAPTURE_BYTES} for a capture",
                    file=name,
                )
            return handle.read()
    except OSError as exc:
        raise CaptureFormatError(f"cannot read the file ({exc.strerror})", file=name) from None


def _open_capture(path: pathlib.Path, name: str) -> int:
    """A descriptor of the regular file at `path`, or the refusal naming `name` (a missing file,
    a directory, a FIFO or device, a name too long, a symlink loop, an unreadable file)."""
    try:
        return open_regular(path)
    except IsADirectoryError:
        raise CaptureFormatError("is a directory, expected a capture file", file=name) from None
    except FileNotFoundError:
        raise CaptureFormatError("no such file", file=name) from None
    except ValueError as exc:
        raise CaptureFormatError(f"is {exc}, expected a capture file", file=name) from None
    except OSError as exc:
        raise CaptureFormatError(f"cannot read the file ({exc.strerror})", file=name) from None


Data = bytes | mmap.mmap
"""A capture's bytes: in memory, or a read-only map of its file (read_capture_file), which the
PresentMon-family reader takes a block at a time and releases as it goes."""


@contextlib.contextmanager
def mapped_capture(path: pathlib.Path, name: str) -> Iterator[Data]:
    """A capture file mapped read-only (b"" when empty), refused as read_capture_bytes refuses.

    A map rather than one read: a reader that walks the file in blocks (the PresentMon family)
    keeps only the block it is at, so a 10M-frame capture never lands in memory whole.
    """
    fd = _open_capture(path, name)
    try:
        try:
            size = os.fstat(fd).st_size
            if size > MAX_CAPTURE_BYTES:
                raise CaptureFormatError(
                    f"{size} bytes, more than the limit of {MAX_CAPTURE_BYTES} for a capture",
                    file=name,
                )
            mapped: Data = b""
            if size:
                mapped = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise CaptureFormatError(
                f"cannot read the file ({exc.strerror})", file=name
            ) from None
        if isinstance(mapped, mmap.mmap):
            with mapped:
                yield mapped
        else:
            yield mapped
    finally:
        os.close(fd)


def check_head(data: Data, name: str) -> bytes:
    """The first HEAD_BYTES of a capture, refusing what cannot be a text capture.

    Refused: an empty file, UTF-16/32 text, binary data (a NUL byte) and bytes that are not
    UTF-8. Only the head is checked here (a reader decodes or scans the rest itself, with the
    exact line of any problem).
    """
    head = data[:HEAD_BYTES]
    check_text(head, name, complete=len(data) < HEAD_BYTES)
    return head


def check_text(data: bytes, name: str, *, complete: bool = True) -> None:
    """Refuse data that is not UTF-8 text (empty, UTF-16/32, binary, invalid UTF-8)."""
    if not data.strip(b" \t\r\n" + UTF8_BOM):
        raise CaptureFormatError("empty file, expected a capture", file=name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(data) >= 4 and (data[1::2][:64].count(0) > 16 or data[0::2][:64].count(0) > 16)
    ):
        raise CaptureFormatError("UTF-16 text; save the capture as UTF-8", file=name)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise CaptureFormatError(
            f"binary data, not a text capture (NUL byte at offset {nul})", file=name
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the end of a partial read is not an error.
        if complete or exc.start < len(data) - 3:
            raise CaptureFormatError(
                f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", file=name
            ) from None


def decode(data: bytes, name: str) -> str:
    """Whole-file bytes to text: UTF-8, BOM stripped (checked like the head)."""
    check_text(data, name)
    text = data.decode("utf-8")
    return text.removeprefix("\ufeff")


def first_line(head: bytes) -> tuple[int, str]:
    """(1-based line number, text) of the first non-empty line, BOM stripped."""
    head = head.removeprefix(UTF8_BOM)
    text = head.decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            return number, line.strip()
    return 1, ""


def parse_number(token: str, *, name: str, line: int, field: str) -> float:
    """A finite decimal number, or a CaptureFormatError naming file, line and column."""
    text = token.strip()
    try:
        if "_" in text:
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise CaptureFormatError(
            f"expected a number, got {shorten(token)!r}", file=name, line=line, field=field
        ) from None
    if not math.isfinite(value):
        raise CaptureFormatError(
            f"expected a finite number, got {shorten(token)!r}", file=name, line=line, field=field
        )
    return value




NOT_HELD = math.inf
"""What a diagnostic column's cell reads as when it is a number the column cannot hold (`nan`,
`inf`): kept beside the frame, so certgen.captures.detect sets the column aside as not measured
(with the count of frames and why) instead of refusing the capture (issue 39)."""


def diagnostic_number(token: str, *, name: str, line: int, field: str) -> float:
    """A diagnostic column's cell (never the interval): `NA` is NaN (no value), a finite number
    is itself, a number the column cannot hold (`nan`, `inf`) is NOT_HELD; any other text is
    refused as parse_number refuses it (the file is malformed, not the measurement)."""
    text = token.strip()
    if text == "NA":
        return math.nan
    try:
        return parse_number(token, name=name, line=line, field=field)
    except CaptureFormatError:
        try:
            float(text)
        except ValueError:
            raise CaptureFormatError(
                f"expected a number, got {shorten(token)!r}", file=name, line=line, field=field
            ) from None
        return NOT_HELD


def recorded_text(value: object) -> str | None:
    """A value a capture records about the system (a GPU name, a driver, a date) as `Recorded`
    holds it: the text trimmed, None when it is empty or not text, and a text longer than
    RECORDED_MAX characters cut to that many, ending in `…`. Nothing else is changed: invisible
    characters are kept (escaped only where the value is shown), and nothing is normalised."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    return shorten(text, RECORDED_MAX) if text else None
