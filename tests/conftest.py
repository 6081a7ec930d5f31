"""Shared test settings.

Once per session, whatever the number of xdist workers: the sample site (`sample_site`), GOLD's
own build (`gold_build`) and the PostgreSQL server (`postgres_admin`). The first worker to ask
builds or starts it under a file lock in the session's base temporary folder, which the workers
share; the others wait and reuse it; the controller stops the server when the session ends
(pytest_sessionfinish).

`-m "not slow"` (`make test-fast`) leaves out the tests listed in tests/slow_tests.txt, which
are marked `slow` here; `make test` and CI run them all.

Hypothesis: no per-example deadline. The property tests check behaviour, never speed (speed is
measured in bench/), and on a loaded 2-core CI machine running the suite in parallel a slow
example is load, not a defect. `HYPOTHESIS_PROFILE=long` draws ten times more examples; `HYPOTHESIS_PROFILE=fuzz` (`make fuzz`)
gives tests/test_fuzz.py 3000 examples per target.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from rendercache import RenderCache
    from textcache import TextCache

settings.register_profile("default", deadline=None)
settings.register_profile("long", deadline=None, max_examples=1000)
# `make fuzz`: tests/test_fuzz.py at its long budget (the suite runs it at 20 per target).
settings.register_profile("fuzz", deadline=None, max_examples=3000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# --- the slow tests ---------------------------------------------------------------------------

SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")
"""The tests `make test-fast` leaves out: one `tests/module.py::function` (or a whole
`tests/module.py`) a line."""


def slow_tests() -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in SLOW_TESTS.read_text("utf-8").splitlines())
    return {line for line in lines if line}


SLOW_FIXTURES = {
    "sample_site": "builds the whole sample site (every sample certificate, report and "
                   "explainer PDF in three languages)",
    "sample_site_opens": "the sample site, built with an audit hook",
}
"""Fixtures only slow tests may use: one not-slow test asking for one would pull its whole cost
into `make test-fast` (tests/test_slow_tests.py checks it)."""


def is_slow(nodeid: str, slow: set[str]) -> bool:
    """A listed function (with every parameter), or any test of a listed module."""
    return nodeid.split("[", 1)[0] in slow or nodeid.split("::", 1)[0] in slow


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = slow_tests()
    for item in items:
        if is_slow(item.nodeid, slow):
            item.add_marker(pytest.mark.slow)


# --- made once per session, shared by the xdist workers ---------------------------------------


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's folder every xdist worker sees: pytest's base temporary folder, whose
    subfolders are the workers' own (without xdist, this process's own base folder)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str,
              make: Callable[[Path], None]) -> Path:
    """shared/<name>, filled by make() in the first worker that asks (under a file lock); the
    others wait for it and get the same folder. A make() that failed half-way is made again
    by the next worker that asks (and fails its tests too, saying why)."""
    from filelock import FileLock

    root = shared_folder(tmp_path_factory)
    out, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            make(out)
            done.touch()
    return out


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((p.relative_to(folder).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*"))


def _opens_log(site: Path) -> Path:
    """Beside the shared site (never in it): what `certgen site` opened while building it."""
    return site.with_name(f"{site.name}.opened.json")


@pytest.fixture(scope="session")
def sample_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The sample site (`certgen site`: index, explainers, sample certificates, reports,
    registry), undated (no SOURCE_DATE_EPOCH), built once per session for every worker.
    Read-only: a test that changes a file works on a copy; at the end of each worker's session
    the folder is checked to be as it was built (same files, sizes and modification times).

    Built by `certgen site --out` in a fresh interpreter with an audit hook
    (bundlekit.opened_during_cli), so the read-once test reads what this one build opened
    (`sample_site_opens`) instead of building the site a second time."""

    def build(out: Path) -> None:
        import json

        from bundlekit import opened_during_cli

        with pytest.MonkeyPatch.context() as mp:  # undated, whatever ran before in this worker
            mp.delenv("SOURCE_DATE_EPOCH", raising=False)
            log = _opens_log(out)
            # its renders fill the run's render cache, so a test that renders a sample
            # again (the site-rebuild test) gets them from there
            opened = opened_during_cli(["site", "--out", str(out)], log,
                                       render_cache=render_cache_folder(tmp_path_factory))
        log.write_text(json.dumps(opened), encoding="utf-8")

    site = made_once(tmp_path_factory, "sample-site", build)
    built = _listing(site)
    yield site
    assert _listing(site) == built, "a test changed the shared sample site (copy it first)"


@pytest.fixture(scope="session")
def sample_site_opens(sample_site: Path) -> list[str]:
    """Every path `open()`ed while `certgen site` built `sample_site`, in order (as
    bundlekit.opened_during_cli returns them)."""
    import json

    opened: list[str] = json.loads(_opens_log(sample_site).read_text(encoding="utf-8"))
    return opened


@dataclass(frozen=True)
class CliBuild:
    """One `certgen build` run: the certificate's output folder, the exit code, stderr."""

    folder: Path
    code: int
    stderr: str


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="session")
def gold_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliBuild]:
    """`certgen build examples/gold-rx7800xt --out DIR --lab examples/lab.yaml --jobs 1`, run
    in-process as the console script runs it (every language, undated, no fleet), once per
    session for every worker; its exit code and stderr are kept beside DIR. Shared by the
    tests that read GOLD's own certificates (a build renders three PDFs); read-only, checked
    at the end of each worker's session as `sample_site` is."""
    import contextlib
    import io
    import json

    def build(out: Path) -> None:
        from certgen.cli import main

        err = io.StringIO()
        with pytest.MonkeyPatch.context() as mp:
            for name in ("SOURCE_DATE_EPOCH", "CERTGEN_FLEET", "CERTGEN_SCHEDULER"):
                mp.delenv(name, raising=False)  # undated, no fleet, here: whatever ran before
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                try:  # as bundlekit.run_cli reads the outcome
                    result = main(["build", str(EXAMPLES / "gold-rx7800xt"), "--out", str(out),
                                   "--lab", str(EXAMPLES / "lab.yaml"), "--jobs", "1"])
                    code = result if isinstance(result, int) else 0
                except SystemExit as exc:
                    code = int(exc.code or 0)
        outcome = {"code": code, "stderr": err.getvalue()}
        out.with_name(f"{out.name}.cli.json").write_text(json.dumps(outcome), encoding="utf-8")

    out = made_once(tmp_path_factory, "gold-build", build)
    result = json.loads(out.with_name(f"{out.name}.cli.json").read_text(encoding="utf-8"))
    built = _listing(out)
    yield CliBuild(out / "SAMPLE-GOLD-0002", result["code"], result["stderr"])
    assert _listing(out) == built, "a test changed the shared GOLD build (copy it first)"


SIGNED_AT = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)
"""When `signed_gold` was signed (a given signing time: rebuilds are byte-identical)."""


@pytest.fixture(scope="session")
def signed_gold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """GOLD built in English with the sample lab, signed at SIGNED_AT by this process's test
    PKI (pkikit.make_pki(), whose keys each process makes for itself: so once per xdist
    worker, not per session): its output folder, alone in its parent. The signing and the
    attack tests share it; read-only, checked at the end as `sample_site` is."""
    from pkikit import PASSPHRASE, make_pki

    from certgen.builders.certificate import build_bundle
    from certgen.inputs.lab import load_lab
    from certgen.render.sign import signing_key

    key = signing_key(make_pki().lab_p12, PASSPHRASE, source="lab.p12").at(SIGNED_AT, given=True)
    out = tmp_path_factory.mktemp("signed-gold")
    folder = Path(build_bundle(EXAMPLES / "gold-rx7800xt", out, languages=["en"],
                               lab=load_lab(EXAMPLES / "lab.yaml"), sign=key).folder)
    built = _listing(out)
    yield folder
    assert _listing(out) == built, "a test changed the shared signed GOLD build (copy it first)"


# --- each distinct render once per run ---------------------------------------------------------


def render_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the run's renders are kept: in the session's folder every xdist worker shares."""
    folder = shared_folder(tmp_path_factory) / "render-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session", autouse=True)
def render_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RenderCache]:
    """The run's render cache (tests/rendercache.py), in the folder every xdist worker shares,
    in place of `html_to_pdf` in certgen's renderers for the whole session (autouse, so that
    it is in place before any other session fixture renders: GOLD's shared build)."""
    import multiprocessing

    from rendercache import RenderCache, restore

    cache = RenderCache(render_cache_folder(tmp_path_factory))
    replaced = cache.install()
    if cache.enabled and "forkserver" in multiprocessing.get_all_start_methods():
        _start_pool_server(cache.folder)
    yield cache
    restore(replaced)


def _start_pool_server(folder: Path) -> None:
    """Start multiprocessing's fork server now, with tests/poolcache.py preloaded, so that
    certgen's pool workers (forked from it) render through the run's cache. Python 3.11's
    fork server ignores the sys.path it is given: tests/ reaches it through PYTHONPATH, for
    its start only (the workers it forks inherit the server's environment)."""
    import multiprocessing
    from multiprocessing import forkserver

    from rendercache import POOL_FOLDER

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(POOL_FOLDER, str(folder))
        mp.setenv("PYTHONPATH", os.pathsep.join(
            [str(Path(__file__).resolve().parent), *filter(None, [os.environ.get("PYTHONPATH")])]))
        multiprocessing.get_context("forkserver").set_forkserver_preload(["poolcache"])
        forkserver.ensure_running()


@pytest.fixture(autouse=True)
def _each_render_once(request: pytest.FixtureRequest, render_cache: RenderCache) -> Iterator[None]:
    """Every test renders through the cache, but a test marked `render_uncached` (a
    determinism test, whose second render is the point) renders for real."""
    from rendercache import uncached_switch

    if request.node.get_closest_marker("render_uncached") is None:
        yield
        return
    enabled = render_cache.enabled
    switch = uncached_switch(render_cache.folder)
    render_cache.enabled = False
    switch.touch()  # and its pool workers' (tests/poolcache.py)
    yield
    render_cache.enabled = enabled
    switch.unlink(missing_ok=True)


@pytest.fixture
def subprocess_render_cache(render_cache: RenderCache) -> Path | None:
    """The render cache's folder for a command the test starts in a subprocess (with
    rendercache.prelude), or None when this test renders for real (`render_uncached`)."""
    return render_cache.for_subprocess()


@pytest.fixture(scope="session", autouse=True)
def text_cache() -> Iterator[TextCache]:
    """pypdf's text extraction of each distinct page once per worker (tests/textcache.py), in
    place of `PageObject.extract_text` for the whole session: `certgen verify` reads the same
    pages of many differently signed files."""
    from textcache import TextCache, restore

    cache = TextCache()
    replaced = cache.install()
    yield cache
    restore(replaced)


@pytest.fixture(scope="session", autouse=True)
def _objstm_index() -> Iterator[None]:
    """pyHanko reads each object stream's header once instead of once per object
    (tests/objstmcache.py): the same objects and errors, without re-reading ~700 pairs for each
    of a certificate's objects in every revision a timestamped file's validation walks."""
    import objstmcache

    if not objstmcache.enabled():
        yield
        return
    replaced = objstmcache.install()
    yield
    objstmcache.restore(replaced)


# --- the fleet on both backends ---------------------------------------------------------------

_SERVER = "postgresql-server.json"
"""In the shared folder: the session's PostgreSQL server (pgserver.Server), once started."""


@pytest.fixture(scope="session")
def postgres_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The session's PostgreSQL server (tests/pgserver.py), its admin URL: one for all the
    workers, each test with a database of its own in it (fleet_location, fresh_database).
    Started by the first worker that needs it; stopped by the controller at the session's end
    (pytest_sessionfinish below), once every worker is done with it."""
    from pgserver import Server, postgres_server, start_server

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        with postgres_server() as url:
            yield url
        return
    from filelock import FileLock

    root = shared_folder(tmp_path_factory)
    state = root / _SERVER
    with FileLock(str(state) + ".lock"):
        if not state.exists():
            state.write_text(start_server().as_json(), encoding="utf-8")
        server = Server.from_json(state.read_text(encoding="utf-8"))
    yield server.url


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller of an xdist run (its workers have all finished) stops the shared server."""
    if not session.config.pluginmanager.has_plugin("dsession"):  # not an xdist controller
        return
    # The controller's base temporary folder is the workers' shared one (xdist gives each
    # worker a subfolder of it, from this same factory).
    state = session.config._tmp_path_factory.getbasetemp() / _SERVER
    if state.exists():
        from pgserver import Server, stop_server

        stop_server(Server.from_json(state.read_text(encoding="utf-8")))
        state.unlink()


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail (instead of hanging the suite) if the test blocks for 20 s: a FIFO or a silent
    listener read without a limit (the hostile-input tests)."""
    import signal

    def fire(signum: int, frame: object) -> None:
        raise TimeoutError("blocked: a hang")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(params=["sqlite", "postgresql"])
def fleet_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty fleet on each backend: an SQLite file path, or a PostgreSQL database URL."""
    if request.param == "sqlite":
        yield str(tmp_path / "fleet.sqlite")
        return
    from pgserver import drop_database, fresh_database

    admin = request.getfixturevalue("postgres_admin")
    url = fresh_database(admin)
    yield url
    drop_database(admin, url)
