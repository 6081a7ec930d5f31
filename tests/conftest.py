"""Shared test settings.

Hypothesis: no per-example deadline. The property tests check behaviour, never speed (speed is
measured in bench/), and on a loaded 2-core CI machine running the suite in parallel a slow
example is load, not a defect. `HYPOTHESIS_PROFILE=long` draws ten times more examples; `HYPOTHESIS_PROFILE=fuzz` (`make fuzz`)
gives tests/test_fuzz.py 3000 examples per target.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("long", deadline=None, max_examples=1000)
# `make fuzz`: tests/test_fuzz.py at its long budget (the suite runs it at 20 per target).
settings.register_profile("fuzz", deadline=None, max_examples=3000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# --- the fleet on both backends ---------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[str]:
    """A PostgreSQL server for this test process (tests/pgserver.py); its admin URL."""
    from pgserver import postgres_server

    with postgres_server() as url:
        yield url


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
