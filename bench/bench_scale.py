"""Scale benchmarks, as ratios measured in one run (python bench/bench_scale.py [options]).

1. rank a 20-run certificate against a fleet of --rows runs (6 cohorts) with FleetStore.ranks_for,
   against the bare indexed SQL counts it cannot avoid (one COUNT per run and metric) on the same
   file (target ≤ 2×);
2. `certgen fleet import` of --rows rows (a child process, so its peak memory is its own) against
   a bare `executemany` of the same rows into the same schema in one transaction (target ≤ 2×),
   and the import's peak memory (target < 200 MB);
3. --bundles bundles built on a Dask LocalCluster of 2 worker processes against 1 (target ≥ 1.8×;
   needs 2 free cores);
4. `certgen calibrate` of the same fleet (one run per certificate: a million cards), the review
   in a child process (so its peak memory is its own; target < 200 MB, the import's bound), timed
   against a bare SQL query that computes the same quantiles (the 5th to 95th percentile of S_F,
   g and s per resolution, by window functions) on the same file, median of --repeats
   (target ≤ 3×); and the whole command with its English report, for its time and peak;
5. the same on PostgreSQL, when a server can be started (tests/pgserver.py: Debian's
   postgresql binaries, a temporary folder, loopback; it says so plainly when it cannot): the
   fleet imported by `certgen fleet import` (about 8 minutes for a million runs on 2 busy
   cores), the review timed against a bare `percentile_cont` query of the same quantiles on the
   same database (target ≤ 3×), its peak (< 200 MB), and every file of the whole command's
   output byte-identical to the SQLite run's.

6. `certgen check` of one example bundle against the --rows fleet, against a 1,000-run fleet
   (fresh processes, median of max(--repeats, 5); target ≤ 2×: the fleet's integrity check is
   paid once per fleet state, through the verified-state marker beside the file), and, for
   the record, against the big fleet without its marker (every process checks it).

`--fleet FILE` reuses a bench fleet already imported (rows 2 and 3 then do not run) and
`--postgres URL` a database already holding the same runs; `--only calibrate` runs rows 4–5,
`--only check` row 6.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_build import SAMPLE_LAB, _bundles  # one way to copy the example bundles  # noqa: E402

from certgen.fleet import METRIC_NAMES, RANKED_METRICS, Cohort, FleetStore  # noqa: E402
from certgen.fleet.store import _COLUMNS, _to_sql  # noqa: E402

COHORTS = [Cohort(f"Game {i}", "2560x1440", "Ultra", i % 2 == 1, "none", None, False)
           for i in range(6)]


def _line(i: int, rng: random.Random) -> dict[str, object]:
    c = COHORTS[i % 6]
    g, s = round(rng.uniform(0.02, 0.3), 4), round(rng.uniform(0.05, 0.5), 4)
    fps = round(rng.uniform(40, 240), 1)
    return {"certificate_id": f"B-{i:08d}", "run_index": 0, "issued": "2026-01-01",
            "card_model": "Bench card", "card_serial": f"S-{i}", **c._asdict(),
            "avg_fps": fps, "low_1pct_fps": round(fps * (1 - g), 1),
            "low_0_1pct_fps": round(fps * (1 - g) * (1 - s), 1), "consistency_gap": g,
            "stutter": s, "fluidity_score": round(100 * (1 - 0.7 * g - 0.3 * s), 2),
            "source": "bench"}


def write_jsonl(path: Path, rows: int) -> None:
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(rows):
            fh.write(json.dumps(_line(i, rng), separators=(",", ":")) + "\n")


CHECK_SMALL_ROWS = 1_000
"""The small fleet `check` is timed against (row 6)."""


def _import_fleet(jsonl: Path, db: Path) -> None:
    subprocess.run([sys.executable, "-m", "certgen", "fleet", "import", "--fleet", str(db),
                    str(jsonl)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})


def _check_seconds(bundle: str, db: Path, repeats: int) -> float:
    """Median wall time of `certgen check BUNDLE --fleet DB`, each a fresh process (what a lab
    pays per command: no memo of an earlier process helps)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "certgen", "check", bundle, "--fleet",
                               str(db)], capture_output=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):  # 1: not issuable is an answer, not a failure
            raise RuntimeError(done.stderr.decode(errors="replace"))
    return _median(times)


def bench_check(tmp: Path, big: Path, repeats: int) -> tuple[float, float, float]:
    """Row 6 (issue 39): `certgen check` against the big fleet and against a 1k-run one, in
    fresh processes (median of `repeats`), and against the big fleet without its
    verified-state marker (every process then runs the integrity check: the cost the marker
    saves). Returns (big, small, big without the marker)."""
    from certgen.fleet.store import VERIFIED_SUFFIX

    small_jsonl = tmp / "check-small.jsonl"
    write_jsonl(small_jsonl, CHECK_SMALL_ROWS)
    small = tmp / "check-small.sqlite"
    _import_fleet(small_jsonl, small)
    [bundle] = _bundles(tmp / "check-bundle", 1, prefix="CHECK")
    marker = big.with_name(big.name + VERIFIED_SUFFIX)
    if not marker.is_file():  # a fleet an older certgen imported: one write command marks it
        subprocess.run([sys.executable, "-m", "certgen", "fleet", "migrate", "--fleet",
                        str(big)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    _check_seconds(bundle, small, 1)  # warm the page cache and the bytecode
    _check_seconds(bundle, big, 1)
    ours_small = _check_seconds(bundle, small, repeats)
    ours_big = _check_seconds(bundle, big, repeats)
    kept = marker.read_bytes()
    marker.unlink()
    try:
        unmarked = _check_seconds(bundle, big, repeats)
    finally:
        marker.write_bytes(kept)
    return ours_big, ours_small, unmarked


def bench_import(tmp: Path, jsonl: Path, rows: int) -> tuple[float, float, float, Path]:
    db = tmp / "fleet.sqlite"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "certgen", "fleet", "import", "--fleet", str(db),
                    str(jsonl)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    ours = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    # The peer: the same rows, already as tuples, executemany'd into the same schema.
    from certgen.fleet.model import FleetRun, _row_from_mapping

    bare_db = tmp / "bare.sqlite"
    FleetStore.open(bare_db).close()
    rng = random.Random(1)
    tuples = []
    for i in range(rows):
        run: FleetRun = _row_from_mapping(_line(i, rng))
        tuples.append(_to_sql(run))
    conn = sqlite3.connect(bare_db, isolation_level=None)
    conn.execute("PRAGMA cache_size = -65536")  # the same page cache as the importer: fair peer
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(f"INSERT INTO runs ({', '.join(_COLUMNS)}) "
                     f"VALUES ({', '.join('?' * len(_COLUMNS))})", tuples)
    conn.execute("COMMIT")
    bare = time.perf_counter() - start
    conn.close()
    return ours, bare, peak_mb, db


def bench_rank(db: Path, repeats: int = 5) -> tuple[float, float]:
    rng = random.Random(2)
    runs = [(COHORTS[i % 6], _line(10**9 + i, rng)) for i in range(20)]
    ours, bare = [], []
    with FleetStore.open(db, create=False) as store:
        for _ in range(repeats):
            start = time.perf_counter()
            for cohort, line in runs:
                store.ranks_for(cohort, line, "BENCH-CERT", min_cohort=30)
            ours.append(time.perf_counter() - start)
    conn = sqlite3.connect(db)
    for _ in range(repeats):
        start = time.perf_counter()
        for cohort, line in runs:
            for m in RANKED_METRICS:
                op = ">" if m.lower_is_better else "<"
                conn.execute(f"SELECT COUNT(*) FROM runs WHERE cohort_key = ? AND {m.name} {op} ?",
                             (cohort.key(), line[m.name])).fetchone()
        bare.append(time.perf_counter() - start)
    conn.close()
    assert len(METRIC_NAMES) == 6
    return min(ours), min(bare)


QUANTILE_SQL = """
SELECT resolution, rn, n, x FROM (
  SELECT resolution, {x} AS x,
         ROW_NUMBER() OVER (PARTITION BY resolution ORDER BY {x}) AS rn,
         COUNT(*) OVER (PARTITION BY resolution) AS n
  FROM runs WHERE {x} IS NOT NULL)
WHERE rn IN (1 + CAST(0.05 * (n - 1) AS INTEGER), 2 + CAST(0.05 * (n - 1) AS INTEGER),
             1 + CAST(0.25 * (n - 1) AS INTEGER), 2 + CAST(0.25 * (n - 1) AS INTEGER),
             1 + CAST(0.5 * (n - 1) AS INTEGER), 2 + CAST(0.5 * (n - 1) AS INTEGER),
             1 + CAST(0.75 * (n - 1) AS INTEGER), 2 + CAST(0.75 * (n - 1) AS INTEGER),
             1 + CAST(0.95 * (n - 1) AS INTEGER), 2 + CAST(0.95 * (n - 1) AS INTEGER))
"""
"""The peer of the calibration review: the rows either side of each linear-interpolation rank,
per resolution, in one SQL pass per figure (what any review must at least read and sort)."""


def _child_peak(setup: str, code: str) -> tuple[float, float]:
    """Seconds `code` takes in a child of its own (timed inside it, after `setup`: the imports
    are not the work) and the child's peak memory (MB)."""
    script = (f"{setup}\nimport resource, time\nstart = time.perf_counter()\n{code}\n"
              "print(time.perf_counter() - start, "
              "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds, peak = done.stdout.split()[-2:]
    return float(seconds), int(peak) / 1024


PG_QUANTILE_SQL = """
SELECT resolution, percentile_cont(ARRAY[0.05, 0.25, 0.5, 0.75, 0.95])
         WITHIN GROUP (ORDER BY {x})
FROM runs WHERE {x} IS NOT NULL GROUP BY resolution ORDER BY resolution
"""
"""The PostgreSQL peer: the same quantiles per resolution by the server's own linear
interpolation (numpy's default, the review's), one query per figure."""


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def bench_calibrate(tmp: Path, fleet: str, repeats: int = 3, *, postgres: bool = False,
                    out: str = "calibration") -> list[tuple[str, float, float]]:
    """(what, seconds, peak MB): the review alone (median of `repeats` children, the largest
    peak), the bare quantile SQL on the same database (median), the whole command (one child,
    its output in tmp/`out`)."""
    setup = "from certgen.builders.calibration import calibrate"
    ours = [_child_peak(setup, f"calibrate({fleet!r})") for _ in range(repeats)]
    bare = []
    if postgres:
        import psycopg

        with psycopg.connect(fleet) as conn:
            for _ in range(repeats):
                start = time.perf_counter()
                for x in ("fluidity_score", "consistency_gap", "stutter"):
                    conn.execute(PG_QUANTILE_SQL.format(x=x)).fetchall()
                bare.append(time.perf_counter() - start)
    else:
        conn = sqlite3.connect(fleet)
        for _ in range(repeats):
            start = time.perf_counter()
            for x in ("fluidity_score", "consistency_gap", "stutter"):
                conn.execute(QUANTILE_SQL.format(x=x)).fetchall()
            bare.append(time.perf_counter() - start)
        conn.close()
    args = ["calibrate", "--fleet", fleet, "--out", str(tmp / out)]
    whole, whole_peak = _child_peak(
        "from certgen.cli import main",
        "try:\n    main(" + repr(args) + ")\nexcept SystemExit as exc:\n    assert not exc.code, exc.code")
    return [("review", _median([t for t, _ in ours]), max(p for _, p in ours)),
            ("bare quantile SQL", _median(bare), float("nan")),
            ("whole command", whole, whole_peak)]


def same_files(a: Path, b: Path) -> bool:
    """Whether two output folders hold the same files with the same bytes (manifest too)."""
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names)


def start_postgres(jsonl: Path) -> tuple[object, str] | str:
    """A throwaway server (tests/pgserver.py) holding the bench fleet, imported by `certgen
    fleet import`: (server, URL); or why none could be started."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import psycopg
        from pgserver import start_server, stop_server
    except ImportError as exc:
        return f"cannot start PostgreSQL ({exc})"
    try:
        server = start_server()
    except BaseException as exc:  # pgserver says why through pytest's skip/fail outcomes
        if isinstance(exc, KeyboardInterrupt):
            raise
        return f"cannot start PostgreSQL: {str(exc).splitlines()[0] if str(exc) else exc!r}"
    try:
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench_fleet")
        url = server.url.rsplit("/", 1)[0] + "/bench_fleet"
        subprocess.run([sys.executable, "-m", "certgen", "fleet", "import", "--fleet", url,
                        str(jsonl)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    except BaseException:
        stop_server(server)
        raise
    return server, url


def bench_cluster(tmp: Path, count: int) -> tuple[float, float]:
    from distributed import LocalCluster

    bundles = _bundles(tmp, count, prefix="SCALE")
    times = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=":0") as cluster:
            out = tmp / f"out{workers}"
            # Warm the workers (imports, fonts) so both runs measure builds, not start-up.
            warm = tmp / f"warm{workers}"
            subprocess.run([sys.executable, "-m", "certgen", "build", bundles[0], "--out",
                            str(warm), "--lang", "en", "--lab", str(SAMPLE_LAB), "--scheduler",
                            cluster.scheduler_address], check=True, capture_output=True)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "certgen", "build", *bundles, "--out",
                            str(out), "--lang", "en", "--lab", str(SAMPLE_LAB), "--scheduler",
                            cluster.scheduler_address],
                           check=True, capture_output=True)
            times[workers] = time.perf_counter() - start
    return times[1], times[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="fleet rows (default 1M)")
    parser.add_argument("--bundles", type=int, default=200, help="bundles for the cluster")
    parser.add_argument("--skip-cluster", action="store_true")
    parser.add_argument("--fleet", type=Path, help="an SQLite bench fleet already imported "
                        "(write_jsonl's rows): no import row")
    parser.add_argument("--postgres", help="a postgresql:// database already holding the same "
                        "runs: no server is started")
    parser.add_argument("--only", choices=["calibrate", "check"],
                        help="only rows 4 and 5, or only row 6")
    parser.add_argument("--repeats", type=int, default=3, help="calibrate runs per median")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    lines = []
    notes = []
    with tempfile.TemporaryDirectory(prefix="certgen-scale-") as tmp_name:
        tmp = Path(tmp_name)
        jsonl = tmp / "fleet.jsonl"
        if args.fleet is None or args.postgres is None:  # to import, here or into a server
            write_jsonl(jsonl, args.rows)
        if args.fleet is None and args.only == "check":
            db = tmp / "fleet.sqlite"
            _import_fleet(jsonl, db)
        elif args.fleet is None:
            ours, bare, peak, db = bench_import(tmp, jsonl, args.rows)
            lines.append((f"fleet import {args.rows:,} rows", ours, "bare executemany", bare,
                          ours / bare, "≤ 2×", ours / bare <= 2))
            lines.append(("fleet import peak memory (MB)", peak, "-", 200.0, peak / 200,
                          "< 200 MB", peak < 200))
        else:
            db = args.fleet
        if args.only in (None, "check"):
            (tmp / "check-bundle").mkdir()
            k_big, k_small, k_unmarked = bench_check(tmp, Path(db), max(args.repeats, 5))
            lines.append((f"check vs {args.rows:,}-run fleet", k_big,
                          f"vs {CHECK_SMALL_ROWS:,}-run fleet", k_small, k_big / k_small, "≤ 2×",
                          k_big / k_small <= 2))
            lines.append(("  the same without the marker", k_unmarked,
                          f"vs {CHECK_SMALL_ROWS:,}-run fleet", k_small, k_unmarked / k_small,
                          "(was 3.15×)", True))
        if args.only == "check":
            _print(lines, notes)
            return
        if args.only is None:
            r_ours, r_bare = bench_rank(db)
            lines.append((f"rank 20 runs vs {args.rows:,}", r_ours, "bare indexed counts",
                          r_bare, r_ours / r_bare, "≤ 2×", r_ours / r_bare <= 2))
        (_, c_ours, c_peak), (_, c_bare, _), (_, c_whole, c_whole_peak) = bench_calibrate(
            tmp, str(db), args.repeats)
        lines.append((f"calibrate {args.rows:,} runs (review)", c_ours, "bare quantile SQL",
                      c_bare, c_ours / c_bare, "≤ 3×", c_ours / c_bare <= 3))
        lines.append(("calibrate peak memory (MB)", c_peak, "-", 200.0, c_peak / 200,
                      "< 200 MB", c_peak < 200))
        lines.append(("calibrate + en report: s, MB", c_whole, "peak MB", c_whole_peak,
                      c_whole_peak / 200, "< 200 MB", c_whole_peak < 200))
        server = None
        if args.postgres is not None:
            url: str | None = args.postgres
        else:
            started = start_postgres(jsonl)
            if isinstance(started, str):
                url = None
                notes.append(f"PostgreSQL rows did NOT run: {started}")
            else:
                server, url = started
        try:
            if url is not None:
                (_, p_ours, p_peak), (_, p_bare, _), (_, p_whole, p_whole_peak) = \
                    bench_calibrate(tmp, url, args.repeats, postgres=True, out="calibration-pg")
                lines.append(("calibrate on PostgreSQL (review)", p_ours, "percentile_cont SQL",
                              p_bare, p_ours / p_bare, "≤ 3×", p_ours / p_bare <= 3))
                lines.append(("calibrate PostgreSQL peak (MB)", p_peak, "-", 200.0,
                              p_peak / 200, "< 200 MB", p_peak < 200))
                lines.append(("PostgreSQL + en report: s, MB", p_whole, "peak MB", p_whole_peak,
                              p_whole_peak / 200, "< 200 MB", p_whole_peak < 200))
                same = same_files(tmp / "calibration", tmp / "calibration-pg")
                lines.append(("PostgreSQL files = SQLite's", float(same), "-", 1.0,
                              float(same), "identical", same))
        finally:
            if server is not None:
                from pgserver import stop_server

                stop_server(server)  # type: ignore[arg-type]
        if not args.skip_cluster and args.only is None:
            one, two = bench_cluster(tmp, args.bundles)
            lines.append((f"build {args.bundles} bundles, 2 workers", two, "1 worker", one,
                          one / two, "≥ 1.8× faster", one / two >= 1.8))
    _print(lines, notes)


def _print(lines: list[tuple[str, float, str, float, float, str, bool]],
           notes: list[str]) -> None:
    print(f"{'benchmark':<34} {'ours':>9} {'peer':<20} {'peer value':>10} {'ratio':>7} "
          f"{'target':<14} result")
    for name, value, peer, peer_value, ratio, target, ok in lines:
        print(f"{name:<34} {value:>9.3f} {peer:<20} {peer_value:>10.3f} {ratio:>6.2f}× "
              f"{target:<14} {'ok' if ok else 'MISSED'}")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
