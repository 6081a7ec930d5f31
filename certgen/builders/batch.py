"""Several bundles at once: in this process, in a process pool or on a Dask cluster.

`build_many` is what `certgen build B1 B2 …` and `certgen.api.build_certificates` run: the same
one-bundle build (certgen.builders.certificate.build_one) for each bundle, the largest first,
results in the given order, an error of one bundle reported in its place. The cluster's side
is certgen.builders.cluster; both import the one-bundle build, neither imports this module.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import stat
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import forkserver
from pathlib import Path
from typing import TYPE_CHECKING, Any

from certgen.builders.certificate import (
    BuildOptions,
    BuildResult,
    DocumentSteps,
    build_bundle,
    build_one,
    ready_to_sign,
    resolve_verify_base,
)
from certgen.builders.cluster import build_on_cluster
from certgen.errors import RenderError
from certgen.inputs.bundle import read_card

if TYPE_CHECKING:
    from certgen.inputs.lab import LabProfile
    from certgen.render.sign import SigningKey


def build_many(
    bundles: Sequence[str],
    out_dir: str,
    *,
    languages: Sequence[str] | None,
    fleet: str | None,
    draft: bool,
    verify_base: str | None,
    jobs: int,
    progress: Callable[[int], object] | None = None,
    lab: LabProfile | None = None,
    scheduler: str | None = None,
    sign: SigningKey | None = None,
    steps: DocumentSteps | None = None,
) -> list[tuple[str, BuildResult | Exception]]:
    """Build several bundles (a process pool when jobs > 1, a Dask cluster when `scheduler` is
    given: certgen.builders.cluster); results in the given order.

    An error of one bundle does not stop the others: every bundle is attempted, and the error
    is returned in its place, the same error (class and fields) from a worker process as from
    this one. That includes an unexpected exception (a bug): the caller reports every bundle,
    then re-raises it with its traceback.
    `progress(n)` is called as bundles finish (the CLI's progress bar); `steps` hears of each
    document of a single bundle built in this process (a callable does not cross to a worker).
    """

    # The lab profile and the verification base are the same for every bundle: refused once.
    resolve_verify_base(verify_base, lab, draft=draft, signed=sign is not None)
    sign = ready_to_sign(sign, lab)  # one signing time for every bundle of the build
    kwargs = BuildOptions(languages=languages, fleet=fleet, draft=draft, verify_base=verify_base,
                          lab=lab, sign=sign)
    results: dict[int, BuildResult | Exception] = {}
    if scheduler:
        order = sorted(range(len(bundles)), key=lambda i: (-bundle_cost(bundles[i]), i))
        results = build_on_cluster(bundles, out_dir, kwargs, scheduler, order=order,
                                   progress=progress)
    elif jobs <= 1 or len(bundles) <= 1:
        for i, bundle in enumerate(bundles):
            try:
                results[i] = build_bundle(bundle, out_dir, **kwargs,
                                          steps=steps if len(bundles) == 1 else None)
            except Exception as exc:
                results[i] = exc
            if progress is not None:
                progress(1)
    else:
        # Never plain fork: a parent that has used polars (or any library with a thread pool)
        # can deadlock its forked children. forkserver forks workers from a clean, single-
        # threaded server process; spawn where it does not exist.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        # Largest bundles first (longest-processing-time order): the last bundle to finish is
        # then a small one, so no worker idles long at the end while another still works.
        order = sorted(range(len(bundles)), key=lambda i: (-bundle_cost(bundles[i]), i))
        with ProcessPoolExecutor(max_workers=min(jobs, len(bundles)), mp_context=context,
                                 initializer=end_with_parent) as pool:
            futures = {pool.submit(build_one, bundles[i], out_dir, kwargs): i for i in order}
            for future in as_completed(futures):
                try:
                    results[futures[future]] = future.result()
                except Exception as exc:
                    results[futures[future]] = exc
                if progress is not None:
                    progress(1)
    return [(bundles[i], results[i]) for i in range(len(bundles))]


def bundle_cost(bundle: str | os.PathLike[str]) -> int:
    """A bundle's expected build cost for scheduling: the bytes of its files (the captures
    dominate reading, and more runs mean more pages); 0 when it cannot be read (its build
    reports the error)."""
    path = Path(bundle)
    try:
        if path.is_dir():
            # lstat only, links never followed: a link out or a loop costs nothing here.
            total = 0
            for folder, _dirs, files in os.walk(path):
                for name in files:
                    info = os.lstat(os.path.join(folder, name))
                    total += info.st_size if stat.S_ISREG(info.st_mode) else 0
            return total
        return path.stat().st_size
    except OSError:
        return 0


def end_with_parent() -> None:
    """Pool worker initializer: on Linux, ask the kernel to end this worker when its parent
    dies (prctl PR_SET_PDEATHSIG), so killing a build never leaves workers running.

    The parent of a forkserver worker is the fork server, which ends when the build process
    that started it is gone: it waits for EOF on its "alive" pipe. Every forkserver child is
    handed a copy of that pipe's write end, so while workers live the server would never see
    EOF and they would never be signalled: the worker closes its copy here (it starts no
    processes of its own). Elsewhere this does nothing.
    """

    if not sys.platform.startswith("linux"):
        return

    pr_set_pdeathsig = 1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return

    server: Any = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if server is not None and isinstance(alive, int):
        try:
            os.close(alive)
        except OSError:
            pass
        server._forkserver_alive_fd = None
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def _certificate_id(bundle: Path) -> str:
    """The certificate id of a bundle from its card.yaml alone (no capture is read)."""
    return str(read_card(bundle).certificate.id)


def check_unique_ids(bundles: Sequence[str]) -> None:
    """Refuse two bundles that would write the same output folder (same certificate id).

    Reads each card.yaml (and nothing else); one bundle has nothing to clash with.
    """
    if len(bundles) < 2:
        return
    seen: dict[str, str] = {}
    for bundle in bundles:
        try:
            cert_id = _certificate_id(Path(bundle))
        except Exception:
            continue  # the bundle's own build reports its error
        if cert_id in seen:
            raise RenderError(
                f"{bundle}: certificate id {cert_id!r} is also the id of {seen[cert_id]}; "
                "two bundles cannot write the same output folder"
            )
        seen[cert_id] = bundle
