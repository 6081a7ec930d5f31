"""Writes that cannot be redirected (issue 40, item 7): a local user who can write in the output
folder swaps the staging folder `.certgen-new` for a symlink while a build writes, or plants a
`.certgen.lock` or `.certgen-new` link before it starts. certgen works through directory
descriptors opened with O_NOFOLLOW (docs/limits.md, "Output folders"): nothing is written through
the link, nothing of its target is published, and the link is refused in one line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from bundlekit import run_cli, simple_bundle

import certgen.writer as module
from certgen.errors import OutputError
from certgen.writer import LOCK_NAME, STAGING_NAME, Writer, read_manifest, verify_manifest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LAB = ROOT / "examples" / "lab.yaml"
SECRET = b"-----BEGIN PRIVATE KEY----- the lab's key"


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder`: a file's bytes, a link's target, a folder as '/'."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[rel] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            found[rel] = "/"
        else:
            found[rel] = path.read_bytes()
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder the attacker points the link at, holding a file that must never be published."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "lab.p12").write_bytes(SECRET)
    return folder


@pytest.fixture
def previous(tmp_path: Path) -> Path:
    """An output folder holding a finished build (a.txt)."""
    out = tmp_path / "out"
    with Writer(out) as writer:
        writer.write("a.txt", b"old")
        writer.finish()
    return out


def _swap_on_first_write(monkeypatch: pytest.MonkeyPatch, out: Path, outside: Path) -> None:
    """At the first staged write, rename the staging folder away and put a link to `outside`
    in its place: the race a local user wins between mkdir and the writes."""
    real = module._write_new
    done: list[bool] = []

    def swapping(*args: Any) -> int:
        if not done:
            done.append(True)
            os.rename(out / STAGING_NAME, out / ".moved-away")
            os.symlink(outside, out / STAGING_NAME)
        return real(*args)

    monkeypatch.setattr(module, "_write_new", swapping)


def test_a_staging_folder_swapped_for_a_link_while_writing_writes_and_publishes_nothing_outside(
        previous: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before_out, before_outside = _tree(previous), _tree(outside)
    _swap_on_first_write(monkeypatch, previous, outside)
    writer = Writer(previous)
    writer.write("a.txt", b"new")
    writer.write("charts/b.svg", b"<svg/>")
    with pytest.raises(OutputError) as refused:
        writer.finish()
    assert str(refused.value) == (
        f"{previous / STAGING_NAME}: the staging folder was replaced during the build (it is now "
        "a symlink); nothing is published")
    assert _tree(outside) == before_outside  # nothing written through the link
    after = _tree(previous)
    assert "lab.p12" not in after and not any(isinstance(v, bytes) and v == SECRET
                                              for v in after.values())
    # The previous build is whole; the link is left as it was (never followed, never removed);
    # the folder certgen made and was moved away holds nothing of this build any more.
    assert after == {**before_out, STAGING_NAME: f"-> {outside}", ".moved-away": "/"}
    manifest = read_manifest(previous)
    assert manifest is not None and verify_manifest(previous, manifest)


def test_the_swap_through_the_cli_is_one_line_and_exit_1(
        tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`certgen build` while the staging folder is swapped: one line, exit 1, no lab.p12
    published, nothing of the certificate written outside."""
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    out = tmp_path / "out"
    (out / "TEST-0001").mkdir(parents=True)
    before_outside = _tree(outside)
    _swap_on_first_write(monkeypatch, out / "TEST-0001", outside)
    code, _, err = run_cli(["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB),
                            "--lang", "en"], capsys)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert err.endswith("the staging folder was replaced during the build (it is now a "
                        "symlink); nothing is published\n"), err
    assert _tree(outside) == before_outside
    assert not list(out.rglob("lab.p12")) and not list(out.rglob("*.pdf"))


def test_a_swap_during_the_commit_moves_only_this_build_s_files(
        previous: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The moves come from the staging folder's descriptor: a link swapped in between two of
    them publishes nothing of its target."""
    real = module.Writer._move_in
    moved: list[str] = []

    def swapping(self: Writer, relpath: str) -> None:
        real(self, relpath)
        if not moved:
            os.rename(previous / STAGING_NAME, previous / ".moved-away")
            os.symlink(outside, previous / STAGING_NAME)
        moved.append(relpath)

    monkeypatch.setattr(module.Writer, "_move_in", swapping)
    before_outside = _tree(outside)
    with Writer(previous) as writer:
        writer.write("a.txt", b"new")
        writer.write("b.txt", b"new too")
        writer.finish()
    assert moved == ["a.txt", "b.txt", "manifest.json"]
    assert _tree(outside) == before_outside
    assert sorted(p.name for p in previous.iterdir() if not p.name.startswith(".")) == [
        "a.txt", "b.txt", "manifest.json"]
    assert (previous / "b.txt").read_bytes() == b"new too"


def test_a_writer_inside_a_swapped_staging_folder_writes_through_its_descriptor(
        tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The site builds samples and reports with writers inside the outer writer's staging
    folder: they open it from the outer descriptor, never by its path, so a swap after their
    path checks (at their first write) still writes nothing outside; every later path check
    refuses, and so does the outer commit."""
    out = tmp_path / "site"
    outer = Writer(out)
    inner = Writer(outer.staging / "samples", "ID-1")
    before_outside = _tree(outside)
    _swap_on_first_write(monkeypatch, out, outside)
    inner.write("record.json", b"{}")
    assert _tree(outside) == before_outside
    moved = out / ".moved-away" / "samples" / "ID-1" / STAGING_NAME / "record.json"
    assert moved.read_bytes() == b"{}"
    with pytest.raises(OutputError, match="leads outside the output folder"):
        inner.finish()
    with pytest.raises(OutputError, match="the staging folder was replaced during the build"):
        outer.finish()
    assert _tree(outside) == before_outside
    assert sorted(p.name for p in out.iterdir()) == sorted([".moved-away", STAGING_NAME])


def test_a_planted_staging_link_is_refused_in_one_line(
        previous: Path, outside: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.symlink(outside, previous / STAGING_NAME)
    before = _tree(outside)
    with pytest.raises(OutputError) as refused:
        Writer(previous)
    assert str(refused.value) == (
        f"{previous / STAGING_NAME}: is a symlink where certgen keeps its staging folder; "
        "refusing to follow it (a link certgen did not make: remove it)")
    assert _tree(outside) == before and (previous / STAGING_NAME).is_symlink()
    assert not (previous / "lab.p12").exists()


@pytest.mark.parametrize("target_exists", [False, True])
def test_a_planted_lock_link_is_refused_without_creating_or_touching_its_target(
        tmp_path: Path, previous: Path, target_exists: bool) -> None:
    target = tmp_path / "elsewhere" / "created-by-certgen"
    target.parent.mkdir()
    if target_exists:
        target.write_bytes(SECRET)
    os.symlink(target, previous / LOCK_NAME)
    with pytest.raises(OutputError) as refused:
        Writer(previous)
    assert str(refused.value) == (
        f"{previous / LOCK_NAME}: is a symlink where certgen keeps its lock file; refusing to "
        "follow it (a link certgen did not make: remove it)")
    assert target.exists() == target_exists
    if target_exists:
        assert target.read_bytes() == SECRET
    assert (previous / LOCK_NAME).is_symlink() and not (previous / STAGING_NAME).exists()


def test_a_planted_lock_link_through_the_cli_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    folder = tmp_path / "out" / "TEST-0001"
    folder.mkdir(parents=True)
    target = tmp_path / "not-there"
    os.symlink(target, folder / LOCK_NAME)
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--lab",
                            str(SAMPLE_LAB), "--lang", "en", "--draft"], capsys)
    assert (code, err.count("\n")) == (1, 1) and "Traceback" not in err
    assert err == (f"certgen: {folder / LOCK_NAME}: is a symlink where certgen keeps its lock "
                   "file; refusing to follow it (a link certgen did not make: remove it)\n")
    assert not target.exists()


def test_a_leftover_staging_folder_others_can_write_to_is_never_published(
        previous: Path) -> None:
    """A staging folder with a manifest (a killed commit) is never completed, and removed only
    when it is this user's and private: one another user could have filled (here, writable by
    all) is refused, and nothing in it is moved or removed."""
    planted = previous / STAGING_NAME
    planted.mkdir()
    (planted / "lab.p12").write_bytes(SECRET)
    (planted / "manifest.json").write_text('{"files": [{"path": "lab.p12"}]}')
    planted.chmod(0o777)
    with pytest.raises(OutputError) as refused:
        Writer(previous)
    assert str(refused.value) == (
        f"{planted}: is not certgen's own staging folder (another user's, or writable by "
        "others); refusing to use it (remove it)")
    assert not (previous / "lab.p12").exists() and (planted / "lab.p12").read_bytes() == SECRET
