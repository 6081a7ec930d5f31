"""The writer owns the disk: atomic builds confined to one output folder, manifest last.

Every document is rendered in memory first; the writer puts each file into a fresh hidden
staging folder inside the output folder (`.certgen-new`, written and fsynced), never beside the
live files. Only when the build is complete (`finish`) does it write the new manifest into the
staging folder, and that file is the commit point: the staged files are then moved into place
with `os.replace` (same file system, each rename atomic), stale files are removed and the
manifest goes in last. Until the commit point the previous build stays exactly as it was, files
and manifest, whatever stops this one: a full disk, a render or signing error, kill -9. A
writer that stops early (an error, `close` without `finish`) removes its staging folder; one
left by a killed process is removed by the next writer on the folder, or, when it holds its
manifest (killed during the commit's few renames), rolled forward: the commit is completed.
The output folder itself is never renamed or swapped: it may be a mount point, or hold the
lab's own files beside the build's.

A path that would leave the folder (absolute, `..`, a symlink leading out) is refused, and so
is a second output with the same path or a name the writer keeps for itself. The manifest (file
names, sizes, SHA-256, plus what the caller adds) is written last: a folder without one is an
interrupted build (or was never finished).

A tree built by several writers (the site: samples/<id>/ and reports/<name>/ each with their own
manifest) is staged whole: the caller builds into `writer.staging` and the outer writer's commit
moves everything in, each nested manifest after its own files, with its own stale files removed.

Stale outputs: a rebuild that produces fewer files (fewer languages, say) must not leave the
old ones beside the new manifest. The commit first renames the old manifest to the hidden
`.manifest.previous.json` (merging it with one an interrupted commit left), removes every
file those lists name that this build did not write, after the new files are in place and
before the new manifest is written, and then deletes `.manifest.previous.json`. Only listed
paths are touched, only inside this writer's folder, never through a symlink: a file the writer
did not list is never removed. Temp files carry the prefix `.certgen-tmp.`; one left by a
killed run is removed when the next writer starts on the folder.

One writer at a time: a writer holds `fcntl.flock` on the hidden `.certgen.lock` in its folder
from start to `finish` (or `close`). A second build into the same folder waits, says so once on
stderr, and refuses with an OutputError after `lock_timeout` seconds. The lock file is deleted
when the writer is done, finished or not (a waiter that locked the deleted file notices and
locks the new one).

Disk errors (ENOSPC, a read-only folder, permissions, an --out that is a file) are OutputErrors
naming the file or folder and the system's reason, with the OSError kept as the cause.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from certgen.errors import OutputError
from certgen.support import jsonload
from certgen.support.jsonload import JSONValue

MANIFEST_NAME = "manifest.json"
PREVIOUS_NAME = ".manifest.previous.json"
"""What the last complete build listed, kept until this build's manifest is written."""
LOCK_NAME = ".certgen.lock"
TEMP_PREFIX = ".certgen-tmp."
"""Every temp file of the writer starts with it (a leftover is recognisably the writer's)."""
STAGING_NAME = ".certgen-new"
"""The hidden folder a build is written into until it is complete (module docstring)."""
RESERVED_NAMES = frozenset({STAGING_NAME, LOCK_NAME, PREVIOUS_NAME})
"""Names in the output folder the writer keeps for itself: never a document's path."""
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


def write_file(path: Path, data: bytes) -> None:
    """One file outside any build folder (a log a command was asked for), written atomically;
    a failure is an OutputError naming it, as every other output failure."""
    try:
        if path.is_dir():
            raise OutputError("cannot write: expected a file, got a folder", file=str(path))
        _atomic(path, data)
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise _disk_error(str(path), exc) from exc


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
                            f"another process is writing to this folder; gave up after "
                            f"{timeout:g} s (lock file {LOCK_NAME})", file=str(root),
                        ) from None
                    if not told:
                        # Any process can hold the lock (a build, a backup tool,
                        # flock(1)): never claim it is certgen.
                        sys.stderr.write(f"certgen: {root}: another process is writing here; "
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
    Use it as a context manager (or call `close`): leaving without `finish` drops what was
    staged and keeps the previous build.
    """

    def __init__(self, out_dir: Path | str, folder: str = "", *, manifest: str = MANIFEST_NAME,
                 lock_timeout: float = LOCK_TIMEOUT_S):
        self._lock_fd: int | None = None
        self._finished = False
        self._staged = False
        self.manifest_name = manifest
        self._written: dict[str, tuple[int, str]] = {}
        self._removed: list[str] = []
        base = Path(out_dir)
        _make_folder(base, str(out_dir))
        self.base = base.resolve()
        self.root = self._confine(self.base, folder) if folder else self.base
        _make_folder(self.root, str(self.root))
        if not self.root.resolve().is_relative_to(self.base):
            raise OutputError(f"{folder}: output folder leads outside {out_dir}")
        self.staging = self.root / STAGING_NAME
        """Where this build's files wait until `finish` (a caller may build a tree into it)."""
        try:
            self._lock_fd = _lock(self.root, lock_timeout)
            self._remove_leftover_temps()  # first: a folder they leave may then be emptied
            self._recover()
            self.staging.mkdir()
            self._staged = True
        except OSError as exc:
            self.close()
            if isinstance(exc, OutputError):
                raise
            raise _disk_error(str(self.root), exc) from exc

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _recover(self) -> None:
        """Finish the commit a killed writer began (its staged manifest is there), else drop
        what it staged: either way the folder holds one whole build afterwards."""
        staging = self.staging
        if staging.is_symlink() or (staging.exists() and not staging.is_dir()):
            staging.unlink()
        elif staging.is_dir():
            if not (staging / self.manifest_name).is_file():
                _remove_tree(staging)
                return
            try:
                self._commit()
            except OSError:
                # A commit that cannot be completed (a file now where a folder must go, say)
                # is dropped, said once, and never blocks every later build of this folder.
                _remove_tree(staging)
                raise

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
        the subfolders the manifests list (never a walk of a whole output tree a user may have
        pointed --out at), never through a symlink."""
        listed = set(_listed_paths(self.root / self.manifest_name))
        listed |= set(_listed_paths(self.root / PREVIOUS_NAME))
        folders = {PurePosixPath(p).parent for p in listed} | {PurePosixPath(".")}
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
        """Release the folder lock (finish does it); without `finish`, drop what was staged:
        the previous build stays as it was."""
        if self._staged and not self._finished:
            self._staged = False
            _remove_tree(self.staging)
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            # Deleted whether or not the build finished: a failed rebuild leaves the folder
            # exactly as it was (a waiter that locked the deleted file locks the new one).
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
        """Stage one file (written and fsynced); refuse a second write of the same path.
        Returns where the file will be once the build is finished."""
        return self.write_stream(relpath, (data,))

    def write_stream(self, relpath: str, chunks: Iterable[bytes]) -> Path:
        """Stage one file from its bytes in pieces (a file too large to hold whole in memory:
        a calibration listing a million grade changes), hashed as it is written; otherwise as
        `write`. An error while the pieces are made leaves no staged file behind."""
        if self._finished:
            raise OutputError(f"{relpath}: the manifest is written; no more outputs")
        if relpath in self._written or relpath == self.manifest_name:
            raise OutputError(f"{relpath}: two outputs with the same path")
        if relpath.split("/", 1)[0] in RESERVED_NAMES:
            raise OutputError(f"{relpath!r}: a name the writer keeps for itself")
        target = self._confine(self.root, relpath)
        if not self._staged:
            raise OutputError(f"{relpath}: this build stopped after an error; nothing more "
                              "is written")
        staged = self.staging.joinpath(*PurePosixPath(relpath).parts)
        digest = hashlib.sha256()
        try:
            staged.parent.mkdir(parents=True, exist_ok=True)
            size = _write_new(staged, chunks, digest)
        except OSError as exc:
            # Give the space back at once (a full disk): the previous build is untouched.
            self.close()
            raise _disk_error(relpath, exc) from exc
        self._written[relpath] = (size, digest.hexdigest())
        return target

    def written(self) -> dict[str, tuple[int, str]]:
        """{relative path: (size, sha256)} of the files written so far."""
        return dict(self._written)

    def removed(self) -> list[str]:
        """The stale outputs `finish` removed (relative paths, sorted)."""
        return sorted(self._removed)

    def finish(self, extra: dict[str, JSONValue] | None = None) -> Path:
        """Write the manifest (sorted files with size and SHA-256, then `extra`) into the
        staging folder, the commit point; then move the build into place, manifest last."""
        if self._finished:
            raise OutputError(f"{self.manifest_name}: already written")
        if not self._staged:
            raise OutputError(f"{self.manifest_name}: this build stopped after an error; "
                              "nothing more is written")
        manifest: dict[str, JSONValue] = {
            "files": [
                {"path": path, "size": size, "sha256": digest}
                for path, (size, digest) in sorted(self._written.items())
            ]
        }
        if extra:
            manifest.update(extra)
        data = (json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode()
        try:
            _fsync_tree(self.staging)
            _write_new(self.staging / self.manifest_name, (data,), hashlib.sha256())
            _fsync_dir(self.staging)
        except OSError as exc:
            self.close()
            raise _disk_error(self.manifest_name, exc) from exc
        # The commit point: from here the staging folder is the next build of this folder, to
        # be completed (by the next writer, if this commit fails or is killed), never dropped.
        self._staged = False
        try:
            self._commit()
        except OSError as exc:
            self.close()  # the lock; past the commit point, the staging folder is kept
            if isinstance(exc, OutputError):
                raise
            # The next writer on this folder completes the commit.
            raise _disk_error(str(self.root), exc) from exc
        self._finished = True
        self.close()
        return self.root / self.manifest_name

    def _commit(self) -> None:
        """Move a complete staging folder into place (module docstring); safe to repeat after
        a kill at any point: what is already moved is not staged any more."""
        staging = self.staging
        staged_files = _files_under(staging)
        nested = sorted((rel for rel in staged_files
                         if rel != self.manifest_name and PurePosixPath(rel).name == MANIFEST_NAME),
                        key=lambda rel: (-rel.count("/"), rel))
        # What each nested folder's live manifest lists, read before anything moves.
        nested_old = {rel: _listed_paths(self.root.joinpath(*PurePosixPath(rel).parts))
                      for rel in nested}
        written = set(_listed_paths(staging / self.manifest_name))
        previous = self._keep_previous()
        for rel in staged_files:
            if rel != self.manifest_name and rel not in nested_old:
                self._move_in(rel)
        for rel in nested:
            folder = PurePosixPath(rel).parent
            new = set(_listed_paths(staging.joinpath(*PurePosixPath(rel).parts)))
            self._remove_stale(set(nested_old[rel]) - new, prefix=f"{folder}/")
            self._move_in(rel)
        self._remove_stale(set(previous) - written - {self.manifest_name})
        self._move_in(self.manifest_name)
        with contextlib.suppress(FileNotFoundError):
            (self.root / PREVIOUS_NAME).unlink()
        _remove_tree(staging)
        _fsync_dir(self.root)

    def _move_in(self, relpath: str) -> None:
        """os.replace one staged file to its place, never through a symlink or out."""
        target = self._confine(self.root, relpath)
        parent = target.parent
        if parent != self.root:
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError) as exc:
                raise OutputError("cannot put the new file in place: a file stands where a "
                                  "folder must go", file=relpath) from exc
            if not parent.resolve().is_relative_to(self.root):
                raise OutputError(f"{relpath!r}: leads outside the output folder")
        try:
            os.replace(self.staging.joinpath(*PurePosixPath(relpath).parts), target)
        except (IsADirectoryError, NotADirectoryError, FileExistsError) as exc:
            raise OutputError("cannot put the new file in place: a file stands where a folder "
                              "must go, or a folder where a file must", file=relpath) from exc
        _fsync_dir(parent)

    def _remove_stale(self, stale: set[str], prefix: str = "") -> None:
        """Remove what a previous manifest listed and this build did not write (module doc);
        `prefix`: the nested folder whose manifest listed them."""
        for listed in sorted(stale):
            relpath = prefix + listed
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
        if stale:
            _fsync_dir(self.root)


def _make_folder(path: Path, shown: str) -> None:
    """Create an output folder (and its parents), or an OutputError saying why not."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise OutputError("expected an output folder, got a file", file=shown) from exc
    except NotADirectoryError as exc:
        raise OutputError("cannot create the output folder: a part of its path is a file",
                          file=shown) from exc
    except OSError as exc:
        raise _disk_error(shown, exc) from exc
    if not path.is_dir():  # a symlink to a file, say
        raise OutputError("expected an output folder, got a file", file=shown)


def _write_new(path: Path, chunks: Iterable[bytes], digest: hashlib._Hash) -> int:
    """Write a staged file from its pieces, hashing them, and fsync it; its size. A failed
    write (or a piece that fails to be made) leaves no partial file behind."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o644)
    size = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
                digest.update(chunk)
                size += len(chunk)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    return size


def _files_under(folder: Path) -> list[str]:
    """Every regular file under `folder`, as sorted relative POSIX paths (symlinks skipped)."""
    found = []
    for dirpath, _dirs, files in os.walk(folder):
        rel = Path(dirpath).relative_to(folder)
        for name in files:
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file():
                found.append((rel / name).as_posix())
    return sorted(found)


def _fsync_tree(folder: Path) -> None:
    """fsync every folder of a staged tree (its files were fsynced as they were written)."""
    for dirpath, _dirs, _files in os.walk(folder):
        _fsync_dir(Path(dirpath))


def _remove_tree(folder: Path) -> None:
    """Remove a staging folder, never following a symlink; errors ignored (best effort)."""
    if folder.is_symlink():
        with contextlib.suppress(OSError):
            folder.unlink()
        return
    shutil.rmtree(folder, ignore_errors=True)


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
