"""Certificate builds on a Dask cluster (`certgen build … --scheduler ADDRESS`).

The same per-bundle build (certgen.builders.certificate.build_one) runs as one task per bundle on
dask.distributed workers; results come back in the given order with the same failure reporting
as the local process pool (a CertgenError of one bundle is returned in its place, anything else
propagates). docs/cluster.md shows how to start a scheduler and workers.

What the cluster must share with this machine (checked or carried here, documented there):
- paths: bundles, the output folder and an SQLite fleet are passed as absolute paths, so every
  worker must see them at the same place (a shared file system); a PostgreSQL fleet is a URL;
- the build date: SOURCE_DATE_EPOCH of this process is carried to each task, so a worker's own
  environment cannot change a document's date;
- one thread per worker process: PDF rendering sets process-wide environment variables
  (SOURCE_DATE_EPOCH, FONTCONFIG_FILE), so a worker with more threads is refused up front;
- the same certgen on every worker (its version is checked against this one).
The writer's guarantees hold across machines because each bundle is written by one task into its
own folder (temp file, fsync, rename, manifest last, folder lock), as in a local build.

dask.distributed is the optional extra `dask`; it is imported only here, only with --scheduler.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import struct
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from certgen import __version__
from certgen.builders.certificate import build_one
from certgen.errors import ClusterError
from certgen.fleet import is_server_url

if TYPE_CHECKING:
    from certgen.builders.certificate import BuildOptions, BuildResult


CONNECT_TIMEOUT = 30.0
"""Seconds to wait for the scheduler to connect and greet (docs/cluster.md)."""

_ADDRESS_EXPECTED = "expected a Dask scheduler address tcp://HOST:PORT"


def scheduler_address(scheduler: str) -> tuple[str, int]:
    """(host, port) of --scheduler: `tcp://HOST:PORT` or `HOST:PORT`, or a ClusterError.

    Only plain TCP: a `tls://` scheduler needs certificates certgen does not take, and
    `inproc://`, `ucx://` or `ws://` are not a cluster this build can share files with."""
    scheme, sep, rest = scheduler.partition("://")
    if not sep:
        scheme, rest = "tcp", scheduler
    shown = repr(scheduler if len(scheduler) <= 100 else scheduler[:99] + "…")
    if scheme.lower() == "tls":
        raise ClusterError(f"{_ADDRESS_EXPECTED}, got {shown}: a TLS scheduler needs a "
                           "security configuration certgen does not take", field="--scheduler")
    if scheme.lower() != "tcp":
        raise ClusterError(f"{_ADDRESS_EXPECTED}, got {shown}", field="--scheduler")
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or not port_text.isascii() or not port_text.isdigit() \
            or not 0 < int(port_text) < 65536 or any(c in host for c in "/@?# "):
        raise ClusterError(f"{_ADDRESS_EXPECTED}, got {shown}", field="--scheduler")
    return host, int(port_text)


def _host_part(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def probe_scheduler(scheduler: str, host: str, port: int,
                    timeout: float | None = None) -> None:
    """Refuse, within `timeout` (CONNECT_TIMEOUT) seconds, a scheduler that cannot be reached
    or never speaks. distributed's Client waits for the scheduler's greeting without any
    timeout, so a listener that accepts and stays silent hung the build; a Dask scheduler
    sends its greeting as soon as it accepts, and that is what is waited for here."""
    limit = CONNECT_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + limit
    try:
        with socket.create_connection((host, port), timeout=limit) as conn:
            _check_greeting(conn, scheduler, deadline)
    except TimeoutError:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: no answer within "
                           f"{limit:g} s (the connect timeout)") from None
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: "
                           f"{exc.strerror or exc}") from None


MAX_GREETING_BYTES = 64 * 1024
"""The most a scheduler's greeting may declare (a Dask handshake is a few hundred bytes):
distributed allocates whatever the first eight bytes say, so a listener sending anything else
made it ask for exabytes (MemoryError)."""


def _read_exactly(conn: socket.socket, size: int, scheduler: str, deadline: float) -> bytes:
    """`size` bytes from `conn` by the deadline (TimeoutError past it), or a ClusterError."""
    data = bytearray()
    while len(data) < size:
        conn.settimeout(max(0.001, deadline - time.monotonic()))
        piece = conn.recv(min(size - len(data), 65536))
        if not piece:
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: it closed the "
                               "connection " + ("without a word" if not data and size == 8
                                                else "in the middle of its greeting"))
        data += piece
    return bytes(data)


def _check_greeting(conn: socket.socket, scheduler: str, deadline: float) -> None:
    """Read the scheduler's first message as distributed's TCP comm frames it (8 bytes: the
    size of the frame table and small frames; the table: a count, then each frame's size),
    bounded by MAX_GREETING_BYTES; anything else is not a Dask scheduler."""
    def not_dask(why: str) -> ClusterError:
        return ClusterError(f"the listener at {scheduler} is not a Dask scheduler: {why} (a "
                            f"Dask greeting declares at most {MAX_GREETING_BYTES} bytes)")

    (size,) = struct.unpack("Q", _read_exactly(conn, 8, scheduler, deadline))
    if not 8 <= size <= MAX_GREETING_BYTES:
        raise not_dask(f"its first message declares {size} bytes")
    table = _read_exactly(conn, size, scheduler, deadline)
    (count,) = struct.unpack_from("Q", table)
    if not 0 < count <= size // 8 - 1:
        raise not_dask(f"its first message declares {count} frames in {size} bytes")
    frames = struct.unpack_from(f"{count}Q", table, 8)
    if sum(frames) > MAX_GREETING_BYTES:
        raise not_dask(f"its first message declares frames of {sum(frames)} bytes")


def _absolute(location: str | None) -> str | None:
    if location is None:
        return None

    return location if is_server_url(location) else os.path.abspath(location)


def _worker_version() -> str:
    return __version__


def _build_task(bundle: str, out_dir: str, kwargs: BuildOptions,
                epoch: str | None) -> BuildResult | Exception:
    """One bundle on a worker, with this client's SOURCE_DATE_EPOCH (one thread per worker)."""
    if epoch is None:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
    else:
        os.environ["SOURCE_DATE_EPOCH"] = epoch
    return build_one(bundle, out_dir, kwargs)


def build_on_cluster(
    bundles: Sequence[str],
    out_dir: str,
    kwargs: BuildOptions,
    scheduler: str,
    *,
    order: Sequence[int],
    progress: Callable[[int], object] | None = None,
) -> dict[int, BuildResult | Exception]:
    """Build bundles[i] for i in `order` (submission order) on the cluster; {i: result}."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ClusterError("--scheduler needs dask.distributed; install certgen[dask]") from None
    host, port = scheduler_address(scheduler)
    probe_scheduler(scheduler, host, port)
    try:
        # distributed leaves Client and as_completed unannotated.
        client = Client(f"tcp://{_host_part(host)}:{port}",  # type: ignore[no-untyped-call]
                        timeout=f"{CONNECT_TIMEOUT:g}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    except MemoryError:
        # The probe's listener greeted well; the one distributed met declared a size no
        # Dask message has (a listener that answers each connection differently).
        raise ClusterError(f"the listener at {scheduler} is not a Dask scheduler: its "
                           "message declares a size no memory holds") from None
    with client:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        if not workers:
            raise ClusterError(f"the Dask scheduler at {scheduler} has no workers")
        threaded = sorted(w for w, info in workers.items() if int(info.get("nthreads", 1)) != 1)
        if threaded:
            raise ClusterError(
                f"Dask workers must run one thread each (dask worker --nthreads 1): "
                f"{', '.join(threaded)} {'has' if len(threaded) == 1 else 'have'} more")
        versions = client.run(_worker_version)
        other = sorted(w for w, v in versions.items() if v != __version__)
        if other:
            raise ClusterError(f"workers {', '.join(other)} run another certgen version "
                               f"(this one is {__version__})")
        remote: BuildOptions = {**kwargs, "fleet": _absolute(kwargs.get("fleet"))}
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        out_abs = os.path.abspath(out_dir)
        futures = {
            client.submit(_build_task, os.path.abspath(bundles[i]), out_abs, remote, epoch,
                          pure=False, key=f"certgen-build-{i}-{os.getpid()}-{id(bundles)}"): i
            for i in order
        }
        results: dict[int, BuildResult | Exception] = {}
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            i = futures[future]
            results[i] = _as_local(future.result(), bundles[i], out_dir)
            if progress is not None:
                progress(1)
    return results


def _as_local(result: BuildResult | Exception, bundle: str,
              out_dir: str) -> BuildResult | Exception:
    """A worker's BuildResult with the bundle and folder as a local build names them."""
    if isinstance(result, Exception):
        return result
    # As build_bundle names it here: the writer's resolved folder, or the cached folder as given.
    base = Path(out_dir).resolve() if result.rebuilt else Path(out_dir)
    return dataclasses.replace(result, bundle=str(bundle),
                               folder=str(base / result.certificate_id))
