"""Untrusted input, handled safely wherever it comes in: a file is opened only when it is a
regular file (never a FIFO, a device or a socket), a name read from a file is shown with its
invisible characters escaped, and a long text is cut before it goes into a message. Readers,
the bundle and lab loaders, the fleet and verify all use these; they know nothing else.
"""

from __future__ import annotations

import errno
import os
import pathlib
import stat
import unicodedata


def open_regular(path: pathlib.Path) -> int:
    """An O_RDONLY descriptor of a regular file, refusing FIFOs, devices and sockets before any
    read (opened non-blocking, so a FIFO cannot hang the open; then checked with fstat).

    Raises OSError as os.open does, and IsADirectoryError / a ValueError naming the kind for
    what is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(mode):
            raise ValueError(special_kind(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


class UnreadableInput(ValueError):
    """Why an input file cannot be read, worded to follow its name in a message ("is a FIFO
    (named pipe), expected a laboratory profile"); each caller raises it as its own error."""


def read_limited(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`what` names the kind of file in
    refusals). A FIFO, device or socket is refused before any read (it could block, or never
    end: /dev/zero); the size is checked before reading, and the read stops one byte past the
    limit (a file that grows, or lies about its size in /proc, cannot exhaust memory).

    Raises UnreadableInput with the reason, never OSError or MemoryError.
    """
    try:
        fd = open_regular(pathlib.Path(path))
    except IsADirectoryError:
        raise UnreadableInput(f"is a directory, expected {what}") from None
    except FileNotFoundError:
        raise UnreadableInput("no such file") from None
    except ValueError as exc:
        raise UnreadableInput(f"is {exc}, expected {what}") from None
    except OSError as exc:
        raise UnreadableInput(f"cannot read the file ({_reason(exc)})") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise UnreadableInput(f"{size} bytes, more than the limit of {limit} for {what}")
            data = handle.read(limit + 1)
    except OSError as exc:
        raise UnreadableInput(f"cannot read the file ({_reason(exc)})") from None
    if len(data) > limit:
        raise UnreadableInput(f"more than the limit of {limit} bytes for {what}")
    return data


def _reason(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def special_kind(mode: int) -> str:
    """What a non-regular file is, as a refusal names it."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def shorten(text: str, limit: int = 60) -> str:
    """Text cut to `limit` characters for a message ('…' marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape_invisible(text: str) -> str:
    """Text as a message or document shows a name read from a capture: bidi controls, control
    and zero-width (format) characters written as `\\u202e`, so "EVIL\\u202egnp.exe" cannot
    display as "EVILexe.png". Names are shown escaped, never refused: the capture is still the
    lab's own measurement, and `process` in card.yaml matches the raw name."""
    out = []
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)
