"""The writer owns the disk: atomic builds confined to one output folder, manifest last.

Every document is rendered in memory first; the writer puts each file into a fresh hidden
staging folder inside the output folder (`.certgen-new`, written and fsynced), never beside the
live files. Only when the build is complete (`finish`) does it write the new manifest into the
staging folder, and that file is the commit point: the staged files are then moved into place
with `os.replace` (same file system, each rename atomic), stale files are removed and the
manifest goes in last. Until the commit point the previous build stays exactly as it was, files
and manifest, whatever stops this one: a full disk, a render or signing error, kill -9. A
writer that stops early (an error, `close` without `finish`) removes its staging folder. The
output folder itself is never renamed or swapped: it may be a mount point, or hold the lab's
own files beside the build's.

Nothing is ever moved out of a staging folder this writer did not create: one a killed (or
failed) writer left is removed by the next writer on the folder, never completed, even when it
holds its manifest. A commit stopped between its renames leaves some new files beside old
ones; the folder then reads as interrupted, because the commit moves the live manifest aside
(to `.manifest.previous.json`) before the first rename and puts the new one in after the last:
throughout the window a mix can exist, the folder has no manifest.json. Every caller's cache
trusts a folder only through its manifest.json (builders/certificate.py: present, the same
inputs key, every listed file intact; the site, reports, calibration and registry never
reuse an output), so the next run builds every output again and its commit replaces each one. What the interrupted build may
already have moved in is not forgotten: before removing its staging folder, the next writer
adds every path its staged manifests list (the folder's own and the nested ones, below their
folders) to `.manifest.previous.json`, so the next commit removes those it does not write
(`interrupted` is then True). Only the list is read from the leftover folder, through its
descriptor; no file of it is ever published. A commit that fails part-way in this run (a file
where a folder must go) does the same at once: notes its list, removes its staging folder.

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

Writes that cannot be redirected: a local user who can write in the output folder may swap
`.certgen-new` for a symlink mid-build, or plant `.certgen.lock` or `.certgen-new` as one. The
writer therefore works through directory descriptors: the output folder is opened once, every
step below it with O_NOFOLLOW; the lock file is opened with O_NOFOLLOW (a link is refused, its
target never created) and must be a regular file; the staging folder is made with mkdir (mode
0700: it fails on anything already there), opened with O_NOFOLLOW, checked to be this user's and
held by descriptor. Staged files are created in it with O_EXCL | O_NOFOLLOW; the commit walks it
with os.fwalk and moves each regular file of this user with os.replace between the staging and
output descriptors, after checking that the name `.certgen-new` still leads to the folder held
(a swap is refused before anything is published). A leftover staging folder is removed
only when it is this user's, no one else can write to it, and it holds nothing but folders and
regular files of this user (what the writer makes): anything else is one OutputError line and
the folder is left as it is. It is emptied through its descriptor with unlinkat / rmdir at
each level, never following a link. A writer made inside another's staging folder (the site)
opens its folder from that writer's descriptor. A link where the writer expects its own folder
or file is one OutputError line.

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
import stat
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


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
"""A folder opened by the writer: never through a symlink (the last name of each step)."""
_ACTIVE: dict[Path, Writer] = {}
"""Writers whose staging folder is open, by its path: a writer created inside one (the site's
samples and reports) opens its folder from that writer's descriptor, never by the path."""


def _link_refused(shown: str, what: str) -> OutputError:
    return OutputError(f"is a symlink where certgen keeps its {what}; refusing to follow it "
                       "(a link certgen did not make: remove it)", file=shown)


def _lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _open_dirs(dir_fd: int, parts: Iterable[str], *, create: bool, shown: str) -> int:
    """A new descriptor of the folder `parts` below `dir_fd`, each step opened with
    O_NOFOLLOW (created when `create`): a symlink on the way is an OutputError, a file on the
    way a NotADirectoryError / FileExistsError the caller words."""
    fd = os.dup(dir_fd)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                sub = os.open(part, _DIR_OPEN, dir_fd=fd)
            except OSError as exc:
                st = _lstat_at(fd, part)
                if st is not None and stat.S_ISLNK(st.st_mode):
                    raise OutputError(f"{shown!r}: leads through a symlink; refusing to "
                                      "write through it") from exc
                raise
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_at(dir_fd: int, parts: tuple[str, ...], limit: int = 256 * 1024 * 1024) -> bytes | None:
    """The bytes of a regular file below `dir_fd` reached without following a symlink (a FIFO
    is never waited on), or None."""
    try:
        folder = _open_dirs(dir_fd, parts[:-1], create=False, shown="/".join(parts))
    except OSError:
        return None
    try:
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _O_CLOEXEC,
                     dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read(limit)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _listed_at(dir_fd: int, relpath: str) -> tuple[str, ...]:
    """The `files[].path` strings of the manifest at `relpath` below `dir_fd` (empty when
    absent, unreadable, malformed or not a regular file)."""
    data = _read_at(dir_fd, PurePosixPath(relpath).parts)
    if data is None:
        return ()
    try:
        return _paths_of(jsonload.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):
        return ()


def _lock(root_fd: int, root: Path, timeout: float) -> int:
    """An fd holding flock on root/LOCK_NAME; waits up to `timeout` s, saying so once. The
    lock file is opened with O_NOFOLLOW: a symlink there is refused, its target never
    created."""
    shown = str(root / LOCK_NAME)
    deadline = time.monotonic() + timeout
    told = False
    while True:
        try:
            fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                         | _O_CLOEXEC, 0o644, dir_fd=root_fd)
        except OSError as exc:
            st = _lstat_at(root_fd, LOCK_NAME)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise _link_refused(shown, "lock file") from exc
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OutputError("is not a regular file; certgen keeps its lock file there "
                                  "(remove it)", file=shown)
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
            # name, lock the current one instead.
            st = _lstat_at(root_fd, LOCK_NAME)
            if st is not None and os.path.samestat(os.fstat(fd), st):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _inside_active(path: Path) -> tuple[Writer, tuple[str, ...]] | None:
    """The open writer whose staging folder holds `path` (compared as written, never resolved
    through the disk), and the folders below it."""
    here = Path(os.path.abspath(path))
    for staging, writer in list(_ACTIVE.items()):
        if here.is_relative_to(staging) and writer._staging_fd is not None:
            return writer, here.relative_to(staging).parts
    return None


class Writer:
    """Writes the files of one output folder; see the module docstring.

    `Writer(out_dir, "ASD-2026-000123")` confines every path to `out_dir/ASD-2026-000123`.
    Use it as a context manager (or call `close`): leaving without `finish` drops what was
    staged and keeps the previous build.
    """

    base: Path
    root: Path
    staging: Path

    def __init__(self, out_dir: Path | str, folder: str = "", *, manifest: str = MANIFEST_NAME,
                 lock_timeout: float = LOCK_TIMEOUT_S):
        self._lock_fd: int | None = None
        self._root_fd: int | None = None
        self._staging_fd: int | None = None
        self._staging_id: tuple[int, int] | None = None
        self._finished = False
        self._staged = False
        self.interrupted = False
        """True when this writer found a commit a killed (or failed) writer had begun: the
        folder may hold some of that build's files beside older ones, and has no manifest
        until this writer's commit (module docstring)."""
        self.manifest_name = manifest
        self._written: dict[str, tuple[int, str]] = {}
        self._removed: list[str] = []
        base = Path(out_dir)
        parent = _inside_active(base)
        if parent is not None:
            # Inside another writer's staging folder (the site): opened from that writer's
            # descriptor, so a staging folder swapped for a link is never written through.
            outer, inner = parent
            self.base = outer.staging.joinpath(*inner)
            assert outer._staging_fd is not None
            base_fd = self._open_root(outer._staging_fd, inner, str(out_dir))
        else:
            _make_folder(base, str(out_dir))
            self.base = base.resolve()
            try:
                base_fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC)
            except OSError as exc:
                raise _disk_error(str(out_dir), exc) from exc
        try:
            self.root = self._confine(self.base, folder) if folder else self.base
            self._root_fd = self._open_root(base_fd, PurePosixPath(folder).parts if folder
                                            else (), str(self.root))
        finally:
            os.close(base_fd)
        self.staging = self.root / STAGING_NAME
        """Where this build's files wait until `finish` (a caller may build a tree into it)."""
        try:
            self._lock_fd = _lock(self._root_fd, self.root, lock_timeout)
            self._remove_leftover_temps()  # first: a folder they leave may then be emptied
            self._recover()
            self._make_staging()
        except OSError as exc:
            self.close()
            if isinstance(exc, OutputError):
                raise
            raise _disk_error(str(self.root), exc) from exc

    @staticmethod
    def _open_root(base_fd: int, parts: Iterable[str], shown: str) -> int:
        try:
            return _open_dirs(base_fd, parts, create=True, shown=shown)
        except (FileExistsError, NotADirectoryError) as exc:
            raise OutputError("expected an output folder, got a file", file=shown) from exc
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise _disk_error(shown, exc) from exc

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _make_staging(self) -> None:
        """Create this run's staging folder (O_EXCL by nature: mkdir fails on anything already
        there, a link included), private to this user, and hold it by descriptor."""
        assert self._root_fd is not None
        os.mkdir(STAGING_NAME, 0o700, dir_fd=self._root_fd)
        self._staging_fd = self._open_own_staging()
        self._staged = True
        _ACTIVE[self.staging] = self

    def _open_own_staging(self) -> int:
        """The staging folder by descriptor, refused unless it is a folder of this user that no
        one else can write to (a link, another user's folder, one open to others)."""
        assert self._root_fd is not None
        shown = str(self.staging)
        try:
            fd = os.open(STAGING_NAME, _DIR_OPEN, dir_fd=self._root_fd)
        except OSError as exc:
            st = _lstat_at(self._root_fd, STAGING_NAME)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise _link_refused(shown, "staging folder") from exc
            raise
        st = os.fstat(fd)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            os.close(fd)
            raise OutputError("is not certgen's own staging folder (another user's, or "
                              "writable by others); refusing to use it (remove it)", file=shown)
        self._staging_id = (st.st_dev, st.st_ino)
        return fd

    def _check_staging(self) -> None:
        """The staging folder's name still leads to the folder this writer holds: a swap (a
        link, another folder) during the build is refused before anything is published."""
        assert self._root_fd is not None
        st = _lstat_at(self._root_fd, STAGING_NAME)
        if st is None or (st.st_dev, st.st_ino) != self._staging_id:
            now = ("gone" if st is None else "a symlink" if stat.S_ISLNK(st.st_mode)
                   else "another folder or file")
            raise OutputError(f"the staging folder was replaced during the build (it is now "
                              f"{now}); nothing is published", file=str(self.staging))

    def _recover(self) -> None:
        """Remove the staging folder a killed (or failed) writer left, moving nothing out of
        it; first note what its commit may have moved in (`_note_interrupted`). Only a folder
        of this user that no one else can write to, holding only what the writer makes, is
        ever removed; anything else is refused in one line and left as it is."""
        assert self._root_fd is not None
        st = _lstat_at(self._root_fd, STAGING_NAME)
        if st is None:
            return
        if stat.S_ISLNK(st.st_mode):
            raise _link_refused(str(self.staging), "staging folder")
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(STAGING_NAME, dir_fd=self._root_fd)
            return
        self._staging_fd = self._open_own_staging()
        _check_leftover(self._staging_fd, self.staging)
        self.interrupted = self._note_interrupted()
        self._drop_staging()

    def _note_interrupted(self) -> bool:
        """When the staging folder this writer holds has its manifest (past the commit point)
        and the folder has none (moved aside before the first rename), the commit may have
        moved some files in: add every path its staged manifests list to the previous list,
        so the next commit removes what it does not write. True when it did. Only the lists are
        read, through the held descriptor."""
        root, staging = self._root_fd, self._staging_fd
        assert root is not None and staging is not None
        if not _is_file_at(staging, self.manifest_name) or _is_file_at(root, self.manifest_name):
            return False
        listed = {self.manifest_name, *_listed_at(staging, self.manifest_name)}
        for rel in _files_under(staging):
            path = PurePosixPath(rel)
            # A nested writer's own leftover staging folder published nothing: skipped.
            if (rel != self.manifest_name and path.name == MANIFEST_NAME
                    and not RESERVED_NAMES.intersection(path.parts)):
                listed.add(rel)
                listed.update(f"{path.parent}/{inner}" for inner in _listed_at(staging, rel))
        union = sorted(listed | set(_listed_at(root, PREVIOUS_NAME)))
        _atomic_at(root, PREVIOUS_NAME, (json.dumps(
            {"files": [{"path": p} for p in union]}, indent=2) + "\n").encode())
        return True

    def _keep_previous(self) -> tuple[str, ...]:
        """Move the old manifest aside (merged with a leftover one); return what both list."""
        root = self._root_fd
        assert root is not None
        previous = _listed_at(root, PREVIOUS_NAME)
        old = _lstat_at(root, self.manifest_name)
        if old is not None and stat.S_ISREG(old.st_mode):
            listed = _listed_at(root, self.manifest_name)
            if previous:
                union = sorted(set(previous) | set(listed))
                _atomic_at(root, PREVIOUS_NAME, (json.dumps(
                    {"files": [{"path": p} for p in union]}, indent=2) + "\n").encode())
                os.unlink(self.manifest_name, dir_fd=root)
                previous = tuple(union)
            else:
                os.replace(self.manifest_name, PREVIOUS_NAME, src_dir_fd=root, dst_dir_fd=root)
                previous = listed
            os.fsync(root)
        elif old is not None and stat.S_ISLNK(old.st_mode):
            os.unlink(self.manifest_name, dir_fd=root)
            os.fsync(root)
        return previous

    def _remove_leftover_temps(self) -> None:
        """Remove temp files a killed writer left: names with TEMP_PREFIX, in the folder and in
        the subfolders the manifests list (never a walk of a whole output tree a user may have
        pointed --out at), never through a symlink."""
        root = self._root_fd
        assert root is not None
        listed = set(_listed_at(root, self.manifest_name)) | set(_listed_at(root, PREVIOUS_NAME))
        folders = {PurePosixPath(p).parent for p in listed} | {PurePosixPath(".")}
        for rel in sorted(folders, key=str):
            try:
                if str(rel) != ".":
                    self._confine(self.root, f"{rel}/x")
                fd = _open_dirs(root, rel.parts if str(rel) != "." else (), create=False,
                                shown=str(rel))
            except OSError:
                continue
            try:
                for entry in sorted(os.scandir(fd), key=lambda e: e.name):
                    name = entry.name
                    if (name.startswith(TEMP_PREFIX) and name.endswith(".tmp")
                            and entry.is_file(follow_symlinks=False)):
                        os.unlink(name, dir_fd=fd)
            finally:
                os.close(fd)

    def _drop_staging(self) -> None:
        """Empty the staging folder this writer holds (through its descriptor) and remove its
        name only while the name still leads to it: a swapped-in link or folder is untouched."""
        fd, self._staging_fd = self._staging_fd, None
        _ACTIVE.pop(self.staging, None)
        if fd is None:
            return
        try:
            _clear(fd)
        finally:
            os.close(fd)
        root = self._root_fd
        st = _lstat_at(root, STAGING_NAME) if root is not None else None
        if root is not None and st is not None and (st.st_dev, st.st_ino) == self._staging_id:
            with contextlib.suppress(OSError):
                os.rmdir(STAGING_NAME, dir_fd=root)

    def close(self) -> None:
        """Release the folder lock (finish does it); without `finish`, drop what was staged:
        the previous build stays as it was."""
        if self._staged and not self._finished:
            self._staged = False
            self._drop_staging()
        if hasattr(self, "staging"):
            _ACTIVE.pop(self.staging, None)
        if self._staging_fd is not None:
            # Past the commit point and failed: the staged build is kept for the next writer.
            fd, self._staging_fd = self._staging_fd, None
            os.close(fd)
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            # Deleted whether or not the build finished: a failed rebuild leaves the folder
            # exactly as it was (a waiter that locked the deleted file locks the new one).
            st = _lstat_at(self._root_fd, LOCK_NAME) if self._root_fd is not None else None
            if st is not None and os.path.samestat(os.fstat(fd), st):
                with contextlib.suppress(OSError):
                    os.unlink(LOCK_NAME, dir_fd=self._root_fd)
            os.close(fd)
        if self._root_fd is not None:
            fd, self._root_fd = self._root_fd, None
            os.close(fd)

    def __del__(self) -> None:
        # A writer never closed (a test's, or one dropped by an exception) is closed when
        # collected; at interpreter exit the module's globals may already be gone.
        try:
            self.close()
        except Exception:
            pass

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
        # Early words only: every write and move goes through O_NOFOLLOW descriptors.
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
        if not self._staged or self._staging_fd is None:
            raise OutputError(f"{relpath}: this build stopped after an error; nothing more "
                              "is written")
        parts = PurePosixPath(relpath).parts
        digest = hashlib.sha256()
        try:
            folder = _open_dirs(self._staging_fd, parts[:-1], create=True, shown=relpath)
            try:
                size = _write_new(folder, parts[-1], chunks, digest)
            finally:
                os.close(folder)
        except OSError as exc:
            # Give the space back at once (a full disk): the previous build is untouched.
            self.close()
            if isinstance(exc, OutputError):
                raise
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
        if not self._staged or self._staging_fd is None:
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
            self._check_staging()
            _fsync_tree(self._staging_fd)
            _write_new(self._staging_fd, self.manifest_name, (data,), hashlib.sha256())
            os.fsync(self._staging_fd)
        except OSError as exc:
            self.close()
            if isinstance(exc, OutputError):
                raise
            raise _disk_error(self.manifest_name, exc) from exc
        # The commit point: the renames begin. A commit that fails part-way is never completed
        # later (nothing is moved out of a staging folder by another run): what it may have
        # moved in is noted for the next commit to remove, and its staging folder removed.
        self._staged = False
        try:
            self._commit()
        except OSError as exc:
            try:
                if self._staging_fd is not None:  # else the commit got as far as dropping it
                    self._note_interrupted()
                    self._drop_staging()
            except OSError:
                pass  # the staging folder is kept: the next writer notes it and removes it
            self.close()
            if isinstance(exc, OutputError):
                raise
            raise _disk_error(str(self.root), exc) from exc
        self._finished = True
        self.close()
        return self.root / self.manifest_name

    def _commit(self) -> None:
        """Move this writer's complete staging folder into place (module docstring). Only
        regular files of this user inside the staging folder this writer created and holds are
        moved, through descriptors; the folder's name is checked to still lead to it first."""
        staging = self._staging_fd
        assert staging is not None
        self._check_staging()
        staged_files = _files_under(staging)
        nested = sorted((rel for rel in staged_files
                         if rel != self.manifest_name and PurePosixPath(rel).name == MANIFEST_NAME),
                        key=lambda rel: (-rel.count("/"), rel))
        # What each nested folder's live manifest lists, read before anything moves.
        assert self._root_fd is not None
        nested_old = {rel: _listed_at(self._root_fd, rel) for rel in nested}
        previous = self._keep_previous()
        for rel in staged_files:
            if rel != self.manifest_name and rel not in nested_old:
                self._move_in(rel)
        for rel in nested:
            folder = PurePosixPath(rel).parent
            new = set(_listed_at(staging, rel))
            self._remove_stale(set(nested_old[rel]) - new, prefix=f"{folder}/")
            self._move_in(rel)
        # Never a file this commit publishes (a nested writer's files are in no list of
        # this folder's own manifest, but may be in the previous list: _note_interrupted).
        self._remove_stale(set(previous) - set(staged_files))
        self._move_in(self.manifest_name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(PREVIOUS_NAME, dir_fd=self._root_fd)
        self._drop_staging()
        os.fsync(self._root_fd)

    def _move_in(self, relpath: str) -> None:
        """os.replace one staged file to its place, from the staging folder's descriptor to
        the output folder's, never through a symlink or out."""
        assert self._root_fd is not None and self._staging_fd is not None
        self._confine(self.root, relpath)
        parts = PurePosixPath(relpath).parts
        try:
            target = _open_dirs(self._root_fd, parts[:-1], create=True, shown=relpath)
        except (FileExistsError, NotADirectoryError) as exc:
            raise OutputError("cannot put the new file in place: a file stands where a "
                              "folder must go", file=relpath) from exc
        try:
            source = _open_dirs(self._staging_fd, parts[:-1], create=False, shown=relpath)
            try:
                st = _lstat_at(source, parts[-1])
                if st is None or not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                    raise OutputError("is not a file this build staged; refusing to publish "
                                      "it", file=str(self.staging / relpath))
                os.replace(parts[-1], parts[-1], src_dir_fd=source, dst_dir_fd=target)
            finally:
                os.close(source)
            os.fsync(target)
        except (IsADirectoryError, NotADirectoryError, FileExistsError) as exc:
            raise OutputError("cannot put the new file in place: a file stands where a folder "
                              "must go, or a folder where a file must", file=relpath) from exc
        finally:
            os.close(target)

    def _remove_stale(self, stale: set[str], prefix: str = "") -> None:
        """Remove what a previous manifest listed and this build did not write (module doc);
        `prefix`: the nested folder whose manifest listed them."""
        root = self._root_fd
        assert root is not None
        for listed in sorted(stale):
            relpath = prefix + listed
            try:
                self._confine(self.root, relpath)
                parts = PurePosixPath(relpath).parts
                folder = _open_dirs(root, parts[:-1], create=False, shown=relpath)
            except OSError:
                continue  # a listed path leading out of the folder (or a symlink): never touched
            try:
                st = _lstat_at(folder, parts[-1])
                if st is None or not stat.S_ISREG(st.st_mode):
                    continue
                try:
                    os.unlink(parts[-1], dir_fd=folder)
                except OSError as exc:
                    raise _disk_error(relpath, exc) from exc
            finally:
                os.close(folder)
            self._removed.append(relpath)
            # Drop folders the removal left empty, up to (not including) the root.
            for depth in range(len(parts) - 1, 0, -1):
                try:
                    above = _open_dirs(root, parts[:depth - 1], create=False, shown=relpath)
                except OSError:
                    break
                try:
                    os.rmdir(parts[depth - 1], dir_fd=above)
                except OSError:
                    break
                finally:
                    os.close(above)
        if stale:
            os.fsync(root)


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


def _write_new(dir_fd: int, name: str, chunks: Iterable[bytes], digest: hashlib._Hash) -> int:
    """Create a staged file (O_EXCL, O_NOFOLLOW) in the folder `dir_fd` from its pieces,
    hashing them, and fsync it; its size. A failed write (or a piece that fails to be made)
    leaves no partial file behind."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC,
                 0o644, dir_fd=dir_fd)
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
            os.unlink(name, dir_fd=dir_fd)
        raise
    return size


def _atomic_at(dir_fd: int, name: str, data: bytes) -> None:
    """`name` in the folder `dir_fd` replaced atomically by `data` (a new temp file, fsync,
    os.replace between the same descriptor)."""
    tmp = f"{TEMP_PREFIX}{name[:80]}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp, dir_fd=dir_fd)
    try:
        _write_new(dir_fd, tmp, (data,), hashlib.sha256())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)


def _is_file_at(dir_fd: int, name: str) -> bool:
    st = _lstat_at(dir_fd, name)
    return st is not None and stat.S_ISREG(st.st_mode)


def _files_under(dir_fd: int) -> list[str]:
    """Every regular file of this user below the folder `dir_fd`, as sorted relative POSIX
    paths; the walk never follows a symlink (os.fwalk)."""
    found = []
    uid = os.geteuid()
    for dirpath, _dirs, files, fd in os.fwalk(".", dir_fd=dir_fd, follow_symlinks=False):
        rel = PurePosixPath(dirpath)
        for name in files:
            st = _lstat_at(fd, name)
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_uid == uid:
                found.append((rel / name).as_posix())
    return sorted(found)


def _fsync_tree(dir_fd: int) -> None:
    """fsync every folder of a staged tree (its files were fsynced as they were written)."""
    for _dirpath, _dirs, _files, fd in os.fwalk(".", dir_fd=dir_fd, follow_symlinks=False):
        with contextlib.suppress(OSError):
            os.fsync(fd)


def _check_leftover(dir_fd: int, shown: Path) -> None:
    """Refuse a leftover staging folder holding anything the writer never makes (a symlink,
    a FIFO, a device, another user's file or folder): it is then not removed, and says so in
    one line. The walk never follows a link (os.fwalk, follow_symlinks=False)."""
    uid = os.geteuid()
    for dirpath, dirs, files, fd in os.fwalk(".", dir_fd=dir_fd, follow_symlinks=False):
        for name in (*dirs, *files):
            st = _lstat_at(fd, name)
            if st is None:
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) or st.st_uid != uid:
                what = ("a symlink" if stat.S_ISLNK(st.st_mode) else
                        "another user's file" if st.st_uid != uid else "a special file")
                inner = (PurePosixPath(dirpath) / name).as_posix()
                raise OutputError(f"holds {inner!r}, {what} certgen never makes; refusing to "
                                  "remove it (remove the folder)", file=str(shown))


def _clear(dir_fd: int) -> None:
    """Remove everything inside the folder `dir_fd`, never following a symlink (a link is
    removed as a name); errors ignored (best effort)."""
    try:
        entries = list(os.scandir(dir_fd))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                sub = os.open(entry.name, _DIR_OPEN, dir_fd=dir_fd)
                try:
                    _clear(sub)
                finally:
                    os.close(sub)
                os.rmdir(entry.name, dir_fd=dir_fd)
            else:
                os.unlink(entry.name, dir_fd=dir_fd)
        except OSError:
            continue


def _paths_of(data: JSONValue) -> tuple[str, ...]:
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
