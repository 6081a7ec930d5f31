"""Explainer pages: every engine figure is computed at build time, formatted per locale, and
the rendered pages are pinned by snapshots (so a change in the arithmetic shows up here)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from recordkit import gold_sample_record

from certgen.builders.explainers import build_page, explainer_figures
from certgen.errors import ExplainerError
from certgen.render.explainers import (
    LANGS,
    PAGES,
    Figure,
    fill_placeholders,
    format_number,
    source_path,
)
from certgen.sop import load_rules

# Figures the engine computes (spec test vectors, grade-line table, worked examples). None of
# them may be typed into a page: it must come from a placeholder.
ENGINE_FIGURES = (
    "72.5", "38.61", "122.7", "124.2", "91.55", "0.6455", "0.5402", "43.5", "0.3333",
    "0.1714", "0.4000", "0.0714", "0.1667", "78.2", "69.07", "0.611", "8.333", "11.111",
    "16.667", "0.275", "0.218", "0.0625", "8150", "8 150", "8,150", "0.6667",
)


def _literal_pattern(figure: str) -> re.Pattern[str]:
    forms = {re.escape(figure), re.escape(figure.replace(".", ","))}
    return re.compile(r"(?<![\w.,{])(?:" + "|".join(sorted(forms)) + r")(?![\d])")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", PAGES)
def test_no_engine_figure_is_typed_into_a_page(slug: str, lang: str) -> None:
    text = source_path(slug, lang).read_text(encoding="utf-8")
    without_placeholders = re.sub(r"\{\{[^}]*\}\}", "", text)
    typed = [
        f for f in ENGINE_FIGURES if _literal_pattern(f).search(without_placeholders)
    ]
    assert typed == [], f"{slug}.{lang}: figures typed instead of computed: {typed}"


def test_the_literal_scan_catches_both_decimal_forms() -> None:
    assert _literal_pattern("72.5").search("a score of 72.5 here")
    assert _literal_pattern("72.5").search("оценка 72,5 здесь")
    assert not _literal_pattern("72.5").search("{{wx.score}} and 172.55")


def test_figures_are_the_spec_test_vectors() -> None:
    f = explainer_figures()
    got = {k: format_number(f[k], "en") for k in (
        "wx.g", "wx.s", "wx.score", "cap.avg", "cap.low1", "cap.low01", "cap.g", "cap.s",
        "cap.score", "cap.per_frame", "dil.mean", "dil.score", "gl.gold.gmax", "gl.gold.smax",
        "gl.platinum.gmax", "gl.platinum.smax", "k1.7200", "k01.7200", "real.score",
    )}
    assert got == {
        "wx.g": "0.25", "wx.s": "0.3333", "wx.score": "72.5", "cap.avg": "122.7",
        "cap.low1": "43.5", "cap.low01": "20.0", "cap.g": "0.6455", "cap.s": "0.5402",
        "cap.score": "38.61", "cap.per_frame": "124.2", "dil.mean": "91.55",
        "dil.score": "78.2", "gl.gold.gmax": "0.1714", "gl.gold.smax": "0.4000",
        "gl.platinum.gmax": "0.0714", "gl.platinum.smax": "0.1667", "k1.7200": "72",
        "k01.7200": "8", "real.score": "69.07",
    }


@pytest.mark.parametrize(("lang", "prose", "math"), [
    ("en", "72.5", "72.5"), ("ru", "72,5", "72{,}5"), ("pt", "72,5", "72{,}5"),
])
def test_numbers_follow_the_locale_in_prose_and_in_formulas(lang: str, prose: str, math: str) -> None:
    fig = explainer_figures()["wx.score"]
    assert format_number(fig, lang) == prose
    assert format_number(fig, lang, math=True) == math
    page = build_page("frame-pacing", lang)
    assert f"= {math}" in page.markdown  # inside the worked example's formula
    avg = prose.replace("72", "122").replace("5", "7")  # 122.7 / 122,7 in the table's prose
    assert f"| {avg}\u00a0FPS |" in page.markdown  # the unit joined to its number


def test_pages_in_the_three_languages_use_the_same_figures() -> None:
    pattern = re.compile(r"\{\{\s*([a-z0-9_.:]+)\s*\}\}")
    for slug in PAGES:
        sets = {lang: set(pattern.findall(source_path(slug, lang).read_text("utf-8")))
                for lang in LANGS}
        assert sets["en"] == sets["ru"] == sets["pt"], slug


def test_unknown_placeholder_names_file_and_line() -> None:
    with pytest.raises(ExplainerError) as err:
        fill_placeholders("one\ntwo {{no.such}}\n", {"a": Figure(1.0, 0)}, "en", "x.md")
    assert str(err.value) == "x.md:2: unknown figure {{no.such}}"


def test_code_blocks_are_left_alone() -> None:
    text = "```\n$ms = {{a}}\n```\nand {{a}}"
    out = fill_placeholders(text, {"a": Figure(1.5, 1)}, "ru", "x.md")
    assert out == "```\n$ms = {{a}}\n```\nand 1,5"


def test_changing_a_weight_changes_the_page() -> None:
    """The pages follow the rules file: other weights give other figures, on every page."""
    rules = load_rules()
    other = dataclasses.replace(rules, weight_gap=0.6, weight_stutter=0.4)
    for lang in LANGS:
        before = build_page("frame-pacing", lang, rules)
        after = build_page("frame-pacing", lang, other)
        assert before.body_html != after.body_html
        old_score = format_number(explainer_figures(rules)["wx.score"], lang, math=True)
        new_score = format_number(explainer_figures(other)["wx.score"], lang, math=True)
        assert old_score != new_score
        assert f"&= {old_score}" in before.markdown and f"&= {old_score}" not in after.markdown
        assert f"&= {new_score}" in after.markdown


@pytest.mark.parametrize("slug", PAGES)
def test_russian_explainers_are_typeset(slug: str) -> None:
    """No line of a Russian explainer ends with a one-letter word: its space is a no-break one
    (formulas and code keep theirs)."""
    from certgen.render.i18n import bind_short_words

    page = build_page(slug, "ru", load_rules(), sample=gold_sample_record())
    for text in (page.markdown, page.title, page.description):
        assert bind_short_words(text, "ru") == text
    assert "\u00a0" in page.markdown


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", PAGES)
def test_explainer_page_html_snapshot(slug: str, lang: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    from certgen.render.site import render_explainer_html

    rules = load_rules()
    page = build_page(slug, lang, rules, sample=gold_sample_record())
    html = render_explainer_html(page, rules_version=rules.rules_version)
    assert f'<html lang="{lang}">' in html
    for other in LANGS:
        href = f"{slug}.html" if other == lang else f"../../{other}/explainers/{slug}.html"
        assert f'<link rel="alternate" hreflang="{other}" href="{href}">' in html
    assert "<math" in html and "MATHTOKEN" not in html
    assert html == snapshot


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_form_draws_formulas_as_svg_pictures(lang: str) -> None:
    page = build_page("frame-pacing", lang)
    assert "<math" not in page.body_pdf_html
    assert 'src="data:image/svg+xml;base64,' in page.body_pdf_html


# --------------------------------------------------------------------------- the certificate tour


@pytest.fixture(scope="module")
def gold_record() -> dict[str, object]:
    """The GOLD sample's record, made here independently of certgen.builders.explainers."""
    import tempfile
    from pathlib import Path

    from certgen.fleet import FleetStore
    from certgen.pipeline import make_record

    examples = Path(__file__).resolve().parents[1] / "examples"
    with FleetStore.open(Path(tempfile.mkdtemp(prefix="certgen-test-")) / "f.sqlite") as store:
        with (examples / "fleet.jsonl").open(encoding="utf-8") as fh:
            store.import_jsonl(fh, name="fleet.jsonl")
        # record.json's data: the figures the tour quotes, as a reader of the record sees them
        return make_record(examples / "gold-rx7800xt", fleet=store).model_dump(mode="json")


@pytest.mark.parametrize("lang", LANGS)
def test_the_tour_quotes_the_gold_sample_record_in_the_page_language(
    lang: str, gold_record: dict
) -> None:
    from certgen.render.i18n import fmt_fps, fmt_pct, fmt_score

    page = build_page("reading-your-certificate", lang, sample=gold_sample_record())
    text = page.markdown
    cert = gold_record["certificate"]["id"]
    assert f"](../../samples/{cert}/certificate.{lang}.html)" in text
    for tier in gold_record["tiers"]:
        assert fmt_score(tier["mean_fluidity"], lang) in text
    run = next(r for r in gold_record["runs"] if r["soft_limit"] and r["soft_limit"]["raised"])
    m = run["metrics"]
    for figure in (fmt_fps(m["avg_fps"], lang), fmt_fps(m["low_1pct_fps"], lang),
                   fmt_fps(m["low_0_1pct_fps"], lang), fmt_score(m["fluidity_score"], lang),
                   fmt_pct(m["stutter"], lang), fmt_pct(m["consistency_gap"], lang),
                   run["title"]):
        assert figure in text, figure
    assert f"n = {run['ranks']['fluidity_score']['n']}" in text
    assert "{{" not in text and "gold." not in text


def test_what_the_tour_says_of_the_gold_sample_is_true(gold_record: dict) -> None:
    """The prose states these facts in words; the sample must keep them true."""
    rules = gold_record["rules"]
    means = [t["mean_fluidity"] for t in gold_record["tiers"]]
    assert len(means) == 2 and all(rules["gold_line"] <= x < rules["platinum_line"] for x in means)
    assert gold_record["grade"]["value"] == "GOLD" and gold_record["grade"]["cap"] is None
    assert all(r["status"] == "recorded" for r in gold_record["runs"])
    raised = [r for r in gold_record["runs"] if r["soft_limit"] and r["soft_limit"]["raised"]]
    assert len(raised) == 1 and raised[0]["metrics"]["stutter"] > rules["soft_limit_stutter"]
    assert raised[0]["first_capture"]["matches"] is True
    assert raised[0]["ranks"]["fluidity_score"]["n"] < rules["ranking_min_cohort"]
    first_ranked = next(r for r in gold_record["runs"]
                        if r["ranks"]["fluidity_score"]["percentile"] is not None)
    assert first_ranked["ranks"]["fluidity_score"]["n"] >= rules["ranking_min_cohort"]


def test_what_the_tour_says_of_the_gold_sample_s_certificate_is_true() -> None:
    """Issue 39: the tour states in words what the GOLD sample's certificate shows (no
    diagnostic section, every capture in agreement with the bundle, one archived first capture,
    unsigned, SPECIMEN); the sample's own certificate, rendered here, must keep them true."""
    from certgen.render.certificate import render_certificate_html

    record = gold_sample_record()
    assert record.issuer is not None and record.issuer.specimen
    html = render_certificate_html(record, "en", record_sha256="0" * 64,
                                   verify_base=record.issuer.verification_base)
    for section in ("frame-diagnostics", "measured-diagnostics", "cadence-diagnostics",
                    "validity-diagnostics"):
        assert f'class="{section}"' not in html, section
    assert "diagnostic, not graded</span></h2>" not in html
    assert html.count("As recorded by the capture") == len(record.runs)
    assert html.count("agrees with the declared values") == len(record.runs) + 1
    assert [c.run for c in record.audit.first_captures] == [
        next(r.index for r in record.runs if r.soft_limit is not None and r.soft_limit.raised)]
    assert "This certificate is not digitally signed." in html
    assert "SPECIMEN" in html
    assert all(r.measured is not None and r.measured.validity is not None
               and not r.measured.validity.findings for r in record.runs)
    # "Each log records the GPU as … and the driver as …": the same in every capture.
    assert len({(r.recorded.gpu, r.recorded.driver) for r in record.runs
                if r.recorded is not None}) == 1
    assert all(r.recorded is not None for r in record.runs)


@pytest.mark.parametrize("lang", LANGS)
def test_no_gold_sample_figure_is_typed_into_the_tour(lang: str) -> None:
    from certgen.builders.explainers import sample_figures
    from certgen.render.explainers import Figure as Fig
    from certgen.render.explainers import format_value

    text = source_path("reading-your-certificate", lang).read_text(encoding="utf-8")
    without_placeholders = re.sub(r"\{\{[^}]*\}\}", "", text)
    decimals = sorted({format_value(v, "en") for v in sample_figures(gold_sample_record()).values()
                       if isinstance(v, Fig) and v.decimals > 0})
    assert decimals  # the scan has something to look for
    typed = [f for f in decimals if _literal_pattern(f).search(without_placeholders)]
    assert typed == []


def test_the_tour_needs_the_gold_sample_s_record_and_never_makes_one() -> None:
    """docs.py reads no capture and no fleet: the site builder gives the record it built."""
    with pytest.raises(ExplainerError) as info:
        build_page("reading-your-certificate", "en")
    assert str(info.value) == ("the explainer 'reading-your-certificate' quotes the GOLD sample: "
                               "give its record (sample=)")


# --------------------------------------------------------------------------- the calibration page


@pytest.mark.parametrize("lang", LANGS)
def test_no_calibration_example_figure_is_typed_into_the_page(lang: str) -> None:
    """The ten-card example's scores, percentiles, interval and shares come from
    certgen.fleet.calibration through placeholders; none is typed into the page."""
    from certgen.builders.explainers import calibration_figures

    text = source_path("calibration", lang).read_text(encoding="utf-8")
    without_placeholders = re.sub(r"\{\{[^}]*\}\}", "", text)
    figures = calibration_figures()
    scores = sorted({format_number(f, "en") for k, f in figures.items() if k.endswith(".score")})
    assert len(scores) == 10
    typed = [f for f in scores if _literal_pattern(f).search(without_placeholders)]
    assert typed == []


def test_the_calibration_example_is_what_its_page_says() -> None:
    """The page states these facts of its ten-card fleet in words (card 6 on the GOLD line,
    card 7 re-graded up, card 10 past the Soft Limit, a wide interval); the review keeps them
    true, and the page prints the review's own figures."""
    from certgen.builders.explainers import calibration_figures

    rules = load_rules()
    f = calibration_figures(rules)
    assert f["cal.c6.score"].value == rules.gold_line
    assert f["cal.c7.score"].value < rules.gold_line <= f["cal.c7.score"].value + 1
    assert f["cal.c10.s"].value > rules.soft_limit_stutter
    assert f["cal.gold.pct"].value == 100 * f["cal.gold.below"].value / f["cal.cards"].value
    assert f["cal.gold.hi"].value - f["cal.gold.lo"].value >= 30  # wide: ten cards
    assert f["cal.cand.card"].value == 7 and f["cal.cand.up"].value == 1
    for lang in LANGS:
        page = build_page("calibration", lang, rules)
        assert format_number(f["cal.gold.pct"], lang) in page.markdown
        assert "{{" not in page.markdown


def _glyphs(tex: str, display: bool = True) -> set[str]:
    """The glyphs (ziamath symbol ids) a formula's PDF picture draws."""
    import base64

    from certgen.render.explainers import _formula

    html = _formula(tex, display, "svg", "test")
    svg = base64.b64decode(re.search(r'base64,([^"]+)"', html).group(1)).decode()  # type: ignore[union-attr]
    return set(re.findall(r'<use href="#([^"]+)"', svg))


def test_a_ceiling_bracket_beside_a_fraction_keeps_its_text_size() -> None:
    """⌈p·N⌉ beside a tall fraction (en frame-pacing.pdf p2) is drawn with the same bracket
    glyphs as ⌈p·N⌉ alone, not with a taller variant reaching far below the baseline: without
    \\left/\\right a ceiling or floor bracket does not stretch (as in TeX). With \\left/\\right
    it still does."""
    frac = r"\frac{1000}{\tfrac{1}{k_p}\sum_{j=1}^{k_p} t_{(j)}}"
    for fences in (r"\lceil p \cdot N \rceil", r"\lfloor p \cdot N \rfloor"):
        alone, beside = _glyphs(rf"{fences},"), _glyphs(rf"{fences}, \qquad {frac}")
        assert beside - _glyphs(frac) <= alone, fences
    stretched = _glyphs(rf"\left\lceil {frac} \right\rceil")
    assert stretched - _glyphs(frac) - _glyphs(r"\lceil x \rceil") != set()


def test_an_inline_formula_is_joined_to_the_word_before_it_in_the_pdf() -> None:
    """In the PDF body an inline formula follows a WORD JOINER, so WeasyPrint breaks the line
    before the word it belongs to, not at the line's first space (ru frame-pacing.pdf printed
    "Раздел" alone on a line above "парка … по R"); the browser's MathML needs none."""
    page = build_page("frame-pacing", "ru", load_rules())
    assert "по \u2060<img" in page.body_pdf_html
    assert "\u2060" not in page.body_html
