"""Run one command and report its wall time, peak resident memory and CPU time as JSON.

    python bench/spawn.py OUT ERR COMMAND...

bench/run.py starts every measured process through this small launcher. Linux carries a
process's peak resident memory across fork and exec: a child forked straight from the
benchmark (which holds the generated captures, hundreds of MB) would report the benchmark's
own peak as its ru_maxrss. Forked from this launcher, a child inherits only the launcher's
few MB, so the figure is the command's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> None:
    out, err, *argv = sys.argv[1:]
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    print(json.dumps({
        "seconds": seconds,
        "returncode": os.waitstatus_to_exitcode(status),
        "max_rss_bytes": usage.ru_maxrss * 1024,  # Linux gives KiB
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
    }))


if __name__ == "__main__":
    main()
