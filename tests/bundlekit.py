"""Small helpers to build fixture bundles in tmp_path (shared by bundle/rules/check tests).

- `frames_for(avg, low1, low01)`: frame times whose SOP figures are exactly those FPS values;
- `write_presentmon(path, frames)`: a PresentMon 1.x CSV;
- `write_frame_stats(path, frames, end=True)`: engine frame-stats JSON Lines (seeds/004);
- `card(...)`, `run_entry(...)`, `write_bundle(root, card, files)`: card.yaml and its files;
- `run_cli(args, capsys)`: the CLI in-process, as the console script runs it.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from certgen.cli import main

N_FRAMES = 10_000


def frames_for(avg: float, low1: float, low01: float, n: int = N_FRAMES) -> np.ndarray:
    """Frame times (ms) with average `avg`, 1% low `low1` and 0.1% low `low01` FPS.

    Three levels: the k01 slowest frames at 1000/low01, the rest of the 1% tail at the time
    that makes its mean 1000/low1, everything else at the time that makes the total
    n * 1000/avg. The slow frames are spread evenly through the run (like real hitches).
    """
    k1 = max(1, -(-n // 100))
    k01 = max(1, -(-n // 1000))
    slow = 1000.0 / low01
    mid = (k1 * 1000.0 / low1 - k01 * slow) / (k1 - k01)
    rest = (n * 1000.0 / avg - k1 * 1000.0 / low1) / (n - k1)
    if not slow >= mid >= rest > 0:
        raise ValueError(f"unrealisable figures: {avg}/{low1}/{low01}")
    out = np.full(n, rest)
    tail = np.linspace(0, n - 1, k1).round().astype(int)
    out[tail] = mid
    out[tail[:: max(1, k1 // k01)][:k01]] = slow
    return out


def write_presentmon(path: Path, frames: np.ndarray, app: str = "Game.exe") -> Path:
    """PresentMon 1.x CSV (one process, one swap chain).

    The process id comes from the file's folder and name, as two real captures never share
    their bytes: a bundle's runs with the same figures are still different captures (certgen
    refuses one capture backing two runs by content), while one name in two bundles gives
    the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pid = 1000 + zlib.crc32(f"{path.parent.name}/{path.name}".encode()) % 9000
    lines = ["Application,ProcessID,SwapChainAddress,Dropped,TimeInSeconds,MsBetweenPresents"]
    t = 0.0
    for ft in frames.tolist():
        t += ft / 1000.0
        lines.append(f"{app},{pid},0x1,0,{t!r},{ft!r}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_frame_stats(path: Path, frames: np.ndarray, *, end: bool = True, dropped: int = 0) -> Path:
    """Engine frame-stats JSON Lines: a pipeline-creation first line, one line per frame, end line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    all_times = [None, *frames.tolist()]
    lines = []
    t_ms = 0.0
    for tick, ft in enumerate(all_times):
        interval = "null" if ft is None else f"{ft:.3f}"
        if ft is not None:
            t_ms += ft
        gpu = "null" if ft is None else f"{ft * 0.8:.3f}"
        gtick = "null" if ft is None else str(tick)
        lines.append(
            f'{{"schema_version":1,"tick":{tick},"t_ms":{t_ms:.3f},"sim_ms":0.010,'
            f'"submit_ms":1.000,"gpu_ms":{gpu},"gpu_tick":{gtick},'
            f'"present_interval_ms":{interval},"kind":"full","size":[2560,1440],'
            f'"device":"desktop","hud_ms":null}}'
        )
    if end:
        lines.append(
            f'{{"schema_version":1,"end":true,"frames":{len(all_times) + dropped},'
            f'"dropped":{dropped}}}'
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_entry(title: str = "Game", resolution: str = "2560x1440", **extra: Any) -> dict[str, Any]:
    """One runs[] entry with the cohort fields (native, no RT, no FG) plus `extra`."""
    entry: dict[str, Any] = {
        "title": title,
        "resolution": resolution,
        "preset": "Ultra",
        "ray_tracing": False,
        "upscaler": "none",
        "upscaler_mode": None,
        "frame_generation": False,
    }
    entry.update(extra)
    return entry


BASE_CARD: dict[str, Any] = {
    "certificate": {
        "id": "TEST-0001",
        "issued": "2026-11-29",
        "sop": "SOP-GPU-001 v1.1",
        "languages": ["en"],
    },
    "customer": "Test Customer",
    "card": {
        "vendor": "Example",
        "model": "Example GTX 1660 Super 6G",
        "gpu": "TU116",
        "vram_gb": 6,
        "serial": "EX-0001",
        "hardware_ray_tracing": False,
        "driver": "566.14",
    },
    "phase1": {"vrm_rail_resistance": "pass"},
    "grade_cap": None,
    "runs": [],
}


TEST_SYSTEM: dict[str, Any] = {
    "cpu": "Example 8-core CPU",
    "memory_gb": 32,
    "os": "Windows 11 Pro",
    "motherboard": "Example Z790 board",
    "display": "Example 27-inch 2560x1440 monitor",
}
"""The bench a fixture card states (a certificate must state one: certgen.rules.conditions)."""

TESTED_ON = dt.date(2026, 11, 28)
TECHNICIAN = "T. Tester"


def with_conditions(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the conditions a certificate must state, where it does not give them:
    the bench, and tested_on and technician on every recorded run and first capture. A key
    given (even as null) is kept: a test of a missing condition writes it as null or drops it
    after this."""
    data = copy.deepcopy(data)
    data.setdefault("test_system", copy.deepcopy(TEST_SYSTEM))
    for run in data.get("runs") or []:
        if not isinstance(run, dict) or "capture" not in run:
            continue
        run.setdefault("tested_on", TESTED_ON)
        run.setdefault("technician", TECHNICIAN)
        first = run.get("first_capture")
        if isinstance(first, dict):
            first.setdefault("tested_on", TESTED_ON)
            first.setdefault("technician", TECHNICIAN)
        for repeat in run.get("repeats") or []:
            if isinstance(repeat, dict):
                repeat.setdefault("tested_on", TESTED_ON)
                repeat.setdefault("technician", TECHNICIAN)
    return data


def card(runs: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    """A complete card.yaml mapping with these runs (conditions stated: with_conditions when
    written)."""
    data = copy.deepcopy(BASE_CARD)
    data["runs"] = runs
    data.update(overrides)
    return data


def write_card(root: Path, data: dict[str, Any] | str, *, conditions: bool = True) -> Path:
    """Write card.yaml (a mapping is dumped, with the conditions a certificate must state
    added where it gives none unless `conditions` is false; a string is written as is)."""
    root.mkdir(parents=True, exist_ok=True)
    if isinstance(data, dict) and conditions and isinstance(data.get("runs"), list):
        data = with_conditions(data)
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    (root / "card.yaml").write_text(text, encoding="utf-8")
    return root


def simple_bundle(root: Path, figures: list[tuple[float, float, float]], **card_overrides: Any) -> Path:
    """A bundle with one PresentMon capture per (avg, low1, low01) triple, all at 2560x1440."""
    runs = []
    for i, (avg, low1, low01) in enumerate(figures):
        rel = f"captures/run{i}.csv"
        write_presentmon(root / rel, frames_for(avg, low1, low01))
        runs.append(run_entry(f"Game {i}", capture=rel))
    return write_card(root, card(runs, **card_overrides))


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI as the console script does (`sys.exit(main())`): (exit code, stdout, stderr)."""
    try:
        result = main(args)
    except SystemExit as exc:
        out, err = capsys.readouterr()
        return int(exc.code or 0), out, err
    out, err = capsys.readouterr()
    return (result if isinstance(result, int) else 0), out, err


def opened_during_cli(args: list[str], log: Path, *, warm_up: bool = False,
                      env: dict[str, str] | None = None,
                      render_cache: Path | None = None) -> list[str]:
    """Every path `open()`ed while `certgen ARGS` runs, in a fresh interpreter with an audit
    hook (sys.addaudithook cannot be removed, so never in the test process itself).

    warm_up=True first imports the build and render stack and lets Python and its libraries
    read their own per-process files (mime types, Babel's time zone, WeasyPrint's libraries),
    so what is left is what the command itself opens.
    """
    import json
    import os
    import subprocess
    import sys
    import textwrap

    prelude = textwrap.dedent("""
        import mimetypes
        import certgen.builders.certificate, certgen.pipeline, certgen.render.certificate
        import certgen.render.pdf
        import weasyprint  # loads its libraries (ctypes probes /tmp); certgen imports it late
        import babel.dates
        mimetypes.init()  # /etc/mime.types, read once per process by every library
        babel.dates.format_date(None, locale="en")  # Babel's local time zone, once per process
    """) if warm_up else ""
    # the run's render cache (tests/rendercache.py), installed before the hook: its own
    # imports are not the command's opens
    from rendercache import prelude as cache_prelude

    prelude += cache_prelude(render_cache)
    script = prelude + textwrap.dedent(f"""
        import json, os, sys, threading
        opened = []
        # The audit event of os.open does not carry dir_fd, and the writer opens its output
        # relative to folder descriptors (no symlink followed on the way): os.open is wrapped to
        # name such a file by its descriptor's folder, which the hook records instead of the
        # bare relative name.
        pending = threading.local()
        real_open = os.open
        def open_at(path, flags, mode=0o777, *, dir_fd=None):
            name = os.fsdecode(path)
            if dir_fd is not None and not os.path.isabs(name):
                pending.name = os.path.normpath(
                    os.path.join(os.readlink(f"/proc/self/fd/{{dir_fd}}"), name))
            try:
                return real_open(path, flags, mode, dir_fd=dir_fd)
            finally:
                pending.name = None
        os.open = open_at
        def hook(event, args):
            if event == "open" and args and isinstance(args[0], (str, bytes)):
                resolved = getattr(pending, "name", None)
                pending.name = None
                opened.append(resolved if resolved is not None
                              else args[0] if isinstance(args[0], str) else args[0].decode())
        sys.addaudithook(hook)
        from certgen.cli import main
        try:
            main({args!r})
        finally:
            with open({str(log)!r}, "w") as fh:
                json.dump(opened, fh)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          env={**os.environ, **(env or {})})
    # The child's own error, not just its exit status (a shared fixture builds through here).
    assert done.returncode == 0, (f"certgen {' '.join(args)} exited {done.returncode}:\n"
                                  + done.stderr.decode(errors="replace")[-4000:])
    return [p for p in json.loads(log.read_text()) if p != str(log)]
