"""tests/slow_tests.txt names test functions that exist (a renamed test would silently move
back into `make test-fast`'s run, and a stale line would hide nothing), each once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SLOW_TESTS, is_slow, slow_tests

ROOT = Path(__file__).resolve().parent.parent


def test_every_slow_test_listed_exists_once() -> None:
    lines = [line.split("#", 1)[0].strip() for line in SLOW_TESTS.read_text("utf-8").splitlines()]
    listed = [line for line in lines if line]
    assert len(listed) == len(set(listed)) == len(slow_tests())
    missing = []
    for entry in listed:
        module, _, name = entry.partition("::")
        path = ROOT / module
        source = path.read_text("utf-8") if path.is_file() else ""
        if not source or (name and not re.search(
                rf"^\s*(async )?def {re.escape(name.split('::')[-1])}\(", source, re.M)):
            missing.append(entry)
    assert missing == []


def test_the_slow_marker_is_registered_and_given_to_the_listed_tests_only(
        request: pytest.FixtureRequest) -> None:
    assert any(m.startswith("slow:") for m in request.config.getini("markers"))
    slow = slow_tests()
    for item in request.session.items:
        marked = item.get_closest_marker("slow") is not None
        assert marked == is_slow(item.nodeid, slow), item.nodeid
