"""A pytest plugin that writes each test's CPU seconds (this process and the children it
waited for, such as `certgen` subprocesses and pool workers) and wall seconds, setup and
teardown included, one JSON-lines file per process (`[nodeid, cpu, wall]` a line, written as
each test ends): `pytest -p cputime --cpu-times DIR`.

Wall time on a shared machine measures the load; CPU time measures the test (docs/testing.md
sums these files into the figures it quotes).
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_TIMES: dict[str, tuple[float, float]] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-times", default=None, metavar="DIR",
                     help="write each test's CPU and wall seconds into DIR (one file a process)")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, wall = _cpu(), time.perf_counter()
    yield
    _TIMES[item.nodeid] = (round(_cpu() - cpu, 3), round(time.perf_counter() - wall, 3))
    folder = item.config.getoption("--cpu-times")
    if folder:  # a line per test as it ends: a run stopped early still says what it measured
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        name = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with (out / f"{name}-{os.getpid()}.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps([item.nodeid, *_TIMES[item.nodeid]]) + "\n")
