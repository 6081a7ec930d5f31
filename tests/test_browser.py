"""A real browser opens the site: Debian's Chromium, headless.

For the index pages, every explainer and every sample report in the three languages it takes a
screenshot (which must not be blank), dumps the rendered DOM (which must hold the page's text), and reads
Chromium's own log: any console message fails the test, and so does any file the browser
asked for that does not exist (a missing image, stylesheet or link target it loaded).

Every page of the site (index, explainers, sample certificates, sample reports) is also checked
inside the browser: axe-core (npm, pinned in package.json) must find no critical or serious
WCAG violation, nor a heading out of order, at 1100 px and at 390 px; and at 390 px no page may
scroll sideways. Headless Chromium lays a window out no narrower than 500 px, so each page is
loaded into a 390 px iframe of a wrapper page, which compares the page's scrollWidth with its
clientWidth (file:// pages are one origin only with --allow-file-access-from-files).

Chromium is installed with apt when missing and we are root (as on CI); otherwise the test is
skipped with the reason printed. axe-core comes from node_modules/, which `make test` fills
with `npm ci` (installing Debian's nodejs and npm first when root); a direct pytest run does the
same, and without node_modules and without root the test is skipped saying so.
Set CERTGEN_SCREENSHOTS=DIR to keep the screenshots.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from certgen.docs import LANGS, PAGES

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--enable-logging=stderr", "--v=1", "--window-size=1100,1600",
]


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() != 0:
        pytest.skip("CHROMIUM MISSING and not root: cannot `apt-get install chromium`; "
                    "the real-browser test did NOT run")
    import fcntl

    # `make test` installs chromium before the workers start; this is the fallback for a
    # direct pytest run. The lock keeps two xdist workers from racing for dpkg.
    with open("/tmp/certgen-chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shutil.which("chromium") is None:
            subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True,
                           timeout=600)
            done = subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"],
                                  capture_output=True, timeout=1200,
                                  env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
            if shutil.which("chromium") is None:
                pytest.fail(f"apt-get install chromium failed: {done.stderr.decode()[-500:]}")
    found = shutil.which("chromium")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def site(sample_site: Path) -> Path:
    """The sample site test_site.py checks, built once per session (tests/conftest.py): the
    browser opens its HTML pages (it has the explainers' PDFs too); read only."""
    return sample_site


def _run(browser: str, profile: Path, action: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={profile}", action, url],
        capture_output=True, text=True, timeout=120, cwd=profile,
    )


def _png_is_blank(data: bytes) -> bool:
    """True when the decoded image has (almost) a single colour."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width, bpp = 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width = struct.unpack(">I", chunk[:4])[0]
            bpp = {2: 3, 6: 4, 0: 1, 4: 2}[chunk[9]]
        if kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp + 1
    rows = [raw[i + 1:i + stride] for i in range(0, len(raw), stride)]
    return len(set(rows)) < 20  # fewer than 20 distinct rows: no text was drawn


def _fetched_files(log: str) -> list[Path]:
    urls = re.findall(r"FileURLLoader::Start: (file://\S+)", log)
    return [Path(unquote(urlsplit(u).path)) for u in urls]


def pages(site: Path) -> list[Path]:
    out = [site / "index.html"] + [site / lang / "index.html" for lang in LANGS]
    out += [site / lang / "explainers" / f"{slug}.html" for lang in LANGS for slug in PAGES]
    out += sorted(site.glob("reports/*/report.*.html"))
    return out


def test_every_page_renders_in_chromium(site: Path, tmp_path: Path) -> None:
    browser = chromium()
    keep = os.environ.get("CERTGEN_SCREENSHOTS")
    problems: list[str] = []
    from certgen.builders.site import REPORT_SAMPLES

    expected = 1 + len(LANGS) + len(LANGS) * (len(PAGES) + len(REPORT_SAMPLES))
    assert len(pages(site)) == expected  # the reports are looked at too
    for page in pages(site):
        name = page.relative_to(site).as_posix().replace("/", "_").removesuffix(".html")
        profile = tmp_path / f"profile-{name}"
        profile.mkdir()
        url = page.as_uri()
        shot = _run(browser, profile, f"--screenshot={profile / 'shot.png'}", url)
        dom = _run(browser, profile, "--dump-dom", url)
        log = shot.stderr + dom.stderr
        for line in log.splitlines():
            if ":CONSOLE" in line:
                problems.append(f"{name}: console: {line.strip()}")
        for fetched in _fetched_files(log):
            if not fetched.is_file():
                problems.append(f"{name}: the browser asked for a missing file {fetched}")
        png = (profile / "shot.png").read_bytes()
        if _png_is_blank(png):
            problems.append(f"{name}: the screenshot is blank")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"{name}.png").write_bytes(png)
        text = re.sub(r"<[^>]+>", " ", dom.stdout)
        words = re.findall(r"\w{3,}", text)
        if len(words) < 100:
            problems.append(f"{name}: rendered DOM holds only {len(words)} words")
        title = re.search(r"<h1>(.*?)</h1>", page.read_text("utf-8"))
        # Compared as text: the dumped DOM writes a no-break space as &nbsp;, the page as itself.
        if title and html.unescape(title.group(1)) not in html.unescape(dom.stdout):
            problems.append(f"{name}: heading {title.group(1)!r} not in the rendered DOM")
    assert problems == []


def test_the_checks_catch_a_broken_page(tmp_path: Path) -> None:
    """A page with a console error and a missing image is caught (the test can fail)."""
    browser = chromium()
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html lang="en"><body><p>x</p><img src="nope.png">'
                   '<script>console.error("boom")</script></body></html>', encoding="utf-8")
    profile = tmp_path / "profile"
    profile.mkdir()
    run = _run(browser, profile, f"--screenshot={profile / 'shot.png'}", bad.as_uri())
    assert any(":CONSOLE" in line and "boom" in line for line in run.stderr.splitlines())
    assert tmp_path / "nope.png" in _fetched_files(run.stderr)
    assert not (tmp_path / "nope.png").exists()
    assert not _png_is_blank((profile / "shot.png").read_bytes())
    empty = tmp_path / "empty.html"
    empty.write_text('<!DOCTYPE html><html lang="en"><body></body></html>', encoding="utf-8")
    _run(browser, profile, f"--screenshot={profile / 'empty.png'}", empty.as_uri())
    assert _png_is_blank((profile / "empty.png").read_bytes())


# ------------------------------------------------------------------ axe-core and the 390 px check

REPO = Path(__file__).resolve().parent.parent
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
PHONE = 390
DESKTOP = 1100
# Beyond critical and serious violations, a heading level that skips one fails too (axe rates
# it moderate; the issue asks for headings in order).
ALSO_FAIL = ("heading-order",)


def axe_source() -> str:
    """axe.min.js from node_modules (running `npm ci` first when it is missing)."""
    if not AXE.is_file():
        _npm_ci()
    return AXE.read_text(encoding="utf-8")


def _npm_ci() -> None:
    import fcntl

    with open("/tmp/certgen-npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if AXE.is_file():
            return
        if shutil.which("npm") is None:
            if os.geteuid() != 0:
                pytest.skip("NPM MISSING and not root: cannot `apt-get install nodejs npm` to "
                            "fetch axe-core; the accessibility check did NOT run")
            subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True,
                           timeout=600)
            done = subprocess.run(["apt-get", "install", "-y", "-qq", "nodejs", "npm"],
                                  capture_output=True, timeout=1200,
                                  env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
            if shutil.which("npm") is None:
                pytest.fail(f"apt-get install npm failed: {done.stderr.decode()[-500:]}")
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=REPO,
                              capture_output=True, text=True, timeout=600)
        if not AXE.is_file():
            pytest.fail(f"npm ci did not install axe-core: {done.stderr[-500:]}")


_PROBE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>probe</title></head>
<body style="margin:0"><iframe id="f" style="border:0;height:900px"></iframe><pre id="out"></pre>
<script>
const PAGES = %(pages)s, WIDTHS = %(widths)s, AXE = %(axe)s, FAIL = %(fail)s;
const f = document.getElementById("f");
async function probe() {
  const results = [];
  for (const page of PAGES) {
    for (const width of WIDTHS) {
      f.style.width = width + "px";
      await new Promise(done => { f.onload = done; f.src = page + "?w=" + width; });
      const doc = f.contentDocument, root = doc.documentElement;
      const found = {page, width, scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
                     lang: root.lang, title: doc.title, violations: []};
      if (AXE) {
        if (!f.contentWindow.axe) f.contentWindow.eval(AXE);
        const run = await f.contentWindow.axe.run(doc, {resultTypes: ["violations"]});
        for (const v of run.violations) {
          if (v.impact === "critical" || v.impact === "serious" || FAIL.includes(v.id)) {
            found.violations.push(v.id + " (" + v.impact + "): " + v.help + ": " +
              v.nodes.slice(0, 3).map(n => n.target.join(" ") + " | " +
                (n.failureSummary || "").replace(/\\s+/g, " ")).join(" ;; "));
          }
        }
      }
      results.push(found);
    }
  }
  return results;
}
probe().then(r => { document.getElementById("out").textContent = JSON.stringify(r); },
             e => { document.getElementById("out").textContent = "ERROR " + e; });
</script></body></html>
"""


def probe(browser: str, work: Path, pages: list[Path], widths: tuple[int, ...], *,
          axe: str | None) -> list[dict[str, object]]:
    """Load each page at each width in an iframe of one wrapper page; what it measured."""
    work.mkdir(parents=True, exist_ok=True)
    wrapper = work / "probe.html"
    wrapper.write_text(_PROBE % {
        "pages": json.dumps([p.as_uri() for p in pages]), "widths": json.dumps(list(widths)),
        "axe": json.dumps(axe), "fail": json.dumps(list(ALSO_FAIL)),
    }, encoding="utf-8")
    run = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--allow-file-access-from-files", "--virtual-time-budget=900000",
         f"--user-data-dir={work / 'profile'}", "--window-size=1200,1000", "--dump-dom",
         wrapper.as_uri()],
        capture_output=True, text=True, timeout=900, cwd=work,
    )
    found = re.search(r'<pre id="out">(.*?)</pre>', run.stdout, re.S)
    assert found and found.group(1), f"the probe page wrote nothing: {run.stderr[-1500:]}"
    text = html.unescape(found.group(1))
    assert not text.startswith("ERROR"), text
    results: list[dict[str, object]] = json.loads(text)
    assert len(results) == len(pages) * len(widths)  # every page was measured
    return results


def _problems(site: Path, results: list[dict[str, object]]) -> list[str]:
    problems = []
    for r in results:
        name = str(r["page"]).removeprefix(site.as_uri() + "/")
        where = f"{name} at {r['width']} px"
        if r["width"] == PHONE and int(str(r["scrollWidth"])) > int(str(r["clientWidth"])):
            problems.append(f"{where}: scrolls sideways ({r['scrollWidth']} px of content "
                            f"in {r['clientWidth']} px)")
        if not r["lang"] or not str(r["title"]).strip():
            problems.append(f"{where}: no lang ({r['lang']!r}) or no title ({r['title']!r})")
        problems += [f"{where}: {v}" for v in r["violations"]]  # type: ignore[attr-defined]
    return problems


def test_every_page_passes_axe_and_fits_a_phone(site: Path, tmp_path: Path) -> None:
    """No critical or serious axe-core violation (colour contrast AA included) at 1100 and
    390 px, lang and title on every page, and nothing wider than a 390 px phone screen."""
    browser = chromium()
    axe = axe_source()
    every = sorted(site.rglob("*.html"))
    assert len(every) >= len(pages(site)) + 9  # the sample certificates are checked too
    results = probe(browser, tmp_path, every, (DESKTOP, PHONE), axe=axe)
    problems = _problems(site, results)
    print("\n".join(problems))
    assert problems == []


def test_the_phone_and_axe_checks_catch_a_bad_page(tmp_path: Path) -> None:
    """A page with a 700 px element scrolls sideways at 390 px; grey-on-white text fails axe's
    colour contrast; a page without lang and title is named. A fitting page passes."""
    browser = chromium()
    axe = axe_source()
    site = tmp_path / "site"
    site.mkdir()
    wide = site / "wide.html"
    wide.write_text('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta '
                    'name="viewport" content="width=device-width, initial-scale=1">'
                    '<title>Wide</title></head><body><main><h1>Wide</h1><div style="width:700px">'
                    'x</div><p style="color:#bbb">faint</p></main></body></html>', encoding="utf-8")
    bare = site / "bare.html"
    bare.write_text("<!DOCTYPE html><html><body><main><p>x</p></main></body></html>",
                    encoding="utf-8")
    fits = site / "fits.html"
    fits.write_text('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta '
                    'name="viewport" content="width=device-width, initial-scale=1">'
                    '<title>Fits</title></head><body><main><h1>Fits</h1><div style="width:380px">'
                    'x</div></main></body></html>', encoding="utf-8")
    results = probe(browser, tmp_path / "work", [bare, fits, wide], (PHONE,), axe=axe)
    problems = _problems(site, results)
    assert any(p.startswith("wide.html at 390 px: scrolls sideways (7") for p in problems)
    assert any(p.startswith("wide.html at 390 px: color-contrast (serious)") for p in problems)
    assert any(p.startswith("bare.html at 390 px: no lang ('') or no title ('')")
               for p in problems)
    assert any(p.startswith("bare.html at 390 px: html-has-lang (serious)") for p in problems)
    assert not any(p.startswith("fits.html") for p in problems), problems


def test_every_qr_address_opens_its_registry_page_and_the_page_checks_the_hash(
        site: Path, tmp_path: Path) -> None:
    """The address each certificate prints (read from the document, mapped with the base its
    record names) opens a registry page whose own script finds the same SHA-256; a changed
    hash makes the same page say it does not match."""
    from sitekit import qr_targets

    browser = chromium()
    targets = qr_targets(site)
    assert len(targets) == 3 * len(LANGS)
    problems: list[str] = []
    for page, sha in sorted({(page, sha) for _, _, page, sha in targets}):
        wrong = sha[:-1] + ("0" if sha[-1] != "0" else "1")
        for given, shown, hidden in ((sha, "hash-match", "hash-mismatch"),
                                     (wrong, "hash-mismatch", "hash-match")):
            profile = tmp_path / f"profile-{page.parent.name}-{given[-6:]}"
            profile.mkdir()
            dom = _run(browser, profile, "--dump-dom", f"{page.as_uri()}?sha256={given}")
            name = f"{page.relative_to(site)}?sha256=…{given[-6:]}"
            if f'id="record-sha256">{sha}</code>' not in dom.stdout:
                problems.append(f"{name}: the page does not carry {sha}")
            if not re.search(rf'<p class="[^"]*" id="{shown}">', dom.stdout):
                problems.append(f"{name}: #{shown} is not shown")
            if not re.search(rf'<p class="[^"]*" id="{hidden}" hidden="">', dom.stdout):
                problems.append(f"{name}: #{hidden} is shown")
            if any(":CONSOLE" in line for line in dom.stderr.splitlines()):
                problems.append(f"{name}: console messages")
    assert problems == []
