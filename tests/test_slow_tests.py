"""tests/slow_tests.txt names test functions that exist (a renamed test would silently move
back into `make test-fast`'s run, and a stale line would hide nothing), each once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SLOW_FIXTURES, SLOW_TESTS, is_slow, slow_tests

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


def leaks(items: list[pytest.Item]) -> list[str]:
    """Each test not marked slow that uses (directly or through another fixture) a fixture
    of SLOW_FIXTURES, as 'nodeid: fixture'."""
    return [f"{item.nodeid}: {name}" for item in items if item.get_closest_marker("slow") is None
            for name in sorted(SLOW_FIXTURES) if name in getattr(item, "fixturenames", ())]


def test_no_slow_fixture_leaks_into_the_fast_run(request: pytest.FixtureRequest) -> None:
    """`make test-fast` stays fast: the tests it runs build no sample site."""
    assert leaks(request.session.items) == []


def test_the_leak_check_sees_a_fast_test_using_a_slow_fixture(
        request: pytest.FixtureRequest) -> None:
    class Item:
        def __init__(self, nodeid: str, fixtures: tuple[str, ...], slow: bool) -> None:
            self.nodeid, self.fixturenames, self.slow = nodeid, fixtures, slow

        def get_closest_marker(self, name: str) -> object:
            return True if self.slow and name == "slow" else None

    items = [Item("a", ("tmp_path", "sample_site"), False), Item("b", ("sample_site",), True),
             Item("c", ("sample_site_opens", "sample_site"), False), Item("d", (), False)]
    assert leaks(items) == ["a: sample_site", "c: sample_site", "c: sample_site_opens"]  # type: ignore[arg-type]
