"""The fleet store: every recorded run of every certified card, its cohort, and ranking.

Storage (docs/spec/rules.md, "Cohorts and ranking"): one SQLite file (stdlib sqlite3) by default,
or a PostgreSQL server (`--fleet postgresql://…`, the `postgres` extra); one row per recorded run
with its cohort key, the card and the six ranked metrics. Not-run runs never enter. The store
(certgen/fleet/store.py) ranks in SQL: index counts and exact per-cohort sums, never a cohort
pulled into Python; import and export stream.

Where the fleet is (`fleet_path`): `--fleet PATH|URL` if given, else the environment variable
CERTGEN_FLEET, else `fleet.sqlite` in the current directory (DEFAULT_FLEET_FILE).

Schema: versioned (SQLite `PRAGMA user_version`, PostgreSQL a one-row table) with an ordered list
of migration steps (MIGRATIONS); opening a database applies the steps it lacks, in one
transaction. A database newer than this certgen is refused rather than guessed at.

Checks (docs/limits.md, "The fleet"): every write path checks each row's ranges and closed sets
(model.field_errors) and writes nothing if one is bad; read-only commands open the database
read-only (`FleetStore.open(readonly=True)`: SQLite mode=ro, never created or migrated, a
database that is not a certgen fleet refused unchanged); stored values a certgen would not write
are refused naming the row; a write waits for another writer's lock up to `lock_timeout`
(--lock-timeout, $CERTGEN_FLEET_LOCK_TIMEOUT, 60 s); database errors are one line with their cause.

Package layout: model.py (rows, cohorts, pure ranking: `rank_value` is the reference that the
SQL ranking must equal), store.py (FleetStore, SQLite migrations), postgres.py (the server).

Adding is idempotent: a row is keyed by (certificate_id, run_index) (UNIQUE). Adding the same
certificate again skips rows that are already there with the same content, so a certificate is
never counted twice. A row with the same key but different content (cohort, card or metrics) is
refused, not overwritten and not silently ignored: an issued certificate does not change, so a
difference means a re-used id or an edited record, which a person must look at. `replace=True`
(`certgen fleet add --replace`) overwrites such rows on purpose.

Ranking decisions (documented here, stated by tests/test_fleet.py):
- The cohort of a run is its own configuration key. It holds the run itself plus every fleet run
  of the same key from *other* certificates (the certificate's own runs are left out, so a
  re-check of an already-added certificate never ranks against itself).
- `n` is the size of that cohort *including the run itself*: the number shown in
  "Provisional · n = X". A percentile is published when n >= the rules' ranking minimum (30 in
  SOP v1.1), i.e. when 29 other runs exist.
- percentile = 100 * (other runs this run strictly beats) / (n - 1), 1 decimal. A tie is not a
  win (no half credit): "better than P% of the cohort" stays literally true. For consistency_gap
  and stutter a lower value beats a higher one, so a higher percentile is always better.
- cohort_mean and z are over the same n values (the run included); z uses the population
  standard deviation (the cohort is the whole fleet population of that configuration, not a
  sample of it); z keeps the metric's own sign (z > 0 means above the cohort mean, for g and s
  too) so that a reader can re-derive it from the mean; a zero spread gives z = null.
- Below the minimum: percentile, cohort_mean and z are null, n is the real count.
- A NULL metric is never 0: a run without a value is not ranked on that metric (no entry in its
  `ranks`) and does not enter other runs' cohorts for that metric.
"""

from certgen.fleet.model import (
    DEFAULT_FLEET_FILE,
    FLEET_ENV,
    JSONL_FIELDS,
    LOCK_TIMEOUT_ENV,
    LOCK_TIMEOUT_S,
    MAX_FPS,
    METRIC_NAMES,
    METRIC_RANGES,
    RANKED_METRICS,
    SUM_SCALE,
    CohortSums,
    FleetRun,
    Metric,
    exact_scaled,
    exact_scaled_square,
    field_errors,
    fleet_path,
    is_server_url,
    lock_timeout,
    parse_line,
    rank_from_sums,
    rank_run,
    rank_value,
    record_source,
    runs_from_record,
)
from certgen.fleet.schema import MIGRATIONS, SCHEMA_VERSION
from certgen.fleet.store import FleetStore, migrate
from certgen.model import Rank
from certgen.model.cohort import Cohort
from certgen.record import fleet_section

__all__ = [
    "DEFAULT_FLEET_FILE", "FLEET_ENV", "JSONL_FIELDS", "LOCK_TIMEOUT_ENV", "LOCK_TIMEOUT_S",
    "MAX_FPS", "METRIC_NAMES", "METRIC_RANGES", "MIGRATIONS", "RANKED_METRICS", "SCHEMA_VERSION",
    "SUM_SCALE", "Cohort", "CohortSums", "FleetRun", "FleetStore", "Metric",
    "Rank", "exact_scaled", "exact_scaled_square", "field_errors", "fleet_path", "fleet_section",
    "is_server_url", "lock_timeout", "migrate", "parse_line", "rank_from_sums", "rank_run",
    "rank_value", "record_source", "runs_from_record",
]
