"""`certgen site`: self-contained, every internal link resolves, every page declares its lang
and (index and explainers) its alternates in the three languages."""

from __future__ import annotations

from pathlib import Path

import pytest
from sitekit import parse, qr_targets, resolve

from certgen.render.explainers import LANGS, PAGES


@pytest.fixture(scope="module")
def site(sample_site: Path) -> Path:
    """The undated sample site, built once per session (tests/conftest.py); read only."""
    return sample_site


def test_site_has_index_explainers_samples_in_three_languages(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / "assets/site.css").is_file()
    for lang in LANGS:
        assert (site / lang / "index.html").is_file()
        for slug in PAGES:
            assert (site / lang / "explainers" / f"{slug}.html").is_file()
            assert (site / lang / "explainers" / f"{slug}.pdf").read_bytes().startswith(b"%PDF")
    samples = sorted(p.name for p in (site / "samples").iterdir())
    assert len(samples) >= 3
    for sample in samples:
        for lang in LANGS:
            assert (site / "samples" / sample / f"certificate.{lang}.html").is_file()
            assert (site / "samples" / sample / f"certificate.{lang}.pdf").is_file()
    assert (site / "manifest.json").is_file()


def test_site_has_the_sample_reports_linked_from_the_index_and_the_explainer(site: Path) -> None:
    from certgen.builders.site import REPORT_SAMPLES, repo_examples_dir

    for report in REPORT_SAMPLES:
        folder = site / "reports" / report.name
        assert (folder / "compare.csv").read_text("utf-8").startswith("side,kind,name,value\n")
        for lang in LANGS:
            html = (folder / f"report.{lang}.html").read_text("utf-8")
            assert f'<html lang="{lang}">' in html
            assert 'class="date"' not in html  # no SOURCE_DATE_EPOCH: no invented date
            assert (folder / f"report.{lang}.pdf").read_bytes().startswith(b"%PDF")
            index = (site / lang / "index.html").read_text("utf-8")
            assert f'href="../reports/{report.name}/report.{lang}.html"' in index
            assert f'href="../reports/{report.name}/compare.csv"' in index
            explainer = (site / lang / "explainers" / "high-fps-bad-lows.html").read_text("utf-8")
            assert f'href="../../reports/{report.name}/report.{lang}.html"' in explainer
    assert 'href="reports/change/report.en.html"' in (site / "index.html").read_text("utf-8")
    # Captures are named relative to examples/compare: no path of the build machine leaks.
    change = (site / "reports/change/report.en.html").read_text("utf-8")
    assert "change/before.json" in change and str(repo_examples_dir()) not in change


def test_site_has_the_calibration_review_linked_from_every_index(site: Path) -> None:
    """`certgen calibrate`'s code on the synthetic 300-card fleet of examples/calibration with
    its one candidate rules file: every grade occurs, some runs pass the Soft Limit, the
    candidate changes some grades; each index links the report, its files and the explainer."""
    import json

    folder = site / "calibration"
    review = json.loads((folder / "calibration.json").read_bytes())
    assert review["cards"] == review["target_cards"] == 300
    assert review["runs"] > 2 * review["cards"]
    assert all(share > 10 for share in review["grade_shares"].values()), review["grade_shares"]
    assert 0 < review["past_soft_limit"] < 10
    [candidate] = review["candidates"]
    assert candidate["rules"] == "SOP-GPU-001 v1.2-draft" and candidate["changes"]
    assert (folder / "calibration.csv").read_text("utf-8").startswith("kind,name,group,value\n")
    for lang in LANGS:
        html = (folder / f"calibration.{lang}.html").read_text("utf-8")
        assert f'<html lang="{lang}">' in html and "SOP-GPU-001 v1.2-draft" in html
        assert (folder / f"calibration.{lang}.pdf").read_bytes().startswith(b"%PDF")
        index = (site / lang / "index.html").read_text("utf-8")
        for href in (f"../calibration/calibration.{lang}.html",
                     f"../calibration/calibration.{lang}.pdf", "../calibration/calibration.json",
                     "../calibration/calibration.csv", "explainers/calibration.html"):
            assert f'href="{href}"' in index, (lang, href)
    assert 'href="calibration/calibration.en.html"' in (site / "index.html").read_text("utf-8")


def test_every_internal_link_resolves_and_nothing_is_remote(site: Path) -> None:
    broken: list[str] = []
    remote: list[str] = []
    pages = sorted(site.rglob("*.html"))
    parsed = {p.resolve(): parse(p) for p in pages}
    for page_path in pages:
        page = parsed[page_path.resolve()]
        for asset in page.assets:
            if asset.startswith(("http:", "https:", "//")):
                remote.append(f"{page_path.relative_to(site)}: {asset}")
        for href in page.links + page.assets:
            target = resolve(site, page_path, href)
            if target is None:
                continue
            path, fragment = target
            if not path.is_file() or site.resolve() not in path.parents:
                broken.append(f"{page_path.relative_to(site)}: {href}")
            elif fragment and path.suffix == ".html" and fragment not in parsed[path].ids:
                broken.append(f"{page_path.relative_to(site)}: {href} (no such anchor)")
    assert remote == []
    assert broken == []


def test_every_page_has_the_shared_navigation_with_relative_links(site: Path) -> None:
    """Certificates, reports, explainers and the index: home, the other languages and the
    document's files, every href relative (the site works from a folder or any base URL) and
    resolving to a file of the site (the crawl above checks every link of every page)."""
    for page_path in sorted(site.rglob("*.html")):
        text = page_path.read_text("utf-8")
        name = page_path.relative_to(site).as_posix()
        assert text.count('<nav class="doc-nav"') == 1, name
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text, name
        page = parse(page_path)
        for href in page.links + page.assets:
            assert not href.startswith("/"), f"{name}: {href}"
        nav = text[text.index('<nav class="doc-nav"'):text.index("</nav>")]
        lang = page.lang
        assert 'class="home" href="' in nav, name
        home = nav.split('class="home" href="', 1)[1].split('"', 1)[0]
        target = resolve(site, page_path, home)
        assert target is not None
        assert target[0] in (site / "index.html", (site / str(lang) / "index.html").resolve()), name
        for other in LANGS:
            assert f'hreflang="{other}"' in nav or f'lang="{other}" aria-current="page"' in nav, name
        if name.startswith("samples/"):
            assert f'href="certificate.{lang}.pdf"' in nav and 'href="record.json"' in nav
            assert '<a class="screen-only" href="record.json">record.json</a>' in text
            assert '<a class="hash" href="https://' in text  # the verification address
        if name.startswith("reports/"):
            assert f'href="report.{lang}.pdf"' in nav and 'href="compare.csv"' in nav
        if name.startswith("calibration/"):
            assert f'href="calibration.{lang}.pdf"' in nav and 'href="calibration.json"' in nav
            assert 'href="calibration.csv"' in nav
        if "/explainers/" in name:
            assert f'href="{page_path.stem}.pdf"' in nav


def test_every_page_declares_its_lang_and_the_alternates(site: Path) -> None:
    for page_path in sorted(site.rglob("*.html")):
        page = parse(page_path)
        assert page.lang in LANGS, page_path
    mine = [site / "index.html"] + [site / lang / "index.html" for lang in LANGS] + [
        site / lang / "explainers" / f"{slug}.html" for lang in LANGS for slug in PAGES
    ]
    for page_path in mine:
        page = parse(page_path)
        assert set(page.alternates) == {*LANGS, "x-default"}, page_path
        lang_dir = page_path.relative_to(site).parts[0]
        if lang_dir in LANGS:
            assert page.lang == lang_dir
            me = resolve(site, page_path, page.alternates[lang_dir])
            assert me is not None and me[0] == page_path.resolve()


def test_explainers_link_to_the_samples_and_the_index_says_they_are_illustrative(site: Path) -> None:
    for lang in LANGS:
        text = (site / lang / "explainers" / "reading-your-certificate.html").read_text("utf-8")
        assert "../index.html#samples" in text
        index = (site / lang / "index.html").read_text("utf-8")
        assert index.count("samples/SAMPLE-") >= 9
    assert "not from a measured card" in (site / "index.html").read_text("utf-8")


def test_cli_site_prints_where_to_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import certgen.commands.site
    from certgen.commands.site import command

    calls: list[str] = []
    monkeypatch.setattr(certgen.commands.site, "build_site",
                        lambda out, **kw: calls.append(str(out)) or ["index.html"])
    result = CliRunner().invoke(command, ["--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert calls == [str(tmp_path / "s")]
    assert f"Open {tmp_path / 's' / 'index.html'} in a browser." in result.output


def test_explainer_and_report_pdfs_draw_without_a_library_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The print CSS holds nothing WeasyPrint skips (screen-only rules sit in @media screen):
    explainers, a before/after report and the calibration review."""
    import datetime as dt
    import logging

    from recordkit import gold_sample_record

    from certgen.builders.explainers import build_page
    from certgen.builders.report import report_record, write_report
    from certgen.builders.site import REPORT_SAMPLES, repo_examples_dir
    from certgen.render.pdf import html_to_pdf
    from certgen.render.site import render_explainer_html
    from certgen.sop import load_rules

    rules = load_rules()
    caplog.set_level(logging.DEBUG, logger="weasyprint")
    for slug in PAGES:
        page = build_page(slug, "ru", rules, sample=gold_sample_record())
        html = render_explainer_html(page, rules_version=rules.rules_version, for_pdf=True)
        assert "&#34;" not in html.split("</style>")[0]  # the CSS is inlined, not escaped
        html_to_pdf(html, lang="ru", title=page.title, author="certgen",
                    created=dt.datetime(2026, 1, 1))
    base = repo_examples_dir() / "compare"
    sample = next(r for r in REPORT_SAMPLES if r.name == "inside-floor")
    write_report(report_record([base / c for c in sample.captures], base=base),
                 tmp_path / "report", ["pt"])
    from certgen.builders.calibration import calibrate, read_candidate, write_calibration
    from certgen.builders.site import CALIBRATION_CANDIDATE, CALIBRATION_FOLDER
    from certgen.fleet import FleetStore

    cal = repo_examples_dir() / CALIBRATION_FOLDER
    with FleetStore.open(tmp_path / "fleet.sqlite") as store, (cal / "fleet.jsonl").open(
            encoding="utf-8") as fh:
        store.import_jsonl(fh, name="fleet.jsonl")
    review = calibrate(tmp_path / "fleet.sqlite",
                       candidates=[read_candidate(cal / CALIBRATION_CANDIDATE)])
    write_calibration(review, tmp_path / "calibration", ["ru"])
    noted = [r.getMessage() for r in caplog.records
             if r.name.startswith("weasyprint") and r.levelno >= logging.WARNING]
    assert noted == []


def test_library_log_lines_stay_off_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A library's warning (and a bare logging.debug that would install a stderr handler)
    ends up counted in one line, and in --log FILE when given; never on the terminal."""
    import logging

    from click.testing import CliRunner

    import certgen.commands.site
    from certgen.commands.site import command

    def noisy(out: object, **kw: object) -> list[str]:
        logging.debug("a bare root debug line")
        logging.getLogger("weasyprint").warning("Ignored `overflow-x: auto` at 1:1")
        return ["index.html"]

    monkeypatch.setattr(certgen.commands.site, "build_site", noisy)
    log = tmp_path / "lib.log"
    before = logging.getLogger().handlers[:]
    result = CliRunner().invoke(command, ["--out", str(tmp_path / "s"), "--log", str(log)])
    assert result.exit_code == 0, result.output
    captured = capfd.readouterr()
    assert "overflow-x" not in result.output + captured.out + captured.err
    assert "1 rendering notes from libraries were kept off the terminal" in result.output
    assert log.read_text("utf-8") == "WARNING weasyprint: Ignored `overflow-x: auto` at 1:1\n"
    assert logging.getLogger().handlers == before  # the root logger is given back as it was


def test_every_qr_address_is_a_registry_page_with_the_same_sha256(site: Path) -> None:
    import hashlib
    import html as html_text

    targets = qr_targets(site)
    assert len(targets) == 4 * len(LANGS)
    import re

    from certgen.render.certificate import qr_svg

    for html, url, page, sha in targets:
        # The QR code is the drawing of the printed address itself (segno is deterministic:
        # the code drawn from the address read off the page is the one on the page).
        drawn = re.search(r'<div class="qr">(.*?)</div>', html.read_text("utf-8"), re.S)
        assert drawn is not None, html
        # its text alternative, as the page gives it, is drawn in with it
        title = re.search(r"<title>(.*?)</title>", drawn.group(1))
        assert title is not None and "QR" in title.group(1), html
        assert drawn.group(1) == qr_svg(url, html_text.unescape(title.group(1))), html
        record_sha = hashlib.sha256((html.parent / "record.json").read_bytes()).hexdigest()
        assert sha == record_sha, url
        assert page.is_file(), f"{html.relative_to(site)}: {url} leads to no page"
        text = page.read_text("utf-8")
        assert f'<code class="hash" id="record-sha256">{sha}</code>' in text
        # The PDF the page links to is the certificate itself.
        pdf = page.parent / html.name.replace(".html", ".pdf")
        assert pdf.read_bytes() == html.with_suffix(".pdf").read_bytes()


def test_every_certificate_names_the_status_list_the_registry_publishes(site: Path) -> None:
    """The verification block prints <base>/index.json, and that file is the registry's list,
    which `certgen verify --revocations` reads."""
    import json

    from certgen.verify.revocation import parse_revocation_list

    for html in sorted(site.glob("samples/*/certificate.*.html")):
        record = json.loads((html.parent / "record.json").read_bytes())
        status_url = record["issuer"]["verification_base"].rstrip("/") + "/index.json"
        assert f'<a class="hash" href="{status_url}">{status_url}</a>' in html.read_text("utf-8")
    index = (site / "verify" / "index.json").read_bytes()
    assert [r.id for r in parse_revocation_list(index, source="index.json")] == [
        "SAMPLE-SILVER-0003"]


def test_the_index_marks_the_revoked_sample(site: Path) -> None:
    for lang, word in (("en", "REVOKED"), ("ru", "ОТОЗВАН"), ("pt", "REVOGADO")):
        page = (site / lang / "index.html").read_text("utf-8")
        item = page.split("SAMPLE-SILVER-0003", 1)[0].rsplit("<li>", 1)[1]
        assert f'<strong class="status-mark revoked">{word}</strong>' in item, lang
        assert "status-mark" not in page.split("SAMPLE-GOLD-0002", 1)[0].rsplit("<li>", 1)[1]


def test_the_sample_registry_shows_one_revoked_certificate(site: Path) -> None:
    import json

    index = json.loads((site / "verify" / "index.json").read_bytes())
    status = {c["id"]: c["status"] for c in index["certificates"]}
    assert status == {"SAMPLE-PLATINUM-0001": "valid", "SAMPLE-GOLD-0002": "valid",
                      "SAMPLE-SILVER-0003": "revoked", "SAMPLE-FG-0004": "valid"}
    words = {"en": "REVOKED", "ru": "ОТОЗВАН", "pt": "REVOGADO"}
    for lang in LANGS:
        page = (site / "verify" / "SAMPLE-SILVER-0003" / lang / "index.html").read_text("utf-8")
        assert 'class="status status-revoked"' in page and f"<strong>{words[lang]}</strong>" in page
        index_page = (site / lang / "index.html").read_text("utf-8")
        assert 'href="../verify/SAMPLE-SILVER-0003/' + lang + '/index.html"' in index_page
