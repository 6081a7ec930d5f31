"""The run's render cache in certgen's own pool workers and in Dask's workers (issue 43).

`certgen build --jobs 2` (and `build_many(jobs=2)`) renders in worker processes that
multiprocessing's fork server starts: fresh processes the test process's render cache cannot
reach. tests/conftest.py names this module as the fork server's preload, so the server imports
it once and every pool worker forked from it renders through the run's cache (the folder in
$CERTGEN_TEST_POOL_RENDER_CACHE, set before the server starts). A test marked
`render_uncached` creates `rendercache.uncached_switch(folder)` while it runs: its pool workers
then render for real. Without the variable (a run with CERTGEN_TEST_RENDER_CACHE=0) this does
nothing. The fork server's preload only imports modules: the product's pool is otherwise the
one a user gets.

The tests' Dask clusters run this file in each worker process at its start
(`rendercache.dask_preload`): what those tests compare is what the worker computes (the
record, and so the HTML the cache keys on), not WeasyPrint's output, which the render_uncached
tests compare.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# A Dask worker runs this file by its path, with tests/ not on its sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rendercache import POOL_FOLDER, RenderCache, uncached_switch

_folder = os.environ.get(POOL_FOLDER)
if _folder:
    RenderCache(Path(_folder), off_switch=uncached_switch(Path(_folder))).install()
