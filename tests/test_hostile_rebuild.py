"""Regression tests for issue 27: a failed rebuild keeps the last good one, and every output
folder failure of every command that writes is one line. Each failure a rebuild can meet (a
render error, a signing failure, kill -9 mid-write and mid-commit, a full disk) is injected and
the previous build is checked file for file, manifest included (docs/limits.md)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bundlekit import run_cli, simple_bundle
from rendercache import RenderCache, prelude
from test_fleet_hostile import small_tmpfs

from certgen.errors import CertgenError, RenderError
from certgen.writer import LOCK_NAME, STAGING_NAME, Writer, read_manifest, verify_manifest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LAB = ROOT / "examples" / "lab.yaml"
CHANGE = ROOT / "examples" / "compare" / "change"
IS_ROOT = os.geteuid() == 0
CERT = "TEST-0001"
"""The certificate id of bundlekit's simple_bundle."""


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, hidden ones included, with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _whole(folder: Path) -> bool:
    manifest = read_manifest(folder)
    return manifest is not None and verify_manifest(folder, manifest)


def _build(bundle: Path, out: Path, capsys: pytest.CaptureFixture[str], lang: str = "en"
           ) -> tuple[int, str, str]:
    return run_cli(["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB),
                    "--lang", lang], capsys)


@pytest.fixture
def built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, dict[str, bytes]]:
    """A bundle built once in English: (bundle, out, the files of its folder)."""
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    out = tmp_path / "out"
    code, _out, err = _build(bundle, out, capsys)
    assert (code, err) == (0, "")
    assert _whole(out / CERT)
    return bundle, out, _files(out / CERT)


# --- build: every failure of a rebuild keeps the previous build --------------------------------


def test_a_render_error_keeps_the_previous_build(
    built: tuple[Path, Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import certgen.builders.certificate as module

    bundle, out, before = built

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise RenderError("a render error", file="certificate.ru.html")

    monkeypatch.setattr(module, "render_certificate_html", fails)
    code, _out, err = _build(bundle, out, capsys, lang="en,ru")
    assert (code, err) == (1, "certgen: certificate.ru.html: a render error\n")
    assert _files(out / CERT) == before and _whole(out / CERT)


def test_a_signing_failure_keeps_the_previous_signed_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second PDF's signature fails (a timestamp authority gone, say)."""
    from conftest import SIGNED_AT
    from pkikit import PASSPHRASE, make_pki

    import certgen.builders.certificate as module
    from certgen.inputs.lab import load_lab
    from certgen.render.sign import signing_key

    key = signing_key(make_pki().lab_p12, PASSPHRASE, source="lab.p12").at(SIGNED_AT, given=True)
    lab = load_lab(SAMPLE_LAB)
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    out = tmp_path / "out"
    module.build_bundle(bundle, out, languages=["en"], lab=lab, sign=key)
    before = _files(out / CERT)
    real = module.sign_pdf
    calls: list[bytes] = []

    def second_fails(pdf: bytes, *args: Any, **kwargs: Any) -> bytes:
        calls.append(pdf)
        if len(calls) == 2:
            raise CertgenError("the timestamp authority did not answer", file="--tsa")
        return real(pdf, *args, **kwargs)

    monkeypatch.setattr(module, "sign_pdf", second_fails)
    with pytest.raises(CertgenError) as info:
        module.build_bundle(bundle, out, languages=["en", "ru"], lab=lab, sign=key)
    assert str(info.value) == "--tsa: the timestamp authority did not answer"
    assert _files(out / CERT) == before and _whole(out / CERT)


def test_a_failure_while_writing_keeps_the_previous_build(
    built: tuple[Path, Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The third file of the rebuild fails (as a full disk would, half-way through)."""
    import errno

    import certgen.writer as module

    bundle, out, before = built
    real = module._write_new
    calls: list[Path] = []

    def third_fails(path: Path, *rest: Any) -> int:
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, *rest)

    monkeypatch.setattr(module, "_write_new", third_fails)
    code, _out, err = _build(bundle, out, capsys, lang="en,ru")
    assert code == 1
    assert err.endswith(": cannot write: No space left on device (the disk is full)\n")
    assert err.count("\n") == 1
    assert _files(out / CERT) == before and _whole(out / CERT)  # no staging folder, no lock


_KILL_SCRIPT = """
import os, signal, sys
import certgen.writer as module
from certgen.cli import main

where, count = sys.argv[1], int(sys.argv[2])
name = {"write": "_write_new", "keep": "_keep_previous", "commit": "_move_in"}[where]
target = module if where == "write" else module.Writer
real = getattr(target, name)
calls = []

def dies(*args):
    calls.append(args)
    if len(calls) == count:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args)

setattr(target, name, dies)
main(sys.argv[3:])
"""
"""`where`: "write" kills at the count-th staged file; "keep" at the commit point, before the
old manifest is moved aside; "commit" at the count-th rename of the commit (the manifest's is
the last)."""


def _killed_build(tmp_path: Path, where: str, count: int, args: list[str],
                  cache: Path | None) -> None:
    """Run certgen ARGS in a subprocess killed as `where` and `count` say (_KILL_SCRIPT). Its
    renders come from the run's render cache (`cache`, the `subprocess_render_cache` fixture):
    what is killed here is the writer, not the render."""
    script = tmp_path / "killed.py"
    script.write_text(prelude(cache) + _KILL_SCRIPT)
    done = subprocess.run([sys.executable, str(script), where, str(count), *args],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_kill_9_mid_write_keeps_the_previous_build(
    built: tuple[Path, Path, dict[str, bytes]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    subprocess_render_cache: Path | None,
) -> None:
    bundle, out, before = built
    args = ["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB), "--lang", "en,ru"]
    _killed_build(tmp_path, "write", 3, args, subprocess_render_cache)
    left = _files(out / CERT)
    assert {k: v for k, v in left.items() if not k.startswith(f"{STAGING_NAME}/")
            and k != LOCK_NAME} == before
    assert _whole(out / CERT)  # the previous build reads as complete, not interrupted
    code, _out, err = _build(bundle, out, capsys, lang="en,ru")  # the next build cleans up
    assert (code, err) == (0, "")
    assert not (out / CERT / STAGING_NAME).exists() and _whole(out / CERT)
    assert "certificate.ru.pdf" in _files(out / CERT)


EN_RU = ["certificate.en.html", "certificate.en.pdf", "certificate.ru.html",
         "certificate.ru.pdf", "record.json"]
"""The files an en,ru build stages, in the order its commit moves them (the manifest last)."""
KILL_POINTS = {
    "at-the-commit-point": ("keep", 1),
    "before-the-first-rename": ("commit", 1),
    "between-renames": ("commit", 4),
    "after-the-last-rename": ("commit", len(EN_RU) + 1),
}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory, render_cache: RenderCache
          ) -> dict[str, dict[str, bytes]]:
    """The bundle built into an empty folder, per --lang: every file, hidden ones included
    (by `certgen build` in a process of its own, rendering through the run's cache)."""
    tmp = tmp_path_factory.mktemp("clean")
    bundle = simple_bundle(tmp / "b", [(120.0, 90.0, 80.0)])
    command = (prelude(render_cache.for_subprocess())
               + "import sys\nfrom certgen.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    found = {}
    for lang in ("en", "en,ru"):
        out = tmp / lang
        done = subprocess.run([sys.executable, "-c", command, "build", str(bundle), "--out",
                               str(out), "--lab", str(SAMPLE_LAB), "--lang", lang],
                              capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        found[lang] = _files(out / CERT)
    return found


def _plant(staging: Path, keep: Path) -> dict[int, str]:
    """Tamper with a leftover staging folder as its owner could: a file this run does not
    render, another this run renders with other bytes, and every staged file still there
    changed. Each file of it is then hard-linked into `keep`, so its inode stays in use while
    the next build runs (os.replace keeps a file's inode: one of them in the output would be a
    file moved out of the leftover folder). Returns those inodes."""
    (staging / "planted.txt").write_bytes(b"never published")
    (staging / "certificate.pt.html").write_bytes(b"<p>planted</p>")
    for path in staging.rglob("*"):
        if path.is_file() and path.name not in ("manifest.json", "planted.txt"):
            path.write_bytes(b"tampered: not what this run renders")
    keep.mkdir()
    inodes = {}
    for i, path in enumerate(sorted(p for p in staging.rglob("*") if p.is_file())):
        os.link(path, keep / str(i))
        inodes[path.stat().st_ino] = path.relative_to(staging).as_posix()
    return inodes


@pytest.mark.parametrize(("point", "lang"), [
    *((point, "en,ru") for point in KILL_POINTS),
    ("between-renames", "en"),
    ("after-the-last-rename", "en"),
])
def test_kill_9_mid_commit_the_next_build_moves_nothing_out_and_equals_a_clean_build(
    built: tuple[Path, Path, dict[str, bytes]], tmp_path: Path, point: str, lang: str,
    clean: dict[str, dict[str, bytes]], capsys: pytest.CaptureFixture[str],
    subprocess_render_cache: Path | None,
) -> None:
    """A rebuild (en to en,ru) killed at each step of its commit. The next build removes the
    leftover staging folder without moving anything out of it (the files planted there after
    the kill never reach the output, nor does any file of it), builds every output again, and
    its folder is byte for byte a clean build's into an empty folder, manifest included (no
    field differs: same inputs, same bytes). With `en` the next build writes fewer files than
    the killed one: the ru files that commit moved in are still removed."""
    bundle, out, before = built
    folder = out / CERT
    where, count = KILL_POINTS[point]
    args = ["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB), "--lang", "en,ru"]
    _killed_build(tmp_path, where, count, args, subprocess_render_cache)
    staging = folder / STAGING_NAME
    assert (staging / "manifest.json").is_file()  # past the commit point
    live = {k: v for k, v in _files(folder).items()
            if not k.startswith(f"{STAGING_NAME}/") and k != LOCK_NAME}
    if where == "keep":
        assert live == before and _whole(folder)  # nothing touched yet
    else:
        assert read_manifest(folder) is None  # a mix never reads as a complete build
        moved = EN_RU[:count - 1]
        assert {name for name in moved if name not in before} <= set(live)
    keep = tmp_path / "kept-links"
    leftover = _plant(staging, keep)
    code, _out, err = _build(bundle, out, capsys, lang=lang)
    assert (code, err) == (0, "")
    assert not staging.exists()
    assert _files(folder) == clean[lang]
    assert _whole(folder)
    assert not {p.relative_to(folder).as_posix() for p in folder.rglob("*")
                if p.is_file() and p.stat().st_ino in leftover}
    # Each file of the leftover folder was unlinked there, never linked anywhere else.
    assert all(p.stat().st_nlink == 1 for p in keep.iterdir())
    assert {p.stat().st_ino for p in keep.iterdir()} == set(leftover)


def test_the_writer_says_when_it_found_an_interrupted_commit(
    built: tuple[Path, Path, dict[str, bytes]], tmp_path: Path,
    subprocess_render_cache: Path | None,
) -> None:
    """`Writer.interrupted`: True after a kill between renames (the folder's manifest is aside
    and the staged one lists what may have moved in); False after a kill before the old
    manifest moved aside (the previous build is whole)."""
    bundle, out, _before = built
    args = ["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB), "--lang", "en,ru"]
    _killed_build(tmp_path, "keep", 1, args, subprocess_render_cache)
    writer = Writer(out, CERT)
    writer.close()
    assert not writer.interrupted and _whole(out / CERT)
    _killed_build(tmp_path, "commit", 3, args, subprocess_render_cache)
    writer = Writer(out, CERT)
    writer.close()
    assert writer.interrupted and read_manifest(out / CERT) is None
    assert not (out / CERT / STAGING_NAME).exists()


def test_kill_9_mid_commit_of_a_report_the_next_compare_equals_a_clean_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
    subprocess_render_cache: Path | None,
) -> None:
    """The report's caller keeps no cache: after a compare (en to en,ru) killed between its
    renames, the next compare (en) rebuilds the report whole, the files the killed commit moved
    in and the next one does not write are removed, and the folder equals a clean compare's
    into an empty folder, hidden files included."""
    compare = ["compare", str(CHANGE / "before.json"), str(CHANGE / "after.json"), "--out"]
    assert run_cli([*compare, str(tmp_path / "clean")], capsys)[0] == 0
    report = tmp_path / "report"
    assert run_cli([*compare, str(report)], capsys)[0] == 0
    before = _files(report)
    _killed_build(tmp_path, "commit", 3, [*compare, str(report), "--lang", "en,ru"],
                  subprocess_render_cache)
    assert read_manifest(report) is None and (report / STAGING_NAME).is_dir()
    assert set(_files(report)) - set(before) - {LOCK_NAME}  # a ru file moved in
    keep = tmp_path / "kept-links"
    leftover = _plant(report / STAGING_NAME, keep)
    code, _out, err = run_cli([*compare, str(report)], capsys)
    assert (code, err) == (0, "")
    assert _files(report) == _files(tmp_path / "clean") and _whole(report)
    assert not {p for p in report.rglob("*") if p.is_file() and p.stat().st_ino in leftover}
    assert all(p.stat().st_nlink == 1 for p in keep.iterdir())


@pytest.mark.skipif(not IS_ROOT, reason="giving a folder to another user needs root; "
                    "test_writer_redirect refuses one writable by others without it")
@pytest.mark.parametrize("leftover", ["a symlink", "another user's", "holds a symlink"])
def test_a_leftover_staging_folder_not_certgen_s_own_is_one_line_and_left_alone(
    built: tuple[Path, Path, dict[str, bytes]], tmp_path: Path, leftover: str,
    capsys: pytest.CaptureFixture[str],
    subprocess_render_cache: Path | None,
) -> None:
    """After a kill between renames, the leftover staging folder swapped for a link, given to
    another user, or holding a link: the next build refuses in one line (exit 1), follows
    nothing, removes nothing and moves nothing."""
    bundle, out, _before = built
    folder = out / CERT
    args = ["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB), "--lang", "en,ru"]
    _killed_build(tmp_path, "commit", 3, args, subprocess_render_cache)
    staging = folder / STAGING_NAME
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "lab.p12").write_bytes(b"the lab's key")
    if leftover == "a symlink":
        staging.rename(tmp_path / "moved-away")
        staging.symlink_to(elsewhere)
        message = ("is a symlink where certgen keeps its staging folder; refusing to follow it "
                   "(a link certgen did not make: remove it)")
    elif leftover == "another user's":
        os.chown(staging, 65534, 65534)
        message = ("is not certgen's own staging folder (another user's, or writable by "
                   "others); refusing to use it (remove it)")
    else:
        (staging / "link").symlink_to(elsewhere / "lab.p12")
        message = ("holds 'link', a symlink certgen never makes; refusing to remove it (remove "
                   "the folder)")
    before = {k: v for k, v in _files(folder).items() if k != LOCK_NAME}  # the killed one's
    code, _out, err = _build(bundle, out, capsys, lang="en,ru")
    assert (code, err) == (1, f"certgen: {staging}: {message}\n")
    assert _files(folder) == before and (elsewhere / "lab.p12").read_bytes() == b"the lab's key"
    assert staging.is_symlink() == (leftover == "a symlink")


def _fill(folder: Path) -> Path:
    """Fill the file system of `folder` to the last block; returns the filler file."""
    filler = folder / "filler"
    # Unbuffered: a buffered file's close would try the bytes that did not fit once more and
    # raise ENOSPC out of the `with` (it did, depending on where the last write stopped).
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    return filler


NEEDS_TMPFS = pytest.mark.skipif(
    not IS_ROOT or shutil.which("mount") is None,
    reason="mounting a tmpfs needs root; test_a_failure_while_writing_keeps_the_previous_build "
           "injects the same ENOSPC without it")


@NEEDS_TMPFS
def test_a_full_disk_keeps_the_previous_build_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27's reproduction: build into a 2 MB tmpfs, fill it, rebuild."""
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    with small_tmpfs(tmp_path / "small", "2m") as out:
        assert _build(bundle, out, capsys)[0] == 0
        report = out / "report"
        compare = ["compare", str(CHANGE / "before.json"), str(CHANGE / "after.json"),
                   "--out", str(report)]
        assert run_cli(compare, capsys)[0] == 0
        before, report_before = _files(out / CERT), _files(report)
        filler = _fill(out)
        code, _out, err = _build(bundle, out, capsys, lang="en,ru,pt")
        assert code == 1 and err.count("\n") == 1
        assert err.endswith(": cannot write: No space left on device (the disk is full)\n")
        assert _files(out / CERT) == before and _whole(out / CERT)
        code, _out, err = run_cli([*compare, "--lang", "en,ru,pt"], capsys)
        assert code == 1 and err.count("\n") == 1 and "(the disk is full)" in err
        assert _files(report) == report_before and _whole(report)
        filler.unlink()
        assert _build(bundle, out, capsys, lang="en,ru")[0] == 0
        assert _whole(out / CERT) and "certificate.ru.pdf" in _files(out / CERT)


# --- compare and site ----------------------------------------------------------------------------


def test_a_failed_compare_rebuild_keeps_the_previous_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import certgen.builders.report as module

    report = tmp_path / "report"
    args = ["compare", str(CHANGE / "before.json"), str(CHANGE / "after.json"), "--out",
            str(report)]
    assert run_cli(args, capsys)[0] == 0
    before = _files(report)

    def fails(*a: Any, **k: Any) -> Any:
        raise CertgenError("a render error", file="report.ru.pdf")

    monkeypatch.setattr(module, "report_pdf", fails)
    code, _out, err = run_cli([*args, "--lang", "en,ru"], capsys)
    assert (code, err) == (1, "certgen: report.ru.pdf: a render error\n")
    assert _files(report) == before and _whole(report)


def test_a_failed_site_rebuild_keeps_the_whole_previous_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_site: Path
) -> None:
    """The site's parts (samples, reports, registry, pages) are staged together: a failure in
    the last page leaves every part of the previous site, not new samples beside old pages.
    The previous site is a copy of the run's shared one (`certgen site`, undated, whose renders
    the run's render cache holds); the rebuild must give it back byte for byte."""
    import certgen.builders.site as module

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)  # undated, as the shared site
    out = tmp_path / "site"
    shutil.copytree(sample_site, out)
    before = _files(out)
    assert _whole(out) and _whole(out / "samples" / "SAMPLE-GOLD-0002")
    (out / "samples" / "SAMPLE-GOLD-0002" / "certificate.pt.html").unlink()  # to be rebuilt

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise CertgenError("a render error", file="index.html")

    render_index_html = module.render_index_html
    monkeypatch.setattr(module, "render_index_html", fails)
    with pytest.raises(CertgenError):
        module.build_site(out)
    after = _files(out)
    assert "samples/SAMPLE-GOLD-0002/certificate.pt.html" not in after  # nothing moved in
    assert after == {k: v for k, v in before.items()
                     if k != "samples/SAMPLE-GOLD-0002/certificate.pt.html"}
    monkeypatch.setattr(module, "render_index_html", render_index_html)
    module.build_site(out)
    assert _files(out) == before  # same inputs, same bytes; the removed file is back


# --- output folders that cannot be written: one line, exit 1, in every command ------------------


def _command(tmp_path: Path, out: str, command: str) -> list[str]:
    bundle = simple_bundle(tmp_path / "cmd-b", [(120.0, 90.0, 80.0)])
    records = tmp_path / "records"
    if command == "registry" and not records.exists():  # a real build for it to read
        subprocess.run([sys.executable, "-m", "certgen", "build", str(bundle), "--out",
                        str(records), "--lab", str(SAMPLE_LAB)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    return {
        "build": ["build", str(bundle), "--out", out, "--lab", str(SAMPLE_LAB)],
        "compare": ["compare", str(CHANGE / "before.json"), str(CHANGE / "after.json"), "--out",
                    out],
        "site": ["site", "--out", out],
        "demo": ["demo", "--out", out],
        "registry": ["registry", str(records), "--out", out, "--as-of", "2026-12-01"],
        "calibrate": ["calibrate", "--fleet", _small_fleet(tmp_path), "--out", out],
    }[command]


def _small_fleet(tmp_path: Path) -> str:
    """The examples' fleet imported into an SQLite file (once per test folder)."""
    fleet = tmp_path / "fleet.sqlite"
    if not fleet.exists():
        subprocess.run([sys.executable, "-m", "certgen", "fleet", "import", "--fleet",
                        str(fleet), str(ROOT / "examples" / "fleet.jsonl")], check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return str(fleet)


def test_a_failed_calibration_rebuild_keeps_the_previous_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import certgen.builders.calibration as module

    report = tmp_path / "calibration"
    args = _command(tmp_path, str(report), "calibrate")
    assert run_cli(args, capsys)[0] == 0
    before = _files(report)

    def fails(*a: Any, **k: Any) -> Any:
        raise CertgenError("a render error", file="calibration.ru.pdf")

    monkeypatch.setattr(module, "render_pdf", fails)
    code, _out, err = run_cli([*args, "--lang", "en,ru"], capsys)
    assert (code, err) == (1, "certgen: calibration.ru.pdf: a render error\n")
    assert _files(report) == before and _whole(report)


@pytest.mark.parametrize("command", ["build", "compare", "site", "demo", "registry", "calibrate"])
def test_an_out_that_is_a_file_is_one_line(tmp_path: Path, command: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("the lab's own file\n")
    args = _command(tmp_path, str(afile), command)
    code, _out, err = run_cli(args, capsys)
    assert (code, err) == (1, f"certgen: {afile}: expected an output folder, got a file\n")
    code, _out, err = run_cli([a if a != str(afile) else str(afile / "sub") for a in args],
                              capsys)
    assert (code, err) == (1, f"certgen: {afile / 'sub'}: cannot create the output folder: a "
                              "part of its path is a file\n")
    assert afile.read_text() == "the lab's own file\n"


@pytest.mark.skipif(not IS_ROOT or shutil.which("mount") is None,
                    reason="root writes through file modes, and only root can mount a read-only "
                           "tmpfs; without root a read-only folder is tested through the writer "
                           "(test_hostile.test_a_read_only_output_folder_is_an_output_error)")
@pytest.mark.parametrize("command", ["build", "compare", "site", "demo", "registry", "calibrate"])
def test_a_read_only_out_is_one_line(tmp_path: Path, command: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    with small_tmpfs(tmp_path / "ro", "1m") as folder:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        args = _command(tmp_path, str(folder), command)
        code, _out, err = run_cli(args, capsys)
        assert code == 1 and err.count("\n") == 1, err
        assert err.startswith(f"certgen: {folder}")
        assert err.endswith(": cannot write: Read-only file system (a read-only file system)\n")


def test_a_site_log_that_cannot_be_written_is_one_line(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    from certgen.commands.site import library_logs
    from certgen.errors import OutputError

    log = tmp_path / "afile" / "site.log"
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputError) as info, library_logs(str(log)):
        pass
    assert str(info.value) == f"{log}: cannot write: Not a directory"


def test_a_site_log_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    from certgen.commands.site import library_logs
    from certgen.errors import OutputError

    with pytest.raises(OutputError) as info, library_logs(str(tmp_path)):
        pass
    assert str(info.value) == f"{tmp_path}: cannot write: expected a file, got a folder"


def test_fleet_export_to_a_folder_or_under_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "fleet.sqlite"
    assert run_cli(["fleet", "import", "--fleet", str(db),
                    str(ROOT / "examples" / "fleet.jsonl")], capsys)[0] == 0
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target, message in [(tmp_path, "cannot write: expected a file, got a folder"),
                            (afile / "x.jsonl", "cannot write: Not a directory")]:
        code, out, err = run_cli(["fleet", "export", "--fleet", str(db), "-o", str(target)],
                                 capsys)
        assert (code, out, err) == (1, "", f"certgen: {target}: {message}\n")
