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
from typing import Any

import pytest
import yaml
from bundlekit import opened_during_cli
from rendercache import RenderCache

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOLD = EXAMPLES / "gold-rx7800xt"


def _opens_during_build(bundle: Path, out: Path, log: Path, cache: Path | None
                        ) -> Counter[str]:
    """{resolved path: times opened} of every open() while `certgen build` runs on one bundle.
    Its renders come from the run's render cache (`cache`; its files are outside the bundle,
    and what the build reads is the point here, not what it renders)."""
    opened = opened_during_cli(["build", str(bundle), "--out", str(out), "--jobs", "1"], log,
                               env={"SOURCE_DATE_EPOCH": "1764374400",
                                    "CERTGEN_LAB": str(EXAMPLES / "lab.yaml")},
                               render_cache=cache)
    return Counter(os.path.realpath(p) for p in opened)


def _named_files(bundle: Path) -> list[str]:
    card = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    names = []
    for run in card["runs"]:
        for name in (run.get("capture"), (run.get("first_capture") or {}).get("file"),
                     *(r.get("capture") for r in run.get("repeats") or [])):
            if name and name not in names:
                names.append(name)
    return names


@pytest.fixture(scope="module")
def gold_build(tmp_path_factory: pytest.TempPathFactory, render_cache: RenderCache
               ) -> dict[str, Any]:
    """One audit-hooked build of a copy of GOLD with a stray file planted among its captures,
    shared by the two tests below (a build renders three PDFs): the GOLD test looks only at
    the files inside the bundle, which must be exactly the named ones, so the planted file
    changes nothing it proves. Read-only."""
    root = tmp_path_factory.mktemp("gold-build")
    bundle = root / "gold"
    shutil.copytree(GOLD, bundle)
    junk = bundle / "captures" / "junk.bin"
    junk.write_bytes(b"x" * 4096)
    opened = _opens_during_build(bundle, root / "out", root / "opened.json",
                                 render_cache.for_subprocess())
    return {"bundle": bundle, "junk": junk, "opened": opened, "out": root / "out"}


def test_a_build_of_the_gold_sample_opens_the_card_and_each_capture_once(
        gold_build: dict[str, Any]) -> None:
    bundle = gold_build["bundle"]
    names = _named_files(bundle)
    assert len(names) >= 4  # captures and an archived first capture
    opened = gold_build["opened"]
    inside = {p: n for p, n in opened.items() if p.startswith(str(bundle.resolve()) + os.sep)}
    expected = {str((bundle / name).resolve()): 1 for name in ["card.yaml", *names]}
    assert inside == expected
    assert (gold_build["out"] / "SAMPLE-GOLD-0002" / "manifest.json").is_file()


def test_a_stray_file_in_the_bundle_is_never_opened(gold_build: dict[str, Any]) -> None:
    """Files card.yaml does not name are not read (a 2 GB junk file must cost nothing)."""
    junk = gold_build["junk"]
    assert junk.is_file()
    assert str(junk.resolve()) not in gold_build["opened"]


def test_a_zipped_bundle_is_opened_once_and_never_extracted(
        tmp_path: Path, subprocess_render_cache: Path | None) -> None:
    zipped = tmp_path / "gold.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for path in sorted(GOLD.rglob("*")):
            if path.is_file():
                zf.write(path, "gold/" + path.relative_to(GOLD).as_posix())
    opened = _opens_during_build(zipped, tmp_path / "out", tmp_path / "opened.json",
                                 subprocess_render_cache)
    assert opened[str(zipped.resolve())] == 1
    extracted = [p for p in opened if p.endswith(("card.yaml", ".csv", ".json"))
                 and "certgen-bundle-" in p]
    assert extracted == []


def test_the_site_opens_each_sample_capture_and_the_sample_fleet_once(
        sample_site: Path, sample_site_opens: list[str]) -> None:
    """`certgen site` builds the samples and the explainers: the certificate tour quotes the
    GOLD sample from the record the site builder made, so no capture or fleet is read again
    (issue 22: docs.py ran the pipeline a second time, opening GOLD's captures and the fleet
    twice). The opens are those of the session's sample site, which the `sample_site` fixture
    builds with `certgen site` under the same audit hook (tests/conftest.py), undated: a date
    changes what the pages print, not which inputs are read."""
    bundles = sorted(p for p in EXAMPLES.iterdir() if (p / "card.yaml").is_file())
    assert [b.name for b in bundles] == ["framegen-rx7800xt", "gold-rx7800xt", "platinum-rtx4070s",
                                         "silver-gtx1660s"]
    opened = Counter(os.path.realpath(p) for p in sample_site_opens)
    expected = {str((bundle / name).resolve()): 1
                for bundle in bundles for name in ["card.yaml", *_named_files(bundle)]}
    expected[str((EXAMPLES / "fleet.jsonl").resolve())] = 1
    assert len(expected) >= 15  # four cards, their captures and first captures, the fleet
    assert {p: n for p, n in opened.items() if p in expected} == expected
    assert (sample_site / "manifest.json").is_file()
