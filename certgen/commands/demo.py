"""`certgen demo --out DIR` (what `make demo` runs): the site, plus the SOP figures of the
real captures in ../shared/captures/real (beside a source checkout), then where to look.

The output is progress (on a terminal), a short list of what was built, and the page to open;
library log lines are kept off the terminal (see certgen.commands.site.library_logs).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from certgen.commands.metrics import measure
from certgen.commands.site import (
    LOG_OPTION,
    WHEEL_OPTION,
    library_logs,
    report_library_logs,
    run_site,
)

# The real captures the demo measures. They live beside the checkout, never in the repository;
# the list is explicit so that other files in that folder (SOURCES.md, LICENSES.md, files added
# later) never change what the demo shows.
REAL_CAPTURES = (
    "CapFrameXFileWithHeader.csv",
    "OCAT-MetroExodus.exe-2019-02-20T101522.csv",
    "PresentMonTestOutputFilename.csv",
    "test_case_5.csv",
    "test_case_5_v1.csv",
    "test_case_5_v2.csv",
    "PresentMon-1.5_trivflip.csv",
    "PresentMon-2.0.0_test_case_0.csv",
    "PresentMon-2.1.0_test_case_0.csv",
)


@click.command("demo")
@click.option("--out", "out", required=True, type=click.Path(),
              help="Folder to write the demo site into.")
@WHEEL_OPTION
@LOG_OPTION
def command(out: str, log_file: str | None, wheel: str | None) -> None:
    """Build the examples, reports and explainers into a folder; show metrics of real captures."""

    files = run_site(out, log_file=log_file, wheel=wheel)
    root = Path(out).resolve()
    samples = sorted({f.split("/")[1] for f in files if f.startswith("samples/")})
    reports = sorted({f.split("/")[1] for f in files if f.startswith("reports/")})
    explainers = [f for f in files if "/explainers/" in f and f.endswith(".html")]
    click.echo(f"Built {len(files)} files into {root}:")
    click.echo(f"  sample certificates  {', '.join(samples)}  (samples/)")
    click.echo(f"  before/after reports {', '.join(reports)}  (reports/)")
    calibration = [f for f in files if f.startswith("calibration/calibration.")
                   and f.endswith(".html")]
    if calibration:
        review = json.loads((root / "calibration" / "calibration.json").read_bytes())
        candidates = ", ".join(c["rules"] for c in review["candidates"]) or "no candidate"
        click.echo(f"  calibration review   {review['cards']} synthetic cards, {review['runs']} "
                   f"runs, re-graded under {candidates}; {len(calibration)} languages, "
                   f"HTML, PDF, JSON, CSV  (calibration/)")
    click.echo(f"  explainers           {len(explainers)} pages in en, ru, pt, HTML and PDF")
    registry = [f for f in files if f.startswith("verify/") and f.endswith("/en/index.html")]
    click.echo(f"  registry             {len(registry)} certificate pages, index.json  (verify/)")
    wheels = [f for f in files if f.startswith("verify/software/") and f.endswith(".whl")]
    if wheels:
        click.echo(f"  verifier             {wheels[0]}  (with SHA256SUMS)")
    real = Path(__file__).resolve().parents[3] / "shared" / "captures" / "real"
    captures = [real / name for name in REAL_CAPTURES if (real / name).is_file()]
    if captures:
        click.echo("")
        click.echo(f"SOP figures of the real captures in {real}:")
        with library_logs(None) as records:
            rows = list(measure([str(p) for p in captures], None, None))
        report_library_logs(records, None)
        for row in rows:
            name = Path(str(row["file"])).name
            if "error" in row:
                click.echo(f"  {name}: refused: {row['error']}")
                continue
            click.echo(
                f"  {name}: {row['frames']} frames, avg {_fixed(row['avg_fps'], 1)} FPS, "
                f"1% low {_fixed(row['low_1pct_fps'], 1)}, "
                f"0.1% low {_fixed(row['low_0_1pct_fps'], 1)}, "
                f"S_F {_fixed(row['fluidity_score'], 2)}"
            )
    else:
        # The real captures are public files kept beside the checkout, never in it; the demo
        # works without them and says so.
        click.echo("")
        click.echo(f"(No real captures shown: {real} is not there; the site above needs none.)")
    click.echo("")
    click.echo(f"Open {root / 'index.html'} in a browser.")


def _fixed(value: object, digits: int) -> str:
    """A figure at its SOP precision (78.20, not 78.2); an absent one stays visibly absent."""
    return "—" if value is None else f"{float(value):.{digits}f}"  # type: ignore[arg-type]
