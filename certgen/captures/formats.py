"""The capture formats certgen reads: one table, and everything about a format comes from it.

Each `Format` is one row: its id (what `--format` and card.yaml `format:` accept, and what a
Capture reports), the tool that writes it (the record's `capture.tool`), whether its rows carry
process groups (then `--process` applies), how a refusal names it, how its first line is
recognised (detection, docs/spec/captures.md) and which reader reads it. Every reader returns
the same `Capture` record. Adding a format is one row here and one reader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from certgen.captures.benchcsv import read_bench_csv
from certgen.captures.capframex import read_capframex_json
from certgen.captures.common import Data
from certgen.captures.framestats import read_frame_stats
from certgen.captures.mangohud import read_mangohud
from certgen.captures.model import Capture
from certgen.captures.presentmon import read_presentmon, sniff_flavour


@dataclass(frozen=True)
class ReadRequest:
    """What a reader is asked, beside the capture's bytes."""

    name: str
    """How messages and results name the file."""
    head: bytes
    """The file's first bytes, as detection saw them (common.check_head)."""
    forced: bool
    """The format was named (`--format`, card.yaml `format:`), not detected: it is the format
    reported, and the tool whose quirks apply."""
    process: str | None
    """The application (or group) to read: only ever given to a format with process groups."""


Reader = Callable[[Data, ReadRequest], list[Capture]]
"""A format's reader: the capture's bytes (in memory or mapped) as its runs (most formats: one)."""


@dataclass(frozen=True)
class Format:
    """One capture format certgen reads (a row of FORMAT_TABLE)."""

    id: str
    """The format id: `--format` / card.yaml `format:` value, and `Capture.format`."""
    tool: str
    """The capture tool that writes it, as the record's `capture.tool` names it."""
    listed: str
    """How the refusal of a file no format recognises lists this one ("expected a PresentMon,
    OCAT, … file"); formats listed alike are listed once."""
    grouped: bool
    """Rows carry (Application, ProcessID, SwapChainAddress): `process` picks a group."""
    noun: str | None
    """How a refusal of `process` names a capture of this format (formats without process
    groups only; None for a grouped one)."""
    sniff: Callable[[str], bool]
    """Whether a file whose first non-empty line (after a BOM) is this one is of this format."""
    sniff_order: int
    """Detection tries the formats by this number, lowest first (table order among equals): a
    first line that is a special case of another format's is tried before it."""
    read: Reader

    def __post_init__(self) -> None:
        if self.grouped == (self.noun is not None):
            raise ValueError(f"format {self.id!r}: a noun is given exactly when it has no "
                             "process groups")


def _whole(data: Data) -> bytes:
    """The capture's bytes in memory (every reader but the PresentMon family's takes it whole)."""
    return data if isinstance(data, bytes) else data[:]


def _presentmon(flavour: str) -> Reader:
    """The PresentMon-family reader for a PresentMon, OCAT or FrameView file: a forced format is
    the one reported (and the tool whose quirks apply), a detected one the header's."""
    def read(data: Data, request: ReadRequest) -> list[Capture]:
        return [read_presentmon(data, request.name, head=request.head, process=request.process,
                                flavour=flavour if request.forced else None)]
    return read


def _flavour_is(flavour: str) -> Callable[[str], bool]:
    def sniff(line: str) -> bool:
        return sniff_flavour(line) == flavour
    return sniff


def _read_capframex_csv(data: Data, request: ReadRequest) -> list[Capture]:
    return [read_presentmon(data, request.name, head=request.head, capframex=True,
                            process=request.process)]


def _read_capframex_json(data: Data, request: ReadRequest) -> list[Capture]:
    return read_capframex_json(_whole(data), request.name)


def _read_mangohud(data: Data, request: ReadRequest) -> list[Capture]:
    return [read_mangohud(_whole(data), request.name)]


def _read_frame_stats(data: Data, request: ReadRequest) -> list[Capture]:
    return [read_frame_stats(_whole(data), request.name)]


def _read_bench_csv(data: Data, request: ReadRequest) -> list[Capture]:
    return read_bench_csv(_whole(data), request.name)


def _starts(prefix: str) -> Callable[[str], bool]:
    def sniff(line: str) -> bool:
        return line.startswith(prefix)
    return sniff


def _is_mangohud(line: str) -> bool:
    """The system line, the frame table's header, or the `v1` a versioned log starts with."""
    return line.startswith(("os,cpu,gpu", "fps,frametime")) or line == "v1"


def _is_bench_csv(line: str) -> bool:
    return line.replace(" ", "") == "side,kind,name,value"


FORMAT_TABLE: tuple[Format, ...] = (
    Format(id="presentmon", tool="PresentMon", listed="PresentMon", grouped=True, noun=None,
           sniff=_flavour_is("presentmon"), sniff_order=5, read=_presentmon("presentmon")),
    Format(id="ocat", tool="OCAT", listed="OCAT", grouped=True, noun=None,
           sniff=_flavour_is("ocat"), sniff_order=5, read=_presentmon("ocat")),
    Format(id="frameview", tool="NVIDIA FrameView", listed="FrameView", grouped=True, noun=None,
           sniff=_flavour_is("frameview"), sniff_order=5, read=_presentmon("frameview")),
    Format(id="capframex-json", tool="CapFrameX", listed="CapFrameX", grouped=False,
           noun="a CapFrameX JSON session", sniff=_starts("{"), sniff_order=1,
           read=_read_capframex_json),
    Format(id="capframex-csv", tool="CapFrameX", listed="CapFrameX", grouped=True, noun=None,
           sniff=_starts("//"), sniff_order=2, read=_read_capframex_csv),
    Format(id="mangohud", tool="MangoHud", listed="MangoHud", grouped=False,
           noun="a MangoHud log", sniff=_is_mangohud, sniff_order=4, read=_read_mangohud),
    Format(id="frame-stats", tool="engine frame stats", listed="frame-stats", grouped=False,
           noun="an engine frame-stats file", sniff=_starts('{"schema_version":'),
           sniff_order=0, read=_read_frame_stats),
    Format(id="bench-csv", tool="benchmark page CSV", listed="benchmark CSV", grouped=False,
           noun="a benchmark-page CSV", sniff=_is_bench_csv, sniff_order=3,
           read=_read_bench_csv),
)
"""Every format certgen reads, in the order `--format` lists them."""

FORMATS: tuple[str, ...] = tuple(f.id for f in FORMAT_TABLE)
"""Format ids `--format` accepts (ocat and frameview force the PresentMon-family reader)."""

DETECTION_ORDER: tuple[Format, ...] = tuple(sorted(FORMAT_TABLE, key=lambda f: f.sniff_order))
"""The formats in the order detection tries them."""

_BY_ID = {f.id: f for f in FORMAT_TABLE}


def format_of(format_id: str) -> Format:
    """The table row of a format id (one of FORMATS)."""
    return _BY_ID[format_id]


def listed_formats() -> str:
    """The formats as the refusal of an unknown file lists them: "PresentMon, OCAT, … or
    benchmark CSV" (each name once, in table order)."""
    names = list(dict.fromkeys(f.listed for f in FORMAT_TABLE))
    return f"{', '.join(names[:-1])} or {names[-1]}"
