"""Every input is read once: a build opens card.yaml once and each capture once (issue 9).

The count comes from an audit hook (sys.addaudithook, event "open") in a fresh interpreter, so
nothing the test process itself opened is counted and the hook does not outlive the test.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import yaml
from bundlekit import opened_during_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOLD = EXAMPLES / "gold-rx7800xt"


def _opens_during_build(bundle: Path, out: Path, log: Path) -> Counter[str]:
    """{resolved path: times opened} of every open() while `certgen build` runs on one bundle."""
    opened = opened_during_cli(["build", str(bundle), "--out", str(out), "--jobs", "1"], log,
                               env={"SOURCE_DATE_EPOCH": "1764374400",
                                    "CERTGEN_LAB": str(EXAMPLES / "lab.yaml")})
    return Counter(os.path.realpath(p) for p in opened)


def _named_files(bundle: Path) -> list[str]:
    card = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    names = []
    for run in card["runs"]:
        for name in (run.get("capture"), (run.get("first_capture") or {}).get("file")):
            if name and name not in names:
                names.append(name)
    return names


def test_a_build_of_the_gold_sample_opens_the_card_and_each_capture_once(tmp_path: Path) -> None:
    bundle = tmp_path / "gold"
    shutil.copytree(GOLD, bundle)
    names = _named_files(bundle)
    assert len(names) >= 4  # captures and an archived first capture
    opened = _opens_during_build(bundle, tmp_path / "out", tmp_path / "opened.json")
    inside = {p: n for p, n in opened.items() if p.startswith(str(bundle.resolve()) + os.sep)}
    expected = {str((bundle / name).resolve()): 1 for name in ["card.yaml", *names]}
    assert inside == expected
    assert (tmp_path / "out" / "SAMPLE-GOLD-0002" / "manifest.json").is_file()


def test_a_stray_file_in_the_bundle_is_never_opened(tmp_path: Path) -> None:
    """Files card.yaml does not name are not read (a 2 GB junk file must cost nothing)."""
    bundle = tmp_path / "gold"
    shutil.copytree(GOLD, bundle)
    junk = bundle / "captures" / "junk.bin"
    junk.write_bytes(b"x" * 4096)
    opened = _opens_during_build(bundle, tmp_path / "out", tmp_path / "opened.json")
    assert str(junk.resolve()) not in opened


def test_a_zipped_bundle_is_opened_once_and_never_extracted(tmp_path: Path) -> None:
    zipped = tmp_path / "gold.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for path in sorted(GOLD.rglob("*")):
            if path.is_file():
                zf.write(path, "gold/" + path.relative_to(GOLD).as_posix())
    opened = _opens_during_build(zipped, tmp_path / "out", tmp_path / "opened.json")
    assert opened[str(zipped.resolve())] == 1
    extracted = [p for p in opened if p.endswith(("card.yaml", ".csv", ".json"))
                 and "certgen-bundle-" in p]
    assert extracted == []


def test_the_site_opens_each_sample_capture_and_the_sample_fleet_once(tmp_path: Path) -> None:
    """`certgen site` builds the samples and the explainers: the certificate tour quotes the
    GOLD sample from the record the site builder made, so no capture or fleet is read again
    (issue 22: docs.py ran the pipeline a second time, opening GOLD's captures and the fleet
    twice)."""
    bundles = sorted(p for p in EXAMPLES.iterdir() if (p / "card.yaml").is_file())
    assert [b.name for b in bundles] == ["gold-rx7800xt", "platinum-rtx4070s", "silver-gtx1660s"]
    opened = Counter(os.path.realpath(p) for p in opened_during_cli(
        ["site", "--out", str(tmp_path / "site")], tmp_path / "opened.json",
        env={"SOURCE_DATE_EPOCH": "1795910400"}))  # 2026-11-29, the samples' issue date
    expected = {str((bundle / name).resolve()): 1
                for bundle in bundles for name in ["card.yaml", *_named_files(bundle)]}
    expected[str((EXAMPLES / "fleet.jsonl").resolve())] = 1
    assert len(expected) >= 12  # three cards, their captures and first captures, the fleet
    assert {p: n for p, n in opened.items() if p in expected} == expected
    assert (tmp_path / "site" / "manifest.json").is_file()
