"""Shared test settings.

Hypothesis: no per-example deadline. The property tests check behaviour, never speed (speed is
measured in bench/), and on a loaded 2-core CI machine running the suite in parallel a slow
example is load, not a defect. `HYPOTHESIS_PROFILE=long` draws ten times more examples.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("long", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
