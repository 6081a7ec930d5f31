"""requirements.lock is the environment: a drifting install fails here, loudly (issue 16).

`make venv`, `make demo` and `make test` install the lock (`uv pip install --require-hashes -r
requirements.lock`, then certgen with --no-deps). These tests compare every locked package's
version with the installed one (importlib.metadata), check the lock covers pyproject.toml's
dependencies within their ranges, and that every pin carries a hash.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)"
                  r"(?:\s*;\s*(?P<marker>[^\\]+?))?\s*\\?$")


@dataclass(frozen=True)
class Pin:
    """One locked package: name, exact version, environment marker, hashes."""

    name: str
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]

    def applies(self) -> bool:
        """Whether this environment installs it (its marker, if any, holds here)."""
        return self.marker is None or self.marker.evaluate()


def parse_lock(text: str) -> list[Pin]:
    """The pins of a uv / pip-tools requirements file with hashes."""
    pins: list[Pin] = []
    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            marker = match["marker"]
            pins.append(Pin(canonicalize_name(match["name"]), match["version"],
                            Marker(marker) if marker else None, ()))
            continue
        hashed = re.match(r"^\s+--hash=(sha256:[0-9a-f]{64})", line)
        if hashed and pins:
            last = pins[-1]
            pins[-1] = Pin(last.name, last.version, last.marker, (*last.hashes, hashed[1]))
    return pins


def drift(pins: list[Pin], installed: Callable[[str], str | None]) -> list[str]:
    """One line per locked package whose installed version is not the locked one."""
    out = []
    for pin in pins:
        if not pin.applies():
            continue
        have = installed(pin.name)
        if have != pin.version:
            out.append(f"{pin.name}: locked {pin.version}, installed {have or 'nothing'}")
    return out


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


PINS = parse_lock(LOCK.read_text(encoding="utf-8"))


def test_every_locked_package_is_installed_at_its_locked_version() -> None:
    problems = drift(PINS, _installed)
    assert not problems, (
        "this environment is not requirements.lock's (reinstall with `make venv`, or refresh the "
        "lock as docs/reproducibility.md says):\n" + "\n".join(problems))


def test_the_drift_check_names_a_wrong_and_a_missing_package() -> None:
    """The check itself can fail: a wrong version and an absent package are both reported."""
    pins = parse_lock("weasyprint==70.0 \\\n    --hash=sha256:" + "0" * 64 + "\n"
                      "nosuchpkg==1.0 ; python_version >= '3'\n"
                      "winonly==2.0 ; sys_platform == 'no-such-platform'\n")
    versions = {"weasyprint": "71.0"}
    assert drift(pins, versions.get) == ["weasyprint: locked 70.0, installed 71.0",
                                         "nosuchpkg: locked 1.0, installed nothing"]


def test_every_pin_is_exact_and_hashed() -> None:
    assert len(PINS) >= 40
    unhashed = [pin.name for pin in PINS if not pin.hashes]
    assert not unhashed, f"pins without a hash: {unhashed}"
    names = [pin.name for pin in PINS]
    assert len(names) == len(set(names)), "a package is pinned twice"


def test_the_lock_covers_pyproject_within_its_open_ranges() -> None:
    """Every runtime and test dependency is locked at a version its (open) range allows."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = [Requirement(r) for r in (*project["dependencies"], *extras["test"])]
    # `certgen[postgres,dask]` in the test extra names the project's own extras: their
    # requirements are what must be locked, not certgen itself.
    for own in [r for r in wanted if canonicalize_name(r.name) == project["name"]]:
        wanted.remove(own)
        wanted += [Requirement(r) for extra in sorted(own.extras) for r in extras[extra]]
    locked = {pin.name: pin.version for pin in PINS}
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is in pyproject.toml but not in requirements.lock"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"{name}: locked {locked[name]} is outside pyproject's {requirement.specifier}")
    # The ranges stay open for library users: no exact pin in pyproject.toml.
    assert not [str(r) for r in wanted if any(s.operator == "==" for s in r.specifier)]
