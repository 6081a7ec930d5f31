"""Verify benchmark, as a ratio measured in one run (python bench/bench_verify.py [--bundle DIR]
[--repeats N]).

`certgen verify` of a timestamped certificate (a signature timestamp, the CA's CRL in a DSS
revision, a document timestamp; as `build --tsa` makes it) with certgen's PDF reader
(certgen/support/objstreams.py: each object stream's header read once per reader) against the
same verify with pyHanko's own reader, which parses a stream's header again for every object it
reads from it. Same file, same checks, same verdict (checked); target ≤ 0.6×.

The certificate is built here from `--bundle` (default: examples/gold-rx7800xt, English) and
signed by a throwaway CA through a real RFC 3161 authority on loopback (tests/tsakit.py,
OpenSSL's `ts`), so this needs a source checkout and openssl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # tsakit: the loopback timestamp authority and CA


def _timestamped(bundle: Path, out: Path) -> tuple[bytes, bytes]:
    """(the timestamped certificate, its CA's certificate in PEM)."""
    from tsakit import PASSPHRASE, running_authority

    from certgen.builders.certificate import build_bundle
    from certgen.inputs.lab import load_lab
    from certgen.render.sign import signing_key

    with running_authority(lab_valid_for=dt.timedelta(days=2), signatory="A. Sample") as tsa:
        key = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12").with_tsa(tsa.tsa_url)
        built = build_bundle(bundle, out, languages=["en"], lab=load_lab(ROOT / "examples" / "lab.yaml"),
                             sign=key)
        return (Path(built.folder) / "certificate.en.pdf").read_bytes(), tsa.ca_pem


def _verify_seconds(pdf: bytes, ca: bytes, repeats: int, *, pyhanko_reader: bool
                    ) -> tuple[float, str]:
    """Median CPU seconds of verify_pdf over `repeats`, and its summary line."""
    import certgen.support.objstreams as objstreams
    from certgen.verify.verdict import verify_pdf

    cls = objstreams._reader_class
    if pyhanko_reader:
        from pyhanko.pdf_utils.reader import PdfFileReader

        objstreams._reader_class = lambda: PdfFileReader  # type: ignore[assignment]
    try:
        times, summary = [], ""
        for _ in range(repeats):
            start = time.process_time()
            verdict = verify_pdf(pdf, trust=ca, tsa_trust=ca)
            times.append(time.process_time() - start)
            summary = verdict.summary()
        return statistics.median(times), summary
    finally:
        objstreams._reader_class = cls  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "examples" / "gold-rx7800xt")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="certgen-bench-verify-") as tmp:
        pdf, ca = _timestamped(args.bundle, Path(tmp))
    _verify_seconds(pdf, ca, 1, pyhanko_reader=False)  # warm-up: imports, fonts, the render
    ours, said = _verify_seconds(pdf, ca, args.repeats, pyhanko_reader=False)
    theirs, peer_said = _verify_seconds(pdf, ca, args.repeats, pyhanko_reader=True)
    if said != peer_said:
        raise SystemExit(f"the two readers gave different verdicts:\n{said}\n{peer_said}")
    ratio = ours / theirs
    print(f"timestamped certificate: {len(pdf)} bytes, from {args.bundle.name}; "
          f"{args.repeats} repeats, median CPU seconds")
    print(f"verdict (both readers): {said.splitlines()[-1]}")
    print("benchmark             median  peer                      peer median  ratio  target  result")
    print(f"verify_timestamped    {ours:6.2f}  pyHanko's own reader      {theirs:11.2f}  "
          f"{ratio:5.2f}  0.60    {'ok' if ratio <= 0.6 else 'MISSED'}")


if __name__ == "__main__":
    main()
