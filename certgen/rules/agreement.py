"""Whether a value a capture records agrees with the value card.yaml declares: one pure
function per field (GPU, resolution, driver, OS, CPU, RAM, board, capture date), each with its
normalisation and its limits (docs/spec/provenance.md). Strings in, a verdict out; nothing else
of certgen. certgen.rules.provenance holds a bundle's captures against its card with these, and the
certificate shows "as recorded" only where they disagree, so the page and the issue decision
never use two rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

from certgen.model.cohort import MODE_MULTIPLIERS, FrameGenerationMode

# --------------------------------------------------------------------------------------------
# GPU
# --------------------------------------------------------------------------------------------

GPU_VENDOR_WORDS = frozenset({"nvidia", "amd", "ati", "intel", "geforce", "radeon", "r", "tm",
                              "graphics", "corporation", "corp", "inc"})
"""Words that name a vendor or a brand, not a model: left out of a GPU's model tokens
("(R)" and "(TM)" become the tokens r and tm)."""

GPU_VARIANT_SUFFIXES = frozenset({"ti", "super", "xt", "xtx", "gre", "le", "se", "d", "m",
                                  "max", "q", "mobile", "laptop"})
"""Tokens that make another GPU when they follow a model number: RTX 2080 Ti is not RTX 2080,
RX 7900 XTX is not RX 7900 XT, RTX 4090 D is not RTX 4090."""


def gpu_tokens(text: str) -> tuple[str, ...]:
    """A GPU name's tokens: lower case, split into runs of letters and runs of digits
    ("RTX2080Ti" -> rtx 2080 ti), "®" and "™" dropped."""
    cleaned = text.lower().replace("®", " ").replace("™", " ")
    return tuple(re.findall(r"[a-z]+|[0-9]+", cleaned))


def gpu_model_tokens(text: str) -> tuple[str, ...]:
    """The model tokens of a GPU name: its tokens without vendor and brand words
    ("NVIDIA GeForce RTX 2080 Ti" -> rtx 2080 ti)."""
    return tuple(t for t in gpu_tokens(text) if t not in GPU_VENDOR_WORDS)


def _contains_model(model: tuple[str, ...], declared: tuple[str, ...]) -> bool:
    """Whether `model` appears contiguously in `declared`, not followed by a variant suffix."""
    n = len(model)
    for start in range(len(declared) - n + 1):
        if declared[start:start + n] != model:
            continue
        after = declared[start + n] if start + n < len(declared) else None
        if after is None or after not in GPU_VARIANT_SUFFIXES:
            return True
    return False


def gpu_agrees(recorded: str, declared: Sequence[str]) -> bool | None:
    """Whether a recorded GPU name is the card's GPU: its model tokens appear contiguously in
    one of the declared texts (card.yaml's `card.model` and `card.gpu`), and the token after
    them there is not a variant suffix. None when the recorded name has no model token (it
    names only a vendor): not compared."""
    model = gpu_model_tokens(recorded)
    if not model:
        return None
    return any(_contains_model(model, gpu_model_tokens(text)) for text in declared)


def gpus_agree(one: str, other: str) -> bool | None:
    """Whether two recorded GPU names name the same GPU: the same model tokens (None when
    either has none)."""
    a, b = gpu_model_tokens(one), gpu_model_tokens(other)
    if not a or not b:
        return None
    return a == b


# --------------------------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------------------------


def parse_resolution(text: str) -> tuple[int, int] | None:
    """'2560x1440', '2560 x 1440', '2560×1440' -> (2560, 1440); None when it is not one."""
    match = re.fullmatch(r"\s*([0-9]{2,6})\s*[xX×*]\s*([0-9]{2,6})\s*", text)
    return None if match is None else (int(match[1]), int(match[2]))


def resolution_agrees(recorded: str, declared: str) -> bool | None:
    """Whether a recorded resolution is the run's (None when the recorded one is unreadable)."""
    got = parse_resolution(recorded)
    return None if got is None else got == parse_resolution(declared)


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

_NV_BRANCH = re.compile(r"r([0-9]{3})(?:_[0-9]+)?")
_NV_PACKED = re.compile(r"([0-9]{3})([0-9]{2})")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)+")


@dataclass(frozen=True)
class DriverVersion:
    """A driver version as the comparison reads it: whether it is Mesa, and its numbers;
    `major_only` for an NVIDIA branch name (r418_77), which gives the major version only."""

    mesa: bool
    numbers: tuple[int, ...]
    major_only: bool = False


def parse_driver(text: str) -> DriverVersion | None:
    """A driver text -> DriverVersion, or None when no version can be read.

    - "r418_77" (an NVIDIA driver branch, as OCAT's Driver Package writes it): major 418 only;
    - "41891" (NVIDIA's version without its dot): 418.91;
    - "Mesa 24.2.0": Mesa, 24.2.0;
    - otherwise the first dotted version in the text ("566.14", "Adrenalin 24.10.1").
    """
    lowered = text.strip().lower()
    mesa = "mesa" in lowered
    if (branch := _NV_BRANCH.fullmatch(lowered)) is not None:
        return DriverVersion(mesa=False, numbers=(int(branch[1]),), major_only=True)
    if (packed := _NV_PACKED.fullmatch(lowered)) is not None:
        return DriverVersion(mesa=False, numbers=(int(packed[1]), int(packed[2])))
    version = _VERSION.search(lowered)
    if version is None:
        return None
    return DriverVersion(mesa=mesa, numbers=tuple(int(n) for n in version[0].split(".")))


def driver_agrees(recorded: str, declared: str) -> bool:
    """Whether a recorded driver is the declared one. A Mesa driver never agrees with one that
    is not Mesa (Mesa 24.2.0 is not AMD Adrenalin 24.10.1); an NVIDIA branch (r418_77) agrees
    with any version of that major (418.91); other versions agree when their numbers are equal
    (trailing zeros ignored: 566.14 = 566.14.0). Texts with no readable version agree only
    when equal ignoring case and spaces."""
    got, want = parse_driver(recorded), parse_driver(declared)
    if got is None or want is None:
        return _plain(recorded) == _plain(declared)
    if got.mesa != want.mesa:
        return False
    if got.major_only or want.major_only:
        return got.numbers[0] == want.numbers[0]
    return _trim_zeros(got.numbers) == _trim_zeros(want.numbers)


def _trim_zeros(numbers: tuple[int, ...]) -> tuple[int, ...]:
    end = len(numbers)
    while end > 1 and numbers[end - 1] == 0:
        end -= 1
    return numbers[:end]


def _plain(text: str) -> str:
    return " ".join(text.lower().split())


# --------------------------------------------------------------------------------------------
# Operating system
# --------------------------------------------------------------------------------------------

LINUX_WORDS = frozenset({"linux", "ubuntu", "debian", "fedora", "arch", "steamos", "mint",
                         "manjaro", "opensuse", "suse", "nixos", "gentoo", "bazzite", "cachyos",
                         "pop", "endeavouros", "rhel", "centos", "kubuntu", "nobara"})
"""Words that name a Linux system (its family is linux)."""


@dataclass(frozen=True)
class OsFamily:
    """An OS as the comparison reads it: its family and, for Windows, its major version."""

    family: Literal["windows", "linux", "macos"]
    major: int | None


def parse_os(text: str) -> OsFamily | None:
    """'Windows 10 Pro 1809 (OS Build 17763…)' -> windows 10; 'Windows 11 Pro 23H2' -> windows
    11; a Windows build 22000 or later is Windows 11 whatever the name says (Windows 11 reports
    itself as 10 to some tools); 'Windows OS' -> windows, no major; a Linux distribution or
    kernel -> linux; macOS -> macos. None when no family is named."""
    lowered = text.lower()
    words = set(re.findall(r"[a-z]+", lowered))
    if "windows" in words:
        major_match = re.search(r"windows\s+(?:server\s+)?([0-9]{1,2})\b", lowered)
        major = None if major_match is None else int(major_match[1])
        build = re.search(r"build\s+([0-9]{5})", lowered)
        if build is not None and int(build[1]) >= 22000:
            major = 11
        return OsFamily("windows", major)
    if words & {"macos", "osx", "darwin"} or "mac os" in lowered:
        return OsFamily("macos", None)
    if words & LINUX_WORDS:
        return OsFamily("linux", None)
    return None


def os_agrees(recorded: str, declared: str) -> bool:
    """Whether a recorded OS is the declared one: the same family and, where both give one,
    the same Windows major version. Texts naming no known family agree only when equal
    ignoring case and spaces."""
    got, want = parse_os(recorded), parse_os(declared)
    if got is None or want is None:
        return _plain(recorded) == _plain(declared)
    if got.family != want.family:
        return False
    return got.major is None or want.major is None or got.major == want.major


# --------------------------------------------------------------------------------------------
# CPU
# --------------------------------------------------------------------------------------------

_CPU_MODELS = (
    re.compile(r"\b(i[3579]-[0-9]{4,5}[a-z]{0,3})\b"),                      # Core i9-9900K
    re.compile(r"\b(ultra [3579] [0-9]{3}[a-z]{0,2})\b"),                   # Core Ultra 9 285K
    re.compile(r"\b(ryzen (?:threadripper )?(?:pro )?(?:[3579] )?[0-9]{4}[a-z0-9]{0,4})\b"),
    re.compile(r"\b(threadripper (?:pro )?[0-9]{4}[a-z0-9]{0,3})\b"),
    re.compile(r"\b(epyc [0-9]{4}[a-z0-9]{0,3})\b"),
    re.compile(r"\b(xeon (?:[a-z]+ )?[a-z]?[0-9]?-?[0-9]{4}[a-z0-9]{0,3})\b"),
)
_CPU_NOISE = re.compile(r"\(r\)|\(tm\)|®|™|@\s*[0-9.]+\s*[gm]hz|\b[0-9.]+\s*[gm]hz\b")
_CPU_WORDS = frozenset({"intel", "amd", "core", "cpu", "processor", "with", "radeon",
                        "graphics"})


def cpu_model(text: str) -> str | None:
    """The model token of a CPU name, lower case: 'Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz'
    -> 'i9-9900k'; 'AMD Ryzen 7 7800X3D 8-Core Processor' -> 'ryzen 7 7800x3d'. None when no
    known model pattern is found."""
    cleaned = " ".join(_CPU_NOISE.sub(" ", text.lower()).split())
    for pattern in _CPU_MODELS:
        match = pattern.search(cleaned)
        if match is not None:
            return match[1]
    return None


def _cpu_plain(text: str) -> str:
    cleaned = _CPU_NOISE.sub(" ", text.lower())
    return " ".join(w for w in re.findall(r"[a-z0-9-]+", cleaned) if w not in _CPU_WORDS)


def cpu_agrees(recorded: str, declared: str) -> bool:
    """Whether a recorded CPU is the declared one: the same model token (marks, vendor words
    and clock suffixes ignored). When neither names a known model, their words (without marks,
    clocks and the words Intel, AMD, Core, CPU, Processor) must be equal."""
    got, want = cpu_model(recorded), cpu_model(declared)
    if got is None and want is None:
        return _cpu_plain(recorded) == _cpu_plain(declared)
    return got == want


# --------------------------------------------------------------------------------------------
# RAM
# --------------------------------------------------------------------------------------------

RAM_TOLERANCE = 0.10
"""How far below the declared size a recorded one may be (MemTotal leaves out what the firmware
and the kernel reserve, a few per cent) and still agree; above, 2 per cent."""

_RAM = re.compile(r"([0-9]+(?:[.,][0-9]+)?)\s*(kib|kb|mib|mb|gib|gb|tib|tb)?\b")
_RAM_UNITS = {None: 1 / (1024 * 1024), "kb": 1 / (1024 * 1024), "kib": 1 / (1024 * 1024),
              "mb": 1 / 1024, "mib": 1 / 1024, "gb": 1.0, "gib": 1.0, "tb": 1024.0,
              "tib": 1024.0}


def ram_gb(text: str) -> float | None:
    """A memory size in GB from its first number and unit: '32 GB 3800 MT/s' -> 32;
    '32768 MB' -> 32; '32803468' (no unit: kB, as MangoHud writes MemTotal) -> 31.3.
    None when the text has no number."""
    match = _RAM.search(text.lower())
    if match is None:
        return None
    value = float(match[1].replace(",", "."))
    return value * _RAM_UNITS[match[2]]


def ram_agrees(recorded: str, declared_gb: float) -> bool | None:
    """Whether a recorded memory size is the declared one: between 10 % below and 2 % above
    it. None when the recorded text has no number (not compared)."""
    got = ram_gb(recorded)
    if got is None:
        return None
    return declared_gb * (1 - RAM_TOLERANCE) <= got <= declared_gb * 1.02


# --------------------------------------------------------------------------------------------
# Motherboard
# --------------------------------------------------------------------------------------------

BOARD_VENDORS: tuple[tuple[str, str], ...] = (
    ("asustek computer inc.", "asus"), ("asustek computer inc", "asus"), ("asustek", "asus"),
    ("asus", "asus"),
    ("micro-star international co., ltd.", "msi"), ("micro-star international co. ltd.", "msi"),
    ("micro-star international", "msi"), ("msi", "msi"),
    ("gigabyte technology co., ltd.", "gigabyte"), ("gigabyte", "gigabyte"),
    ("asrock", "asrock"), ("biostar", "biostar"), ("evga", "evga"), ("nzxt", "nzxt"),
    ("supermicro", "supermicro"), ("dell inc.", "dell"), ("dell", "dell"),
    ("lenovo", "lenovo"), ("hewlett-packard", "hp"), ("hp", "hp"), ("colorful", "colorful"),
)
"""Board vendors as firmware and tools write them, each with the name the comparison uses,
longest first within a vendor."""


@dataclass(frozen=True)
class Board:
    """A motherboard as the comparison reads it: its vendor (None when not known) and model
    words (lower case, parenthesised parts left out)."""

    vendor: str | None
    words: frozenset[str]


def parse_board(text: str) -> Board:
    """'ASUSTeK COMPUTER INC. ROG MAXIMUS XI HERO' -> asus {rog, maximus, xi, hero};
    'Micro-Star International Co. Ltd. MPG Z390 GAMING PRO CARBON (MS-7B17)' -> msi
    {mpg, z390, gaming, pro, carbon}."""
    lowered = " ".join(re.sub(r"\([^)]*\)", " ", text.lower()).split())
    vendor = None
    for alias, name in BOARD_VENDORS:
        if lowered == alias or lowered.startswith(alias + " "):
            vendor, lowered = name, lowered[len(alias):]
            break
    return Board(vendor, frozenset(re.findall(r"[a-z0-9]+", lowered)))


def board_agrees(recorded: str, declared: str) -> bool:
    """Whether a recorded board is the declared one: the same vendor where both name a known
    one, and the same model words in any order."""
    got, want = parse_board(recorded), parse_board(declared)
    if got.vendor is not None and want.vendor is not None and got.vendor != want.vendor:
        return False
    return got.words == want.words


# --------------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------------

_CAPTURED = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T].*)?")
DATE_SLACK_DAYS = 1
"""How many days a recorded capture date may differ from the run's tested_on (a capture made
just before midnight, a clock in another time zone)."""


def captured_date(text: str) -> date | None:
    """The day of a recorded capture time, as the readers give it: CapFrameX CSV's
    'CreationDate CreationTime' ('2019-03-30 12:01:36') and CapFrameX JSON's CreationDate
    ('2026-11-20T10:00:00', a fraction and an offset allowed). The day is taken as written (no
    time zone is applied). None for any other form: not compared."""
    match = _CAPTURED.fullmatch(text.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def dates_agree(recorded: date, tested_on: date) -> bool:
    """Whether a capture's day is within DATE_SLACK_DAYS of the run's tested_on."""
    return abs((recorded - tested_on).days) <= DATE_SLACK_DAYS


MULTIPLIER_SLACK = 0.25
"""How far an observed frame-generation multiplier may sit from a fixed mode's and still agree
with it (docs/spec/provenance.md): a frame the tool could not pace, or a scene cut, moves the
whole-capture ratio by hundredths; the nearest other mode is a whole step away."""


def frame_generation_agrees(observed: float, mode: FrameGenerationMode) -> bool | None:
    """Whether the multiplier a capture shows (frames shown per application frame) agrees with
    the mode card.yaml declares: off within MULTIPLIER_SLACK of 1, a fixed mode within it of
    its own multiplier, dynamic above 1 + MULTIPLIER_SLACK and not above the largest mode's.

    None (not compared) when a mode with frame generation is declared and the capture types no
    frame as generated: PresentMon writes NVIDIA's generated frames as "Application" (its
    issue 568), so such a capture cannot tell frame generation from none."""
    if mode == "off":
        return observed <= 1.0 + MULTIPLIER_SLACK
    if observed <= 1.0:
        return None
    if mode == "dynamic":
        return 1.0 + MULTIPLIER_SLACK < observed <= max(MODE_MULTIPLIERS.values()) + MULTIPLIER_SLACK
    return abs(observed - MODE_MULTIPLIERS[mode]) <= MULTIPLIER_SLACK
