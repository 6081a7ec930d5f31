"""Build benchmarks, as ratios measured in one run (python bench/bench_build.py [--bundles N]
[--repeats N]).

1. certificate HTML+PDF build (record → HTML → PDF, one language) against WeasyPrint alone on
   the same final HTML (target ≤ 1.2×);
2. a no-change rebuild of N bundles against their full build (target ≤ 5%);
3. `--jobs 2` against `--jobs 1` on N bundles (target ≥ 1.8× faster).
Bundles are copies of examples/ under fresh certificate ids, in a temporary folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_LAB = ROOT / "examples" / "lab.yaml"


def _bundles(tmp: Path, count: int, prefix: str = "BENCH") -> list[str]:
    """`count` copies of the example bundles, each with its own certificate id."""
    examples = sorted(p for p in (ROOT / "examples").iterdir() if (p / "card.yaml").is_file())
    out = []
    for i in range(count):
        src = examples[i % len(examples)]
        dst = tmp / f"bundle{i:03d}"
        shutil.copytree(src, dst)
        text = (dst / "card.yaml").read_text(encoding="utf-8")
        import yaml

        data = yaml.safe_load(text)
        old = str(data["certificate"]["id"])
        (dst / "card.yaml").write_text(text.replace(old, f"{prefix}-{i:04d}", 1), encoding="utf-8")
        out.append(str(dst))
    return out


def _cli(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "certgen", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def bench_render(bundle: str, repeats: int = 3) -> tuple[float, float]:
    import weasyprint

    from certgen.pipeline import make_record
    from certgen.record import dump_record
    from certgen.render.certificate import render_certificate_html, render_certificate_pdf
    from certgen.render.pdf import ConfinedURLFetcher
    from certgen.support.paths import templates_dir

    record = make_record(bundle, draft=True)
    data = dump_record(record)
    sha = hashlib.sha256(data).hexdigest()
    ours, alone = [], []
    html = render_certificate_html(record, "en", record_sha256=sha)
    render_certificate_pdf(html, record, data, "en")  # warm-up: imports, fonts
    weasyprint.HTML(string=html, base_url=templates_dir().as_uri() + "/").write_pdf()
    for _ in range(repeats):
        t = time.perf_counter()
        html = render_certificate_html(record, "en", record_sha256=sha)
        render_certificate_pdf(html, record, data, "en")
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        weasyprint.HTML(string=html, base_url=templates_dir().as_uri() + "/",
                        url_fetcher=ConfinedURLFetcher().for_weasyprint()).write_pdf()
        alone.append(time.perf_counter() - t)
    return min(ours), min(alone)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=int, default=20)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--repeats", type=int, default=3,
                        help="renders timed per side in benchmark 1 (the best one counts)")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="certgen-bench-") as tmp_name:
        tmp = Path(tmp_name)
        bundles = _bundles(tmp, args.bundles)
        ours, alone = bench_render(bundles[0], args.repeats)
        results["render_vs_weasyprint"] = {"certgen_s": round(ours, 3), "weasyprint_s": round(alone, 3),
                                           "ratio": round(ours / alone, 3), "target": "<= 1.2"}
        # Certificates are issued by a laboratory: the examples' sample lab profile.
        common = ["--lang", args.lang, "--lab", str(SAMPLE_LAB)]
        full1 = _cli(["build", *bundles, "--out", str(tmp / "out1"), "--jobs", "1", *common])
        again = _cli(["build", *bundles, "--out", str(tmp / "out1"), "--jobs", "1", *common])
        full2 = _cli(["build", *bundles, "--out", str(tmp / "out2"), "--jobs", "2", *common])
        results["no_change_rebuild"] = {"full_s": round(full1, 2), "rebuild_s": round(again, 2),
                                        "ratio": round(again / full1, 3), "target": "<= 0.05"}
        results["jobs2_vs_jobs1"] = {"jobs1_s": round(full1, 2), "jobs2_s": round(full2, 2),
                                     "speedup": round(full1 / full2, 3), "target": ">= 1.8"}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
