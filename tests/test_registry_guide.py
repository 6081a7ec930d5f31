"""`certgen registry --explainers` (issue 39): a laboratory publishes the explainers beside its
registry, in the languages of its certificates, with what they quote and link (the GOLD sample
certificate, the sample reports, the calibration review), and the registry pages link them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sitekit import parse, resolve

from certgen.builders.certificate import build_bundle
from certgen.builders.site import build_guide, guide_languages
from certgen.cli import main
from certgen.errors import ExplainerError
from certgen.inputs.lab import load_lab
from certgen.render.explainers import PAGES

ROOT = Path(__file__).resolve().parent.parent


def test_the_guide_is_published_in_the_certificates_languages_and_every_link_resolves(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(ROOT / "examples" / "silver-gtx1660s", bundle)
    card = bundle / "card.yaml"
    text = card.read_text("utf-8")
    card.write_text(text.replace('languages: ["en", "ru", "pt"]', 'languages: ["ru", "en"]'),
                    "utf-8")
    assert card.read_text("utf-8") != text
    build_bundle(bundle, tmp_path / "out", lab=load_lab(ROOT / "examples" / "lab.yaml"))
    registry = tmp_path / "registry"
    try:
        code = main(["registry", str(tmp_path / "out"), "--out", str(registry), "--as-of",
                     "2026-12-06", "--explainers"])
    except SystemExit as exited:  # a refusal exits; success returns
        code = exited.code
    out = capsys.readouterr().out
    assert code in (0, None), out
    assert "explainers in en, ru:" in out
    guide = registry / "guide"
    for lang in ("en", "ru"):
        for slug in PAGES:
            assert (guide / lang / "explainers" / f"{slug}.html").is_file()
            assert (guide / lang / "explainers" / f"{slug}.pdf").read_bytes().startswith(b"%PDF")
    assert not (guide / "pt").exists()
    tour = (guide / "ru" / "explainers" / "reading-your-certificate.html").read_text("utf-8")
    assert "SAMPLE-GOLD-0002" in tour and "{{" not in tour
    assert (guide / "samples" / "SAMPLE-GOLD-0002" / "certificate.ru.html").is_file()
    # Every internal link of the registry and the guide leads to a file that is there (the
    # explainers link the sample reports and the calibration review: they are published too),
    # and no page names a language the guide does not have.
    dead = []
    for page in sorted(registry.rglob("*.html")):
        parsed = parse(page)
        for href in parsed.links + parsed.assets:
            target = resolve(registry, page, href)
            if target is not None and not target[0].exists():
                dead.append(f"{page.relative_to(registry)} -> {href}")
        if page.is_relative_to(guide / "en" / "explainers"):
            assert set(parsed.alternates) == {"en", "ru", "x-default"}, page
    assert dead == []
    home = parse(registry / "SAMPLE-SILVER-0003" / "en" / "index.html").links
    assert any(resolve(registry, registry / "SAMPLE-SILVER-0003" / "en" / "index.html", h)
               == ((guide / "index.html").resolve(), "") for h in home), home


def test_the_guide_needs_the_gold_sample_and_says_so(tmp_path: Path) -> None:
    with pytest.raises(ExplainerError) as refused:
        build_guide(tmp_path / "out", languages=("en",), examples=tmp_path / "no-examples")
    assert "\n" not in str(refused.value)
    assert "publish them from a source checkout of certgen" in str(refused.value)
    assert not (tmp_path / "out" / "guide" / "en").exists()


def test_the_guide_languages_follow_the_certificates() -> None:
    assert guide_languages([("pt",), ("ru", "pt")]) == ("ru", "pt")
    assert guide_languages([]) == ("en",)
