"""The writer owns the disk: atomic writes confined to one output folder, manifest last.

Every document is rendered in memory first; the writer then puts each file in place with a
temp file in the same folder, fsync and `os.replace`, so a reader never sees half a file.
A path that would leave the folder (absolute, `..`, a symlink leading out) is refused, and so
is a second output with the same path. The manifest (file names, sizes, SHA-256, plus what
the caller adds) is written last: a folder without one is an interrupted build.

Stale outputs: a rebuild that produces fewer files (fewer languages, say) must not leave the
old ones beside the new manifest. Starting a writer renames the old manifest to the hidden
`.manifest.previous.json` (merging it with one an interrupted run left), so what the previous
build wrote is never forgotten, however often a rebuild is killed. `finish` removes every
file those lists name that this build did not write, after the new files are in place and
before the new manifest is written, and then deletes `.manifest.previous.json`. Only listed
paths are touched, only inside this writer's folder, never through a symlink: a file the writer
did not list is never removed. Temp files carry the prefix `.certgen-tmp.`; one left by a
killed run is removed when the next writer starts on the folder.

One writer at a time: a writer holds `fcntl.flock` on the hidden `.certgen.lock` in its folder
from start to `finish` (or `close`). A second build into the same folder waits, says so once on
stderr, and refuses with an OutputError after `lock_timeout` seconds. The lock file is deleted
at the end (a waiter that locked the deleted file notices and locks the new one).

Disk errors (ENOSPC, a read-only folder, permissions) are OutputErrors naming the file and
the system's reason, with the OSError kept as the cause.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath

from certgen import jsonload
from certgen.errors import OutputError
from certgen.jsonload import JSONValue

MANIFEST_NAME = "manifest.json"
PREVIOUS_NAME = ".manifest.previous.json"
"""What the last complete build listed, kept until this build's manifest is written."""
LOCK_NAME = ".certgen.lock"
TEMP_PREFIX = ".certgen-tmp."
"""Every temp file of the writer starts with it (a leftover is recognisably the writer's)."""
LOCK_TIMEOUT_S = 60.0
"""How long a second build into the same folder waits for the first one by default."""


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
    _atomic(path, data)


def _atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{path.name[:80]}.", suffix=".tmp",
                               dir=path.parent)
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


def _disk_error(what: str, exc: OSError) -> OutputError:
    """An OutputError naming the file and the system's reason (ENOSPC, EROFS, EACCES…)."""
    reason = exc.strerror or str(exc)
    hint = {errno.ENOSPC: " (the disk is full)", errno.EROFS: " (a read-only file system)",
            errno.EDQUOT: " (the disk quota is exceeded)"}.get(exc.errno or 0, "")
    error = OutputError(f"cannot write: {reason}{hint}", file=what)
    error.__cause__ = exc
    return error


def _lock(root: Path, timeout: float) -> int:
    """An fd holding flock on root/LOCK_NAME; waits up to `timeout` s, saying so once."""
    path = root / LOCK_NAME
    deadline = time.monotonic() + timeout
    told = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise OutputError(
                            f"another certgen build is writing to this folder; gave up after "
                            f"{timeout:g} s (lock file {LOCK_NAME})", file=str(root),
                        ) from None
                    if not told:
                        sys.stderr.write(f"certgen: {root}: another build is writing here; "
                                         f"waiting up to {timeout:g} s\n")
                        told = True
                    time.sleep(0.05)
            # The holder deletes the lock file when done: if ours is no longer the file at that
            # path, lock the current one instead.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


class Writer:
    """Writes the files of one output folder; see the module docstring.

    `Writer(out_dir, "ASD-2026-000123")` confines every path to `out_dir/ASD-2026-000123`.
    """

    def __init__(self, out_dir: Path | str, folder: str = "", *, manifest: str = MANIFEST_NAME,
                 lock_timeout: float = LOCK_TIMEOUT_S):
        self._lock_fd: int | None = None
        self._finished = False
        base = Path(out_dir)
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _disk_error(str(out_dir), exc) from exc
        self.base = base.resolve()
        self.root = self._confine(self.base, folder) if folder else self.base
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _disk_error(str(self.root), exc) from exc
        if not self.root.resolve().is_relative_to(self.base):
            raise OutputError(f"{folder}: output folder leads outside {out_dir}")
        self.manifest_name = manifest
        self._written: dict[str, tuple[int, str]] = {}
        self._finished = False
        self._removed: list[str] = []
        try:
            self._lock_fd = _lock(self.root, lock_timeout)
            self._previous = self._keep_previous()
            self._remove_leftover_temps()
        except OSError as exc:
            self.close()
            if isinstance(exc, OutputError):
                raise
            raise _disk_error(str(self.root), exc) from exc

    def _keep_previous(self) -> tuple[str, ...]:
        """Move the old manifest aside (merged with a leftover one); return what both list."""
        old = self.root / self.manifest_name
        kept = self.root / PREVIOUS_NAME
        previous = _listed_paths(kept) if kept.is_file() and not kept.is_symlink() else ()
        if old.is_file() and not old.is_symlink():
            listed = _listed_paths(old)
            if previous:
                union = sorted(set(previous) | set(listed))
                _atomic(kept, (json.dumps({"files": [{"path": p} for p in union]}, indent=2)
                               + "\n").encode())
                old.unlink()
                previous = tuple(union)
            else:
                os.replace(old, kept)
                previous = listed
            _fsync_dir(self.root)
        elif old.is_symlink():
            old.unlink()
            _fsync_dir(self.root)
        return previous

    def _remove_leftover_temps(self) -> None:
        """Remove temp files a killed writer left: names with TEMP_PREFIX, in the folder and in
        the subfolders the previous manifests list (never a walk of a whole output tree a user
        may have pointed --out at), never through a symlink."""
        folders = {PurePosixPath(p).parent for p in self._previous} | {PurePosixPath(".")}
        for rel in sorted(folders, key=str):
            try:
                folder = self._confine(self.root, f"{rel}/x").parent if str(rel) != "." else self.root
            except OutputError:
                continue
            if folder.is_symlink() or not folder.is_dir():
                continue
            for path in sorted(folder.iterdir()):
                name = path.name
                if name.startswith(TEMP_PREFIX) and name.endswith(".tmp") and not path.is_symlink():
                    path.unlink()

    def close(self) -> None:
        """Release the folder lock (finish does it; call it when a build stops early)."""
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            if self._finished:
                with contextlib.suppress(OSError):
                    (self.root / LOCK_NAME).unlink()
            os.close(fd)

    def __del__(self) -> None:
        self.close()

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
        try:
            atomic_write(target, data)
        except OSError as exc:
            raise _disk_error(relpath, exc) from exc
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
            try:
                target.unlink()
            except OSError as exc:
                raise _disk_error(relpath, exc) from exc
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

    def finish(self, extra: dict[str, JSONValue] | None = None) -> Path:
        """Remove stale outputs, then write the manifest last: sorted files with size and
        SHA-256, then `extra`."""
        if self._finished:
            raise OutputError(f"{self.manifest_name}: already written")
        self._remove_stale()
        manifest: dict[str, JSONValue] = {
            "files": [
                {"path": path, "size": size, "sha256": digest}
                for path, (size, digest) in sorted(self._written.items())
            ]
        }
        if extra:
            manifest.update(extra)
        data = (json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode()
        target = self._confine(self.root, self.manifest_name)
        try:
            atomic_write(target, data)
            with contextlib.suppress(FileNotFoundError):
                (self.root / PREVIOUS_NAME).unlink()
        except OSError as exc:
            raise _disk_error(self.manifest_name, exc) from exc
        self._finished = True
        self.close()
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
        path for entry in files
        if isinstance(entry, dict) and isinstance(path := entry.get("path"), str) and path
    )


def read_manifest(folder: Path) -> dict[str, JSONValue] | None:
    """The manifest of a finished output folder, or None (absent or unreadable)."""
    path = folder / MANIFEST_NAME
    try:
        data = jsonload.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def verify_manifest(folder: Path, manifest: dict[str, JSONValue]) -> bool:
    """True when every file the manifest lists exists with its recorded size and SHA-256."""
    files = manifest.get("files")
    if not isinstance(files, list):
        return False
    for entry in files:
        if not isinstance(entry, dict):  # entry["path"] would raise TypeError
            return False
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
