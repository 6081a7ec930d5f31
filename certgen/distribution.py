"""The certgen wheel a registry publishes for its customers: `certgen site --wheel FILE` (and
`certgen registry --wheel FILE`) put it under `<registry>/software/` with its SHA-256, and every
registry page says how to install it and run `certgen verify` (docs/registry.md).

"The exact certgen it was built with" is checked, not assumed: the wheel's name carries this
certgen's version, and every file of the package it installs (modules, templates, locales,
fonts, rules) has, by its RECORD, the SHA-256 of the running certgen's own file, and no file of
the running package is missing from it. A wheel of another version or with one changed file is
refused naming the file. Pure apart from reading the running package's files.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import zipfile
from pathlib import Path

from certgen import __version__
from certgen.errors import CertgenError
from certgen.registry import PublishedWheel
from certgen.support.paths import locales_dir, templates_dir
from certgen.verify.reading import read_input

_NAME = re.compile(r"^certgen-(?P<version>[^-]+)-[^-]+-[^-]+-[^-]+\.whl$")


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _local_files() -> dict[str, Path]:
    """The running certgen's files, by the path a wheel installs them at."""

    package = Path(__file__).resolve().parent
    out: dict[str, Path] = {}
    for path in package.rglob("*"):
        rel = path.relative_to(package)
        if not path.is_file() or "__pycache__" in rel.parts or rel.parts[0] == "_data":
            continue
        if path.suffix in (".py", ".yaml") or path.name == "py.typed":
            out[f"certgen/{rel.as_posix()}"] = path
    for name, folder in (("templates", templates_dir()), ("locales", locales_dir())):
        for path in folder.rglob("*"):
            rel = path.relative_to(folder)
            if path.is_file() and "__pycache__" not in rel.parts and not path.name.startswith("."):
                out[f"certgen/_data/{name}/{rel.as_posix()}"] = path
    return out


def check_wheel(data: bytes, *, name: str, source: str) -> PublishedWheel:
    """`data` (a wheel named `name`) if it is this certgen, file for file; else CertgenError
    naming `source` and the first difference."""
    match = _NAME.match(name)
    if match is None:
        raise CertgenError("expected a certgen wheel (certgen-<version>-…-…-….whl)", file=source)
    if match["version"] != __version__:
        raise CertgenError(f"a wheel of certgen {match['version']}; this is certgen "
                           f"{__version__}: publish the wheel of the certgen that built the "
                           "certificates", file=source)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        records = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        if len(records) != 1:
            raise CertgenError("the wheel has no RECORD (not a wheel?)", file=source)
        rows = list(csv.reader(io.StringIO(archive.read(records[0]).decode("utf-8"))))
    except (zipfile.BadZipFile, UnicodeDecodeError, KeyError) as exc:
        raise CertgenError(f"not a readable wheel ({exc})", file=source) from None
    listed = {row[0]: row[1] for row in rows if len(row) >= 2 and row[0].startswith("certgen/")}
    inside = {n for n in archive.namelist() if n.startswith("certgen/") and not n.endswith("/")}
    if inside != set(listed):
        extra = sorted(inside ^ set(listed))[0]
        raise CertgenError(f"the wheel's RECORD and its files disagree on {extra}", file=source)
    local = _local_files()
    for path in sorted(local):
        if path not in listed:
            raise CertgenError(f"the wheel lacks {path}, which this certgen has", file=source)
        packed = archive.read(path)
        if _record_hash(packed) != listed[path]:
            raise CertgenError(f"the wheel's {path} does not match its RECORD", file=source)
        if packed != local[path].read_bytes():
            raise CertgenError(f"the wheel's {path} differs from this certgen's", file=source)
    for path in sorted(set(listed) - set(local)):
        if not path.endswith(".pyc"):
            raise CertgenError(f"the wheel has {path}, which this certgen has not", file=source)
    return PublishedWheel(name=name, data=data, sha256=hashlib.sha256(data).hexdigest())


def load_wheel(path: str) -> PublishedWheel:
    """Read --wheel FILE (a regular file of at most 64 MiB) and check it (check_wheel)."""

    data = read_input(path, limit=64 * 1024 * 1024, what="a certgen wheel")
    return check_wheel(data, name=Path(path).name, source=path)
