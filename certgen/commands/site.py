"""`certgen site --out DIR`: the publishable static site (index, explainers, samples).

Shows progress on a terminal (stderr), prints where to open the site when done.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click


def run_site(out: str, *, examples: str | None = None, pdf: bool = True) -> list[str]:
    """Build the site with a progress display when stderr is a terminal; return files written."""
    from certgen.docs import LANGS, PAGES
    from certgen.site import REPORT_SAMPLES, build_site, repo_examples_dir

    ex = Path(examples) if examples else repo_examples_dir()
    samples = sum(1 for p in ex.iterdir() if (p / "card.yaml").is_file()) if ex.is_dir() else 0
    total = samples + len(REPORT_SAMPLES) + len(LANGS) * len(PAGES)
    if sys.stderr.isatty():
        with click.progressbar(length=total, label="certgen site", file=sys.stderr,
                               item_show_func=lambda s: s) as bar:  # type: ignore[arg-type]
            def progress(label: str) -> None:
                bar.current_item = label  # type: ignore[attr-defined]
                bar.update(1)

            return build_site(out, examples=ex, progress=progress, pdf=pdf)
    return build_site(out, examples=ex, pdf=pdf)


@click.command("site")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder to write the site into.")
@click.option("--examples", default=None, type=click.Path(exists=True, file_okay=False),
              help="Folder of sample bundles and fleet.jsonl (default: examples/).")
def command(out: str, examples: str | None) -> Any:
    """Build the publishable static site: samples, explainers in EN/RU/PT, an index."""
    files = run_site(out, examples=examples)
    click.echo(f"{len(files)} files written to {out}")
    click.echo(f"Open {Path(out) / 'index.html'} in a browser.")
