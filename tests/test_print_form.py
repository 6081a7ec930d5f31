"""A document's PDF is rendered from its print form: the HTML without the screen's links to the
other languages and the site (print hides them). So the PDF does not depend on which languages
were built beside it, and a certificate's PDF comes from the very HTML `certgen verify` renders
again from the record (certgen.render.certificate.certificate_print_html).

Each test records the HTML handed to the renderer (the recorder passes it on, so the PDFs are
still made) and compares what a one- or two-language build rendered with what a build in every
language rendered."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from conftest import CliBuild

import certgen.builders.site as site_builder
import certgen.render.calibration as calibration_render
import certgen.render.certificate as certificate_render
import certgen.render.report as report_render
from certgen.builders.certificate import build_bundle
from certgen.builders.explainers import build_page
from certgen.builders.report import render_report, report_record
from certgen.inputs.lab import load_lab
from certgen.record import load_record
from certgen.render.certificate import certificate_print_html, verify_url
from certgen.render.site import render_explainer_html
from certgen.sop import load_rules

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _recorded(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[tuple[str, str]]:
    """(lang, html) of every render `module` asks for from now on."""
    seen: list[tuple[str, str]] = []
    render: Callable[..., bytes] = module.html_to_pdf

    def recording(html: str, **options: object) -> bytes:
        seen.append((str(options["lang"]), html))
        return render(html, **options)

    monkeypatch.setattr(module, "html_to_pdf", recording)
    return seen


def test_a_certificates_pdf_is_rendered_from_the_html_verify_renders(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gold_build: CliBuild) -> None:
    """GOLD in English alone, and in three languages in another order with a site home: the
    same HTML for the English PDF, verify's, and the same PDF as `certgen build`'s in every
    language (the session's `gold_build`, whose renders these builds then share)."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    lab = load_lab(EXAMPLES / "lab.yaml")
    seen = _recorded(monkeypatch, certificate_render)
    alone = build_bundle(EXAMPLES / "gold-rx7800xt", tmp_path / "en", languages=["en"], lab=lab)
    beside = build_bundle(EXAMPLES / "gold-rx7800xt", tmp_path / "all", lab=lab,
                          languages=["ru", "en", "pt"], home="../../{lang}/index.html")
    assert [lang for lang, _ in seen] == ["en", "ru", "en", "pt"]
    en_alone, en_beside = seen[0][1], seen[2][1]
    assert en_alone == en_beside
    folder = Path(beside.folder)
    # The page published beside it links the other languages and the site; the PDF's HTML not.
    page = (folder / "certificate.en.html").read_text("utf-8")
    assert 'hreflang="ru"' in page and 'hreflang="ru"' not in en_beside
    assert "../../en/index.html" in page and "../../en/index.html" not in en_beside
    # What verify's content check renders again from the attached record, byte for byte.
    data = (folder / "record.json").read_bytes()
    record = load_record(data, source="record.json")
    sha = hashlib.sha256(data).hexdigest()
    assert record.issuer is not None
    base = record.issuer.verification_base
    assert verify_url(base, record.certificate.id, sha) in en_beside
    assert certificate_print_html(record, "en", record_sha256=sha, verify_base=base,
                                  signed=False) == en_beside
    assert (folder / "certificate.en.pdf").read_bytes() == (
        Path(alone.folder) / "certificate.en.pdf").read_bytes() == (
        gold_build.folder / "certificate.en.pdf").read_bytes()


def test_a_reports_pdf_does_not_depend_on_the_languages_beside_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    record = report_record([EXAMPLES / "compare/change/before.json",
                            EXAMPLES / "compare/change/after.json"])
    seen = _recorded(monkeypatch, report_render)
    alone = dict(render_report(record, ["pt"]))
    beside = dict(render_report(record, ["en", "ru", "pt"], home="../../{lang}/index.html"))
    assert [lang for lang, _ in seen] == ["pt", "en", "ru", "pt"]
    assert seen[0][1] == seen[3][1]
    assert 'hreflang="en"' in beside["report.pt.html"].decode() and 'hreflang="en"' not in seen[3][1]
    assert alone["report.pt.pdf"] == beside["report.pt.pdf"]


def test_a_calibration_reviews_pdf_does_not_depend_on_the_languages_beside_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = _recorded(monkeypatch, calibration_render)
    site_builder.build_calibration(tmp_path / "ru", EXAMPLES, languages=("ru",))
    site_builder.build_calibration(tmp_path / "all", EXAMPLES)
    assert [lang for lang, _ in seen] == ["ru", "en", "ru", "pt"]
    assert seen[0][1] == seen[2][1]
    page = (tmp_path / "all/calibration/calibration.ru.html").read_text("utf-8")
    assert 'hreflang="pt"' in page and 'hreflang="pt"' not in seen[2][1]


def test_an_explainers_pdf_form_names_no_other_language() -> None:
    rules = load_rules()
    page = build_page("frame-pacing", "ru", rules, sample=None)
    two = render_explainer_html(page, rules_version=rules.rules_version, for_pdf=True,
                                languages=("en", "ru"))
    three = render_explainer_html(page, rules_version=rules.rules_version, for_pdf=True)
    assert two == three
    screen = render_explainer_html(page, rules_version=rules.rules_version,
                                   languages=("en", "ru"))
    assert 'hreflang="en"' in screen and 'hreflang="en"' not in three
