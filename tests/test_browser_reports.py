"""The sample before/after reports read on a phone, measured in Chromium (issue 28).

At 390 px, in every language the site publishes, each figure's verdict (the "Reading" column,
found by its translated header, not by a class the template sets) must lie inside the viewport
horizontally, so a reader sees it without scrolling sideways; and every text of the report's
charts must render at least 10 px high on screen. The charts are measured as drawn: an inline
SVG's text through its screen transform; an <img> of an SVG (the source the browser picked for
this width) is drawn again inline at the image's rendered size and measured the same way.

Chromium lays a window out no narrower than 500 px, so each report is loaded into a 390 px
iframe of a wrapper page, with file:// pages as one origin (the probe browser of
tests/test_browser.py, whose fixtures this module reuses).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser
from test_browser import PHONE, TIMEOUT_MS, playwright, probe_browser, site  # noqa: F401

from certgen.compare.statistics import FIGURES
from certgen.render.explainers import LANGS
from certgen.render.i18n import gettext_for

MIN_TEXT_PX = 10.0
"""The smallest chart text (its em, on screen) the issue accepts at 390 px."""

_WRAPPER = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>phone</title></head>
<body style="margin:0"><iframe id="f" style="border:0;height:900px"></iframe>
<script>
function svgText(root) {
  // Each text's em on screen (its font size times the scale of its screen transform), and
  // whether it is drawn whole inside the chart (not cut off at its edge).
  const out = [], box = root.getBoundingClientRect();
  for (const t of root.querySelectorAll("text")) {
    const m = t.getScreenCTM();
    const size = parseFloat(getComputedStyle(t).fontSize);
    if (!m || !t.textContent.trim()) continue;
    const r = t.getBoundingClientRect();
    out.push({text: t.textContent.trim().slice(0, 40),
              px: size * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)),
              inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5 &&
                      r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5});
  }
  return out;
}
function svgSource(src) {
  if (src.startsWith("data:")) {
    const comma = src.indexOf(","), head = src.slice(0, comma), body = src.slice(comma + 1);
    if (!head.endsWith(";base64")) return decodeURIComponent(body);
    return new TextDecoder().decode(Uint8Array.from(atob(body), c => c.charCodeAt(0)));
  }
  const x = new XMLHttpRequest(); x.open("GET", src, false); x.send(); return x.responseText;
}
async function measure(page, width, reading) {
  const f = document.getElementById("f");
  f.style.width = width + "px";
  await new Promise(done => { f.onload = done; f.src = page; });
  const doc = f.contentDocument, view = doc.documentElement.clientWidth;
  const verdicts = [], charts = [];
  for (const table of doc.querySelectorAll("table")) {
    const heads = [...table.querySelectorAll("th")];
    const head = heads.find(th => th.textContent.trim() === reading);
    if (!head) continue;
    const column = [...head.parentElement.children].indexOf(head);
    for (const row of table.querySelectorAll("tr")) {
      if (row === head.parentElement) continue;
      const cell = row.children[column];
      if (!cell) continue;
      const r = cell.getBoundingClientRect();
      verdicts.push({text: cell.textContent.trim(), left: r.left, right: r.right,
                     width: r.width, view});
    }
  }
  for (const figure of doc.querySelectorAll("main figure")) {
    const texts = [];
    for (const svg of figure.querySelectorAll("svg")) {
      if (svg.getClientRects().length && !svg.parentElement.closest("svg")) texts.push(...svgText(svg));
    }
    for (const img of figure.querySelectorAll("img")) {
      const r = img.getBoundingClientRect();
      const src = img.currentSrc || img.src;
      if (!r.width || !src) continue;
      const parsed = new DOMParser().parseFromString(svgSource(src), "image/svg+xml");
      if (parsed.documentElement.localName !== "svg") continue;  // a raster image: no text
      const copy = doc.importNode(parsed.documentElement, true);
      const box = doc.createElement("div");
      box.style.cssText = "position:absolute;left:0;top:0;visibility:hidden";
      copy.setAttribute("width", r.width); copy.setAttribute("height", r.height);
      box.appendChild(copy); doc.body.appendChild(box);
      texts.push(...svgText(copy));
      box.remove();
    }
    charts.push({texts});
  }
  return {page, width, view, scrollWidth: doc.documentElement.scrollWidth, verdicts, charts};
}
</script></body></html>
"""


def reports(root: Path) -> list[tuple[str, str, bool, Path]]:
    """(sample, language, has a chart, page) for every sample report the site publishes."""
    from certgen.builders.site import REPORT_SAMPLES

    return [(sample.name, lang, sample.series is None,
             root / "reports" / sample.name / f"report.{lang}.html")
            for sample in REPORT_SAMPLES for lang in LANGS]


def phone_problems(browser: Browser, work: Path,
                   pages: list[tuple[str, str, bool, Path]]) -> list[str]:
    """What is wrong with each page at 390 px: a verdict outside the viewport, a chart text
    under MIN_TEXT_PX, or fewer verdicts or chart texts than the report has."""
    wrapper = work / "phone.html"
    wrapper.write_text(_WRAPPER, encoding="utf-8")
    context = browser.new_context(viewport={"width": 1200, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    try:
        tab = context.new_page()
        tab.goto(wrapper.as_uri())
        for name, lang, has_chart, page in pages:
            where = f"{name} {lang} at {PHONE} px"
            found = tab.evaluate("args => measure(...args)",
                                 [page.as_uri(), PHONE, gettext_for(lang)("Reading")])
            verdicts = found["verdicts"]
            if len(verdicts) != len(FIGURES):
                problems.append(f"{where}: {len(verdicts)} verdicts found, expected "
                                f"{len(FIGURES)}")
            for v in verdicts:
                if not v["text"] or v["width"] <= 0 or v["left"] < -0.5 \
                        or v["right"] > v["view"] + 0.5:
                    problems.append(f"{where}: verdict {v['text'][:30]!r} spans "
                                    f"{v['left']:.0f}-{v['right']:.0f} px of a "
                                    f"{v['view']} px viewport")
            texts = [t for chart in found["charts"] for t in chart["texts"]]
            if has_chart and len(texts) < 10:
                problems.append(f"{where}: only {len(texts)} chart texts found")
            problems += [f"{where}: chart text {t['text']!r} runs past the chart's edge"
                         for t in texts if not t["inside"]]
            small = [t for t in texts if t["px"] < MIN_TEXT_PX]
            if small:
                worst = min(small, key=lambda t: t["px"])
                problems.append(f"{where}: {len(small)} of {len(texts)} chart texts under "
                                f"{MIN_TEXT_PX:g} px, the smallest {worst['px']:.1f} px "
                                f"({worst['text']!r})")
    finally:
        context.close()
    return problems


def test_every_sample_report_shows_its_verdicts_and_readable_charts_on_a_phone(
        site: Path, probe_browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    pages = reports(site)
    assert len(pages) == 3 * len(LANGS) and all(p.is_file() for *_, p in pages)
    problems = phone_problems(probe_browser, tmp_path, pages)
    print("\n".join(problems))
    assert problems == []


def test_the_phone_check_catches_a_hidden_verdict_and_small_chart_text(
        probe_browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    """A wide table pushing its "Reading" column off screen and a 680-unit SVG image shown
    at phone width are both caught, and so is a chart text cut off at the chart's edge; a
    fitting card and a large SVG text pass."""
    import base64

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 680 100" width="680" '
           'height="100">' + "".join(f'<text x="{10 + i * 30}" y="50" font-size="9">t{i}</text>'
                                     for i in range(10)) + "</svg>")
    src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    head = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width, initial-scale=1"><title>t</title></head><body><main>')
    bad = tmp_path / "bad.html"
    bad.write_text(head + '<div style="overflow-x:auto"><table><tr><th style="min-width:500px">'
                   "Figure</th><th>Reading</th></tr>" + "<tr><td>f</td><td>Higher</td></tr>" * 3
                   + f'</table></div><figure><img src="{src}" style="width:100%" alt="c">'
                   "</figure></main></body></html>", encoding="utf-8")
    good = tmp_path / "good.html"
    big = svg.replace('font-size="9"', 'font-size="24"').replace("680", "340")
    good.write_text(head + "<table><tr><th>Reading</th><th>Figure</th></tr>"
                    + "<tr><td>Higher</td><td>f</td></tr>" * 3 + f"</table><figure>{big}"
                    "</figure></main></body></html>", encoding="utf-8")
    problems = phone_problems(probe_browser, tmp_path,
                              [("bad", "en", True, bad), ("good", "en", True, good)])
    assert any(p.startswith("bad en at 390 px: verdict 'Higher' spans") for p in problems)
    assert any(p.startswith("bad en at 390 px: 10 of 10 chart texts under 10 px") for p in problems)
    assert not any(p.startswith("good") for p in problems), problems
    cut = tmp_path / "cut.html"
    cut.write_text(head + "<table><tr><th>Reading</th></tr>" + "<tr><td>Higher</td></tr>" * 3
                   + "</table><figure>" + big.replace(">t9<", ">a long label past the edge<")
                   + "</figure></main></body></html>", encoding="utf-8")
    problems = phone_problems(probe_browser, tmp_path, [("cut", "en", True, cut)])
    assert problems == ["cut en at 390 px: chart text 'a long label past the edge' runs past "
                        "the chart's edge"], problems

