"""The certificate on a phone (issue 28): at 390 px every run's Fluidity Score and rank are on the
screen without scrolling sideways, on the first line of the run's card.

Each sample certificate the site publishes, in each of its languages, is loaded into a 390 px
iframe (headless Chromium lays a window out no narrower than 500 px; tests/test_browser.py uses
the same wrapper), and the boxes of the text of each run's score and rank cells are read from the
DOM. A box that starts left of 0 or ends right of the page's width would need sideways scrolling
(inside the table's own scrolling box, as before, or of the page). The browser, Playwright and the
file-access flag come from tests/test_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Browser
from test_browser import PHONE, PROBE_TIMEOUT_MS, playwright, probe_browser  # noqa: F401

from certgen.render.explainers import LANGS

_PROBE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>probe</title></head>
<body style="margin:0"><iframe id="f" style="border:0;height:900px"></iframe>
<script>
function box(doc, cell) {
  // The text's own box: a number that overflows its cell is caught, not just the cell.
  const range = doc.createRange();
  range.selectNodeContents(cell);
  const r = range.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, text: cell.textContent.trim()};
}
async function phone(pages, width) {
  const f = document.getElementById("f"), results = [];
  f.style.width = width + "px";
  for (const page of pages) {
    await new Promise(done => { f.onload = done; f.src = page; });
    const doc = f.contentDocument;
    const runs = [];
    for (const row of doc.querySelectorAll("table.runs tr.run")) {
      const score = row.querySelector("td.score"), rank = row.querySelector("td.rank");
      const config = row.querySelector("td.config");
      if (!score) continue;  // a run that was not run has neither
      runs.push({run: row.dataset.run, score: box(doc, score), rank: box(doc, rank),
                 config: box(doc, config)});
    }
    const tiers = [];
    for (const mean of doc.querySelectorAll("table.tiers td.tier-mean")) {
      tiers.push({tier: mean.parentElement.querySelector("td").textContent.trim(),
                  mean: box(doc, mean)});
    }
    results.push({page, viewport: doc.documentElement.clientWidth, runs, tiers});
  }
  return results;
}
</script></body></html>
"""


def phone_boxes(browser: Browser, work: Path, pages: list[Path]) -> list[dict[str, object]]:
    """For each page, loaded at PHONE px: its viewport width and the text boxes of each scored
    run's score, rank and configuration."""
    work.mkdir(parents=True, exist_ok=True)
    wrapper = work / "phone.html"
    wrapper.write_text(_PROBE, encoding="utf-8")
    context = browser.new_context(viewport={"width": 1200, "height": 1000})
    try:
        context.set_default_timeout(PROBE_TIMEOUT_MS)
        tab = context.new_page()
        tab.goto(wrapper.as_uri())
        found: list[dict[str, object]] = tab.evaluate(
            "args => phone(...args)", [[p.as_uri() for p in pages], PHONE])
    finally:
        context.close()
    return found


def off_screen(results: list[dict[str, object]]) -> list[str]:
    """Each score or rank a phone reader would have to scroll sideways to (or that is not on its
    card's first line, above the run's name)."""
    problems = []
    for page in results:
        name = "/".join(str(page["page"]).split("/")[-2:])
        width = float(str(page["viewport"]))
        for run in page["runs"]:  # type: ignore[attr-defined]
            for what in ("score", "rank"):
                b = run[what]
                if b["left"] < 0 or b["right"] > width:
                    problems.append(f"{name} run {run['run']}: {what} {b['text']!r} spans "
                                    f"{b['left']:.0f}–{b['right']:.0f} px of a {width:.0f} px "
                                    "screen")
                if b["top"] >= run["config"]["top"]:
                    problems.append(f"{name} run {run['run']}: {what} is not above the run's "
                                    "name")
        # The tiers' means decide the grade: on the screen too.
        for tier in page.get("tiers", []):  # type: ignore[attr-defined]
            b = tier["mean"]
            if b["left"] < 0 or b["right"] > width:
                problems.append(f"{name} tier {tier['tier']}: mean {b['text']!r} spans "
                                f"{b['left']:.0f}–{b['right']:.0f} px of a {width:.0f} px screen")
    return problems


def _certificates(site: Path) -> list[Path]:
    found = sorted(site.glob("samples/*/certificate.*.html"))
    assert len(found) == 4 * len(LANGS), found  # four samples, every language
    return found


def _scored_runs(page: Path) -> int:
    record = json.loads((page.parent / "record.json").read_text("utf-8"))
    return sum(1 for r in record["runs"] if (r.get("metrics") or {}).get("fluidity_score")
               is not None)


def _tiers(page: Path) -> int:
    return len(json.loads((page.parent / "record.json").read_text("utf-8"))["tiers"])


def test_every_runs_score_and_rank_are_on_a_phone_screen(sample_site: Path,
                                                         probe_browser: Browser,  # noqa: F811
                                                         tmp_path: Path) -> None:
    pages = _certificates(sample_site)
    results = phone_boxes(probe_browser, tmp_path, pages)
    for page, result in zip(pages, results, strict=True):
        # every scored run of the record was found and measured
        assert len(result["runs"]) == _scored_runs(page) > 0, page  # type: ignore[arg-type]
        assert len(result["tiers"]) == _tiers(page) > 0, page  # type: ignore[arg-type]
    problems = off_screen(results)
    print("\n".join(problems))
    assert problems == []


def test_the_phone_check_catches_a_table_that_scrolls_inside_its_box(
        probe_browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    """The runs table as it was (a wide table scrolling in its own box at 390 px): the score and
    rank are found right of the screen. The test can fail."""
    page = tmp_path / "wide.html"
    cells = "".join(f'<td class="num">{v}</td>' for v in ("141.0", "128.3", "109.1", "9.01%"))
    page.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        'content="width=device-width, initial-scale=1"><title>Wide</title></head><body><main>'
        '<table class="runs" style="display:block;overflow-x:auto;max-width:100%"><tbody>'
        '<tr class="run" data-run="0"><td>1</td><td class="config" style="min-width:200px">'
        f'Cyberpunk 2077</td>{cells}<td class="num score"><strong>89.21</strong></td>'
        '<td class="rank">better than 42.2% of its cohort</td></tr></tbody></table>'
        '<table class="tiers" style="display:block;overflow-x:auto;max-width:100%"><tbody><tr>'
        '<td style="min-width:420px">1920x1080</td><td class="num tier-mean">89.53</td></tr>'
        '</tbody></table>'
        "</main></body></html>", encoding="utf-8")
    problems = off_screen(phone_boxes(probe_browser, tmp_path / "work", [page]))
    assert any("score '89.21' spans" in p for p in problems), problems
    assert any("rank 'better than" in p for p in problems), problems
    assert any("tier 1920x1080: mean '89.53' spans" in p for p in problems), problems

