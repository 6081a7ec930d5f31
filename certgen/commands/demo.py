"""`certgen demo --out DIR` (what `make demo` runs): the site, plus the SOP figures of the
real captures shipped in tests/data/real, then where to open it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


@click.command("demo")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder to write the demo site into.")
def command(out: str) -> Any:
    """Build the examples and explainers into a folder and show metrics of real captures."""
    from certgen.commands.site import run_site

    files = run_site(out)
    click.echo(f"site: {len(files)} files written to {out}")
    real = Path(__file__).resolve().parents[2] / "tests" / "data" / "real"
    captures = sorted(p for p in real.glob("*.csv")) if real.is_dir() else []
    if captures:
        from certgen.commands.metrics import measure

        click.echo("")
        click.echo("SOP figures of the real captures in tests/data/real:")
        for row in measure([str(p) for p in captures], None, None):
            name = Path(str(row["file"])).name
            click.echo(
                f"  {name}: {row['frames']} frames, avg {row['avg_fps']} FPS, "
                f"1% low {row['low_1pct_fps']}, 0.1% low {row['low_0_1pct_fps']}, "
                f"S_F {row['fluidity_score']}"
            )
    click.echo("")
    click.echo(f"Open {Path(out).resolve() / 'index.html'} in a browser.")
