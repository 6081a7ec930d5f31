"""The writer owns the disk: atomic writes confined to one output folder, manifest last.

Every document is rendered in memory first; the writer then puts each file in place with a
temp file in the same folder, fsync and `os.replace`, so a reader never sees half a file.
A path that would leave the folder (absolute, `..`, a symlink leading out) is refused, and so
is a second output with the same path. The manifest (file names, sizes, SHA-256, plus what
the caller adds) is written last: a folder without one is an interrupted build. Starting a
writer on a folder removes its old manifest first, for the same reason.

Stale outputs: a rebuild that produces fewer files (fewer languages, say) must not leave the
old ones beside the new manifest. `finish` removes every file the previous manifest listed
that this build did not write, after the new files are in place and before the new manifest
is written. Only paths that manifest lists are touched, only inside this writer's folder,
never through a symlink: a file the writer did not list is never removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from certgen import jsonload
from certgen.errors import OutputError

MANIFEST_NAME = "manifest.json"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (temp file in the same folder, fsync, os.replace)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


class Writer:
    """Writes the files of one output folder; see the module docstring.

    `Writer(out_dir, "ASD-2026-000123")` confines every path to `out_dir/ASD-2026-000123`.
    """

    def __init__(self, out_dir: Path | str, folder: str = "", *, manifest: str = MANIFEST_NAME):
        base = Path(out_dir)
        base.mkdir(parents=True, exist_ok=True)
        self.base = base.resolve()
        self.root = self._confine(self.base, folder) if folder else self.base
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.root.resolve().is_relative_to(self.base):
            raise OutputError(f"{folder}: output folder leads outside {out_dir}")
        self.manifest_name = manifest
        self._written: dict[str, tuple[int, str]] = {}
        self._finished = False
        self._removed: list[str] = []
        old = self.root / manifest
        self._previous = _listed_paths(old) if old.is_file() and not old.is_symlink() else ()
        if old.is_file() or old.is_symlink():
            old.unlink()
            _fsync_dir(self.root)

    @staticmethod
    def _confine(root: Path, relpath: str) -> Path:
        rel = PurePosixPath(relpath)
        if not relpath or rel.is_absolute() or "\\" in relpath or "\x00" in relpath:
            raise OutputError(f"{relpath!r}: expected a relative path inside the output folder")
        if any(part in ("..", ".", "") for part in relpath.split("/")):
            raise OutputError(f"{relpath!r}: expected a path without '.' or '..' segments")
        target = root.joinpath(*rel.parts)
        # The folder must resolve inside the root (no symlinked folder leading out) and the
        # file itself must not be a symlink (os.replace would keep it inside, but refuse).
        if not target.parent.resolve().is_relative_to(root):
            raise OutputError(f"{relpath!r}: leads outside the output folder")
        if target.is_symlink():
            raise OutputError(f"{relpath!r}: is a symlink; refusing to write through it")
        return target

    def write(self, relpath: str, data: bytes) -> Path:
        """Write one file atomically; refuse a second write of the same path."""
        if self._finished:
            raise OutputError(f"{relpath}: the manifest is written; no more outputs")
        if relpath in self._written or relpath == self.manifest_name:
            raise OutputError(f"{relpath}: two outputs with the same path")
        target = self._confine(self.root, relpath)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.parent.resolve().is_relative_to(self.root.resolve()):
            raise OutputError(f"{relpath!r}: leads outside the output folder")
        atomic_write(target, data)
        self._written[relpath] = (len(data), hashlib.sha256(data).hexdigest())
        return target

    def written(self) -> dict[str, tuple[int, str]]:
        """{relative path: (size, sha256)} of the files written so far."""
        return dict(self._written)

    def removed(self) -> list[str]:
        """The stale outputs `finish` removed (relative paths, sorted)."""
        return list(self._removed)

    def _remove_stale(self) -> None:
        """Remove what the previous manifest listed and this build did not write (module doc)."""
        for relpath in sorted(set(self._previous) - set(self._written) - {self.manifest_name}):
            try:
                target = self._confine(self.root, relpath)
            except OutputError:
                continue  # a listed path leading out of the folder (or a symlink): never touched
            if not target.is_file() or not target.resolve().is_relative_to(self.root):
                continue
            target.unlink()
            self._removed.append(relpath)
            # Drop folders the removal left empty, up to (not including) the root.
            parent = target.parent
            while parent != self.root and parent.is_relative_to(self.root):
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
        if self._removed:
            _fsync_dir(self.root)

    def finish(self, extra: dict[str, Any] | None = None) -> Path:
        """Remove stale outputs, then write the manifest last: sorted files with size and
        SHA-256, then `extra`."""
        if self._finished:
            raise OutputError(f"{self.manifest_name}: already written")
        self._remove_stale()
        manifest: dict[str, Any] = {
            "files": [
                {"path": path, "size": size, "sha256": digest}
                for path, (size, digest) in sorted(self._written.items())
            ]
        }
        if extra:
            manifest.update(extra)
        data = (json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode()
        target = self._confine(self.root, self.manifest_name)
        atomic_write(target, data)
        self._finished = True
        return target


def _listed_paths(manifest: Path) -> tuple[str, ...]:
    """The `files[].path` strings of a manifest file (empty when unreadable or malformed)."""
    try:
        data = jsonload.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        return ()
    return tuple(
        entry["path"] for entry in files
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and entry["path"]
    )


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a finished output folder, or None (absent or unreadable)."""
    path = folder / MANIFEST_NAME
    try:
        data = jsonload.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def verify_manifest(folder: Path, manifest: dict[str, Any]) -> bool:
    """True when every file the manifest lists exists with its recorded size and SHA-256."""
    files = manifest.get("files")
    if not isinstance(files, list):
        return False
    for entry in files:
        try:
            path = folder / str(entry["path"])
            if path.is_symlink() or not path.is_file():
                return False
            if path.stat().st_size != entry["size"]:
                return False
            if hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
                return False
        except (KeyError, OSError, TypeError):
            return False
    return True
