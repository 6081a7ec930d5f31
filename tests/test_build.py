"""certgen build: outputs, cache, byte-identical rebuilds in separate processes, hostile bundles."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pypdf
import pytest
import yaml
from bundlekit import (
    card,
    frames_for,
    opened_during_cli,
    run_cli,
    run_entry,
    sha256_of,
    write_card,
    write_presentmon,
)

from certgen.builders.batch import build_many
from certgen.errors import RefusalError
from certgen.inputs.lab import load_lab
from certgen.support.paths import templates_dir

SAMPLE_LAB = Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"


@pytest.fixture(autouse=True)
def _sample_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build here is issued by the examples' sample lab ($CERTGEN_LAB, inherited by the
    subprocesses); the tests of the lab refusals unset it."""
    monkeypatch.setenv("CERTGEN_LAB", str(SAMPLE_LAB))


HOSTILE = "<script>alert(1)</script>{{ 7*7 }}{% if 1 %}x{% endif %}<b onmouseover=x>"


def _bundle(root: Path, *, languages: list[str] | None = None) -> Path:
    runs = []
    for i, figures in enumerate([(120.0, 110.0, 100.0), (100.0, 82.0, 31.9)]):
        rel = f"captures/run{i}.csv"
        write_presentmon(root / rel, frames_for(*figures))
        runs.append(run_entry(f"Game {i}", capture=rel))
    first = write_presentmon(root / "archive/first.csv", frames_for(100.0, 80.0, 30.0))
    runs[1]["first_capture"] = {"file": "archive/first.csv", "sha256": sha256_of(first)}
    runs[1]["soft_limit"] = {"justification": "Spikes at *streaming* points.",
                             "vrm_reexamination": "pass"}
    runs.append(run_entry("Ray Game", ray_tracing=True, not_run="no hardware ray tracing"))
    data = card(runs)
    data["certificate"]["languages"] = languages or ["en", "ru"]
    return write_card(root, data)


def test_build_writes_record_documents_and_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _bundle(tmp_path / "bundle")
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["build", str(bundle), "--out", str(out), "--jobs", "1"], capsys)
    assert (code, stderr) == (0, "")
    folder = out / "TEST-0001"
    assert stdout == f"built TEST-0001 (en, ru) -> {folder}\n"
    assert sorted(p.name for p in folder.iterdir()) == [
        "certificate.en.html", "certificate.en.pdf", "certificate.ru.html", "certificate.ru.pdf",
        "manifest.json", "record.json",
    ]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["languages"] == ["en", "ru"]
    reader = pypdf.PdfReader(io.BytesIO((folder / "certificate.ru.pdf").read_bytes()))
    assert dict(reader.attachments) == {"record.json": [(folder / "record.json").read_bytes()]}
    assert manifest["record_sha256"] in (folder / "certificate.en.html").read_text()


def test_unchanged_bundle_is_not_rebuilt_and_a_change_rebuilds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "bundle")
    out = tmp_path / "out"
    args = ["build", str(bundle), "--out", str(out), "--lang", "en", "--jobs", "1"]
    assert run_cli(args, capsys)[1].startswith("built ")
    pdf = out / "TEST-0001" / "certificate.en.pdf"
    before = pdf.stat().st_mtime_ns
    assert run_cli(args, capsys)[1].startswith("unchanged TEST-0001 (en)")
    assert pdf.stat().st_mtime_ns == before
    data = yaml.safe_load((bundle / "card.yaml").read_text())
    data["customer"] = "Another Customer"
    write_card(bundle, data)
    assert run_cli(args, capsys)[1].startswith("built ")
    assert "Another Customer" in (out / "TEST-0001" / "certificate.en.html").read_text()
    # a damaged output is rebuilt too
    pdf.write_bytes(b"broken")
    assert run_cli(args, capsys)[1].startswith("built ")


def test_rebuilding_with_fewer_languages_removes_the_old_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "bundle")
    out = tmp_path / "out"
    folder = out / "TEST-0001"
    folder.mkdir(parents=True)
    (folder / "lab-notes.txt").write_text("not an output: stays")
    base = ["build", str(bundle), "--out", str(out), "--jobs", "1"]
    assert run_cli([*base, "--lang", "en,ru,pt"], capsys)[0] == 0
    assert len(list(folder.glob("certificate.*"))) == 6
    assert run_cli([*base, "--lang", "pt"], capsys)[0] == 0
    assert sorted(p.name for p in folder.iterdir()) == [
        "certificate.pt.html", "certificate.pt.pdf", "lab-notes.txt", "manifest.json", "record.json",
    ]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["languages"] == ["pt"]
    assert [f["path"] for f in manifest["files"]] == [
        "certificate.pt.html", "certificate.pt.pdf", "record.json"]


def test_each_document_links_the_languages_built_in_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "bundle")
    out = tmp_path / "out"
    assert run_cli(["build", str(bundle), "--out", str(out), "--lang", "pt,en", "--jobs", "1"], capsys)[0] == 0
    folder = out / "TEST-0001"
    for lang in ("en", "pt"):
        html = (folder / f"certificate.{lang}.html").read_text()
        hrefs = re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', html)
        assert hrefs == [("en", "certificate.en.html"), ("pt", "certificate.pt.html"),
                         ("x-default", "certificate.en.html")]
        assert all((folder / href).is_file() for _, href in hrefs)
        assert "certificate.ru.html" not in html


def test_refused_bundle_exits_1_and_draft_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _bundle(tmp_path / "bundle")
    data = yaml.safe_load((bundle / "card.yaml").read_text())
    del data["runs"][1]["soft_limit"]
    write_card(bundle, data)
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["build", str(bundle), "--out", str(out), "--lang", "en"], capsys)
    assert code == 1 and stdout == ""
    assert stderr.startswith('certgen: card.yaml: runs[1].soft_limit: run "Game 1 2560x1440" has stutter')
    assert not out.joinpath("TEST-0001").exists()
    code, _, _ = run_cli(["build", str(bundle), "--out", str(out), "--lang", "en", "--draft"], capsys)
    assert code == 0
    html = (out / "TEST-0001" / "certificate.en.html").read_text()
    assert "DRAFT — NOT ISSUABLE" in html


def test_bad_language_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _bundle(tmp_path / "bundle")
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--lang", "de"], capsys)
    assert code == 2
    assert "'de': expected a comma-separated list of en, ru, pt" in stderr


def test_two_bundles_with_one_id_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _bundle(tmp_path / "a")
    b = _bundle(tmp_path / "b")
    code, _, stderr = run_cli(["build", str(a), str(b), "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert stderr == (f"certgen: {b}: certificate id 'TEST-0001' is also the id of {a}; "
                      "two bundles cannot write the same output folder\n")


def _build_in_subprocess(bundle: Path, out: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    env.pop("SOURCE_DATE_EPOCH", None)
    subprocess.run([sys.executable, "-m", "certgen", "build", str(bundle), "--out", str(out),
                    "--lang", "en,ru,pt", "--jobs", "1"], check=True, env=env,
                   capture_output=True)


def test_two_builds_in_two_processes_are_byte_identical(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "bundle")
    _build_in_subprocess(bundle, tmp_path / "one")
    _build_in_subprocess(bundle, tmp_path / "two")
    one = sorted((tmp_path / "one" / "TEST-0001").iterdir())
    two = sorted((tmp_path / "two" / "TEST-0001").iterdir())
    assert [p.name for p in one] == [p.name for p in two] and len(one) == 8
    for a, b in zip(one, two, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def _hostile_bundle(root: Path, secret: Path) -> Path:
    runs = []
    write_presentmon(root / "captures/a.csv", frames_for(120.0, 110.0, 100.0))
    write_presentmon(root / "captures/b.csv", frames_for(100.0, 82.0, 31.9))
    first = write_presentmon(root / "archive/first.csv", frames_for(100.0, 80.0, 30.0))
    extra = {"preset": HOSTILE}
    runs.append(run_entry(HOSTILE, capture="captures/a.csv", **extra))
    runs.append(run_entry(
        HOSTILE + " 2", capture="captures/b.csv",
        first_capture={"file": "archive/first.csv", "sha256": sha256_of(first)},
        soft_limit={
            "justification": (
                f"{HOSTILE}\n\n[click me](javascript:alert(1)) "
                '<iframe src="https://evil.example/"></iframe>'
                f'<img src="{secret.as_uri()}"> ![s]({secret.as_uri()}) '
                f'<link rel="attachment" href="{secret.as_uri()}"> '
                f'<a rel="attachment" href="{secret.as_uri()}">att</a> '
                '<style>@import url("file:///etc/passwd");</style>'
            ),
            "vrm_reexamination": HOSTILE,
        },
        **extra,
    ))
    runs.append(run_entry(HOSTILE + " 3", not_run=HOSTILE + f" {secret}", **extra))
    data = card(runs, customer=HOSTILE)
    data["certificate"]["languages"] = ["en", "ru", "pt"]
    for key in ("vendor", "model", "gpu", "serial", "driver"):
        data["card"][key] = HOSTILE
    data["phase1"]["vrm_rail_resistance"] = HOSTILE
    return write_card(root, data)


def test_hostile_bundle_is_shown_as_text_and_opens_nothing_outside(tmp_path: Path) -> None:
    """Markup and template syntax everywhere, links and images to a secret file: all inert.

    The build runs in a child process with an audit hook (sys.addaudithook cannot be removed):
    every file it opens after start-up must be in the bundle, templates/, the output folder,
    or Python's own installation (lazy imports); the secret next to the bundle never is.
    """
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    bundle = _hostile_bundle(tmp_path / "bundle", secret)
    out = tmp_path / "out"
    opened = opened_during_cli(["build", str(bundle), "--out", str(out), "--jobs", "1"],
                               tmp_path / "opened.json", warm_up=True)
    allowed = [str(bundle.resolve()), str(templates_dir()), str(out.resolve()), sys.prefix,
               sys.base_prefix, str(Path(__import__("certgen").__file__).resolve().parent),
               str(templates_dir().parent / "locales")]
    # The lab profile ($CERTGEN_LAB) is an input the user names, like the bundle.
    outside = [p for p in opened if p != str(SAMPLE_LAB)
               and not any(os.path.realpath(p).startswith(a) for a in allowed)]
    assert outside == [], sorted(set(outside))
    assert not any(str(secret) in p for p in opened)
    folder = out / "TEST-0001"
    for lang in ("en", "ru", "pt"):
        html = (folder / f"certificate.{lang}.html").read_text()
        assert "<script>alert(1)" not in html and "<iframe" not in html and "<b onmouseover" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;{{ 7*7 }}{% if 1 %}x{% endif %}" in html
        assert "javascript:" not in html and "<img" not in html and "evil.example" not in html
        assert "TOP SECRET" not in html
        reader = pypdf.PdfReader(io.BytesIO((folder / f"certificate.{lang}.pdf").read_bytes()))
        assert list(reader.attachments) == ["record.json"]
        text = "".join(page.extract_text() for page in reader.pages)
        assert "TOP SECRET" not in text and "{{ 7*7 }}" in text


def test_a_capture_outside_the_bundle_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = write_presentmon(tmp_path / "outside.csv", frames_for(120.0, 110.0, 100.0))
    bundle = write_card(tmp_path / "bundle", card([run_entry(capture=f"../{outside.name}")]))
    code, stdout, stderr = run_cli(["build", str(bundle), "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and stdout == ""
    assert stderr.startswith("certgen: card.yaml: runs[0].capture")
    assert not (tmp_path / "o" / "TEST-0001").exists()


def test_a_pool_builds_the_largest_bundles_first_and_reports_in_the_given_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from certgen.builders import batch as module

    bundles = []
    for i, n_runs in enumerate([1, 3, 2]):
        root = tmp_path / f"b{i}"
        runs = []
        for r in range(n_runs):
            write_presentmon(root / f"captures/r{r}.csv", frames_for(120.0, 110.0, 100.0))
            runs.append(run_entry(f"Game {r}", capture=f"captures/r{r}.csv"))
        data = card(runs)
        data["certificate"]["id"] = f"POOL-{i}"
        bundles.append(str(write_card(root, data)))
    assert [module.bundle_cost(b) > 0 for b in bundles] == [True] * 3
    assert module.bundle_cost(tmp_path / "missing") == 0
    submitted: list[str] = []

    class Pool:  # stands in for ProcessPoolExecutor: records the submission order
        def __init__(self, **kwargs: object) -> None:
            pass

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def submit(self, fn, bundle, out_dir, kwargs):  # type: ignore[no-untyped-def]
            from concurrent.futures import Future

            submitted.append(Path(bundle).name)
            future: Future[object] = Future()
            future.set_result(fn(bundle, out_dir, kwargs))
            return future

    monkeypatch.setattr("certgen.builders.batch.ProcessPoolExecutor", Pool)
    out = tmp_path / "out"
    code, stdout, _ = run_cli(["build", *bundles, "--out", str(out), "--lang", "en", "--jobs", "2"], capsys)
    assert code == 0
    assert submitted == ["b1", "b2", "b0"]  # 3 runs, 2 runs, 1 run
    assert [line.split()[1] for line in stdout.splitlines()] == ["POOL-0", "POOL-1", "POOL-2"]


def test_two_jobs_build_two_bundles_in_worker_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundles = []
    for i in range(2):
        root = tmp_path / f"b{i}"
        write_presentmon(root / "captures/r.csv", frames_for(120.0, 110.0, 100.0))
        data = card([run_entry("Game", capture="captures/r.csv")])
        data["certificate"]["id"] = f"JOBS-{i}"
        bundles.append(str(write_card(root, data)))
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["build", *bundles, "--out", str(out), "--lang", "ru", "--jobs", "2"], capsys)
    assert (code, stderr) == (0, "")
    assert [line.split()[:2] for line in stdout.splitlines()] == [["built", "JOBS-0"], ["built", "JOBS-1"]]
    for i in range(2):
        assert (out / f"JOBS-{i}" / "manifest.json").is_file()


REFUSAL_REASONS = [
    'card.yaml: runs[0].first_capture: run "Game 2560x1440" needed a re-run (stutter 0.6110 > 0.60) '
    "but has no archived first capture; the re-run step was skipped (archive the first capture and "
    "cite its SHA-256)",
    'card.yaml: runs[0].soft_limit: run "Game 2560x1440" has stutter 0.6110 > 0.60; a justification '
    "and a Phase 1 VRM re-examination are required before this certificate can be issued",
]


def _one_good_one_refused(tmp_path: Path) -> list[str]:
    """POOL-OK builds; POOL-NO's run has stutter above 0.60 and no soft_limit: refused."""
    bundles = []
    for cert_id, figures in [("POOL-OK", (120.0, 110.0, 100.0)), ("POOL-NO", (100.0, 82.0, 31.9))]:
        root = tmp_path / cert_id
        write_presentmon(root / "captures/r.csv", frames_for(*figures))
        data = card([run_entry("Game", capture="captures/r.csv")])
        data["certificate"]["id"] = cert_id
        bundles.append(str(write_card(root, data)))
    return bundles


def test_a_refusal_in_a_worker_process_reaches_the_parent_with_its_fields(tmp_path: Path) -> None:
    """The RefusalError a worker raises arrives as itself (reasons, file), not as a message."""
    bundles = _one_good_one_refused(tmp_path)
    results = {}
    for jobs in (1, 2):
        built = build_many(bundles, str(tmp_path / f"out{jobs}"), languages=["en"], fleet=None,
                           draft=False, verify_base=None, jobs=jobs,
                           lab=load_lab(SAMPLE_LAB))
        assert [bundle for bundle, _ in built] == bundles
        assert not isinstance(built[0][1], Exception)
        results[jobs] = built[1][1]
    pooled, alone = results[2], results[1]
    assert type(pooled) is RefusalError and type(alone) is RefusalError
    # The rules name file and field in each reason (the error itself carries no single one).
    assert pooled.reasons == REFUSAL_REASONS
    assert (pooled.file, pooled.line, pooled.field) == (None, None, None)
    assert vars(pooled) == vars(alone) and str(pooled) == str(alone)


def test_a_refusal_in_a_worker_process_prints_as_in_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundles = _one_good_one_refused(tmp_path)
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        code, stdout, stderr = run_cli(["build", *bundles, "--out", str(out), "--lang", "en",
                                        "--jobs", jobs], capsys)
        outputs[jobs] = (code, stdout.replace(str(out), "OUT"), stderr)
    assert outputs["2"] == outputs["1"]
    code, stdout, stderr = outputs["2"]
    assert code == 1 and stdout.startswith("built POOL-OK (en) -> OUT")
    assert stderr.splitlines() == [f"certgen: {bundles[1]}: {'; '.join(REFUSAL_REASONS)}",
                                   "certgen: 1 of 2 bundles were not built"]


def _stderr_of_build(bundle: Path, out: Path, *, terminal: bool) -> str:
    """stderr of `certgen build BUNDLE --out OUT --lang en,pt`, on a pseudo-terminal or a pipe."""
    import pty

    args = [sys.executable, "-m", "certgen", "build", str(bundle), "--out", str(out),
            "--lang", "en,pt"]
    if not terminal:
        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stderr
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: every end of the terminal's follower is closed
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(timeout=120) == 0, seen
    finally:
        os.close(leader)
    return seen.decode("utf-8", "replace")


def test_a_single_bundle_shows_its_documents_on_a_terminal_only(tmp_path: Path) -> None:
    """Issue 27: a 100-run certificate renders about 45 s a language; on a terminal the build
    names each PDF as it makes it, off one (a script, a pipe) stderr stays empty."""
    bundle = _bundle(tmp_path / "bundle")
    shown = _stderr_of_build(bundle, tmp_path / "tty", terminal=True)
    frames = [part.strip() for part in shown.replace("\r", "\n").split("\n") if part.strip()]
    # The bar names the PDF being made: English first, Portuguese second, then 100 %.
    english = next(i for i, f in enumerate(frames) if "certificate.en.pdf" in f)
    portuguese = next(i for i, f in enumerate(frames) if "certificate.pt.pdf" in f)
    assert english < portuguese and "0%" in frames[english] and "50%" in frames[portuguese]
    assert any("100%" in f for f in frames[portuguese:])
    assert _stderr_of_build(bundle, tmp_path / "pipe", terminal=False) == ""
