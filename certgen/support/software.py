"""Which software makes a document: certgen, its commit, Python, the renderer stack, data digests.

A certificate is evidence, so record.json (`software`), the PDF's metadata and
`certgen --version --verbose` name the stack that produced it (docs/reproducibility.md):

- certgen's version, and its git commit only when the environment states it (CERTGEN_COMMIT).
  Not `git rev-parse` at build time: the same bundle must give the same bytes from a clone, a
  source tarball or an installed wheel, and a clone has no say in which of them it is;
- the Python version, WeasyPrint and pydyf (package metadata: no import of WeasyPrint), Pango
  and HarfBuzz (the shared libraries WeasyPrint loads, asked for their version);
- SHA-256 digests of the templates, locales, fonts and packaged rules files: the data a
  document is rendered from, wherever it is installed (checkout or wheel), so two installs with
  equal digests render from equal files.

Everything here is read from the running environment, once per process (cached); for the same
environment the block is the same, so record.json stays deterministic.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import platform
from functools import cache
from importlib import metadata
from pathlib import Path

from certgen import __version__
from certgen.model.software import DataDigests, Software
from certgen.support.paths import locales_dir, templates_dir

COMMIT_ENV = "CERTGEN_COMMIT"
"""The environment variable naming certgen's git commit (e.g. set by CI or `make dist`)."""

UNKNOWN = "unknown"
"""The version of a component that cannot be found (a library missing or too old to say)."""

# The names WeasyPrint's text/ffi.py tries for the two libraries, Linux names first.
_PANGO_NAMES = ("libpango-1.0.so.0", "pango-1.0", "libpango-1.0-0", "libpango-1.0.0.dylib")
_HARFBUZZ_NAMES = ("libharfbuzz.so.0", "harfbuzz", "libharfbuzz-0", "libharfbuzz.0.dylib")


def creator_line(software: Software) -> str:
    """One line for a PDF's Creator field (see `stack_line`)."""
    return stack_line(certgen=software.certgen, commit=software.commit, python=software.python,
                      weasyprint=software.weasyprint, pydyf=software.pydyf,
                      pango=software.pango, harfbuzz=software.harfbuzz)


def version_lines(software: Software) -> list[str]:
    """`certgen --version --verbose`: one 'name value' line per component and digest."""
    return [
        f"certgen {software.certgen}",
        f"commit {software.commit or f'(not stated; set {COMMIT_ENV})'}",
        f"python {software.python}",
        f"weasyprint {software.weasyprint}",
        f"pydyf {software.pydyf}",
        f"pango {software.pango}",
        f"harfbuzz {software.harfbuzz}",
        f"templates sha256:{software.digests.templates}",
        f"locales sha256:{software.digests.locales}",
        f"fonts sha256:{software.digests.fonts}",
        f"rules sha256:{software.digests.rules}",
    ]


def stack_line(*, certgen: str, commit: str | None, python: str, weasyprint: str, pydyf: str,
               pango: str, harfbuzz: str) -> str:
    """'certgen 0.2.0 (Python 3.11.7, WeasyPrint 70.0, pydyf 0.13.0, Pango 1.50.12, HarfBuzz
    6.0.0)', with ', commit <sha>' after the version when it is known."""
    stated = f", commit {commit}" if commit else ""
    return (f"certgen {certgen}{stated} (Python {python}, WeasyPrint {weasyprint}, pydyf {pydyf}, "
            f"Pango {pango}, HarfBuzz {harfbuzz})")


def tree_digest(root: Path, *, skip: tuple[str, ...] = ()) -> str:
    """SHA-256 over every regular file under root: its relative path, then its content's SHA-256,
    in sorted path order. Hidden files and caches are left out (the wheel does not carry them),
    and so are the top-level entries named in `skip`."""
    digest = hashlib.sha256()
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in skip
        and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts)
        and p.suffix != ".pyc"
    )
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return UNKNOWN


def _library_version(names: tuple[str, ...], symbol: str) -> str:
    """The version string a C library reports (`const char *symbol(void)`), or UNKNOWN."""
    for name in names:
        try:
            library = ctypes.CDLL(name)
        except OSError:
            found = ctypes.util.find_library(name)
            if found is None:
                continue
            try:
                library = ctypes.CDLL(found)
            except OSError:
                continue
        function = getattr(library, symbol, None)
        if function is None:
            return UNKNOWN
        function.restype = ctypes.c_char_p
        function.argtypes = []
        value = function()
        return value.decode("ascii") if isinstance(value, bytes) else UNKNOWN
    return UNKNOWN


def data_digests() -> DataDigests:
    """Digests of the templates, locales, fonts and packaged rules files of this install."""

    templates = templates_dir()
    return DataDigests(
        templates=tree_digest(templates, skip=("fonts",)),
        locales=tree_digest(locales_dir()),
        fonts=tree_digest(templates / "fonts"),
        rules=tree_digest(Path(__file__).resolve().parent.parent / "sop", skip=("__init__.py",)),
    )


@cache
def current_software() -> Software:
    """The stack of this process (read once; the commit from CERTGEN_COMMIT when set)."""

    commit = os.environ.get(COMMIT_ENV, "").strip() or None
    return Software(
        certgen=__version__,
        commit=commit,
        python=platform.python_version(),
        weasyprint=_distribution_version("weasyprint"),
        pydyf=_distribution_version("pydyf"),
        pango=_library_version(_PANGO_NAMES, "pango_version_string"),
        harfbuzz=_library_version(_HARFBUZZ_NAMES, "hb_version_string"),
        digests=data_digests(),
    )
