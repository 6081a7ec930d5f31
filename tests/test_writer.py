"""The writer: atomic, confined to the output folder, no duplicate paths, manifest last."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from certgen.errors import OutputError
from certgen.writer import STAGING_NAME, Writer, read_manifest, verify_manifest


def test_files_and_manifest_are_written_and_listed(tmp_path: Path) -> None:
    writer = Writer(tmp_path, "ASD-1")
    writer.write("record.json", b"{}\n")
    writer.write("certificate.en.html", b"<html></html>")
    manifest_path = writer.finish({"inputs": "abc"})
    manifest = json.loads(manifest_path.read_text())
    assert [f["path"] for f in manifest["files"]] == ["certificate.en.html", "record.json"]
    assert manifest["inputs"] == "abc"
    assert verify_manifest(tmp_path / "ASD-1", manifest)
    assert read_manifest(tmp_path / "ASD-1") == manifest


def test_no_temp_files_left_behind(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    writer.write("a.txt", b"1")
    writer.write("a2.txt", b"2")
    writer.finish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "a2.txt", "manifest.json"]


def test_the_manifest_is_written_after_every_document(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    writer.write("a.txt", b"1")
    assert not (tmp_path / "manifest.json").exists()
    writer.finish()
    assert (tmp_path / "manifest.json").stat().st_mtime_ns >= (tmp_path / "a.txt").stat().st_mtime_ns
    with pytest.raises(OutputError) as info:
        writer.write("b.txt", b"2")
    assert str(info.value) == "b.txt: the manifest is written; no more outputs"


def test_a_rebuild_leaves_the_previous_build_whole_until_it_finishes(tmp_path: Path) -> None:
    first = Writer(tmp_path)
    first.write("a.txt", b"1")
    first.finish()
    before = read_manifest(tmp_path)
    rebuild = Writer(tmp_path)
    rebuild.write("a.txt", b"2")
    rebuild.write("b.txt", b"2")
    assert read_manifest(tmp_path) == before  # the new files wait in the staging folder
    assert before is not None and verify_manifest(tmp_path, before)
    assert not (tmp_path / "b.txt").exists()
    rebuild.finish()
    assert (tmp_path / "a.txt").read_bytes() == b"2" and (tmp_path / "b.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt", "manifest.json"]


def test_a_rebuild_left_without_finish_keeps_the_previous_build(tmp_path: Path) -> None:
    first = Writer(tmp_path)
    first.write("a.txt", b"1")
    first.finish()
    with Writer(tmp_path) as rebuild:
        rebuild.write("a.txt", b"2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "manifest.json"]
    manifest = read_manifest(tmp_path)
    assert manifest is not None and verify_manifest(tmp_path, manifest)
    assert (tmp_path / "a.txt").read_bytes() == b"1"


def test_names_the_writer_keeps_are_refused(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    with pytest.raises(OutputError) as info:
        writer.write(f"{STAGING_NAME}/a.txt", b"x")
    assert str(info.value) == f"'{STAGING_NAME}/a.txt': a name the writer keeps for itself"


def test_two_outputs_with_the_same_path_are_refused(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    writer.write("certificate.en.pdf", b"1")
    with pytest.raises(OutputError) as info:
        writer.write("certificate.en.pdf", b"2")
    assert str(info.value) == "certificate.en.pdf: two outputs with the same path"
    writer.finish()
    assert (tmp_path / "certificate.en.pdf").read_bytes() == b"1"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../evil.txt", "'../evil.txt': expected a path without '.' or '..' segments"),
        ("/etc/evil.txt", "'/etc/evil.txt': expected a relative path inside the output folder"),
        ("a/../../evil", "'a/../../evil': expected a path without '.' or '..' segments"),
        ("a\\b", "'a\\\\b': expected a relative path inside the output folder"),
    ],
)
def test_paths_outside_the_folder_are_refused(tmp_path: Path, path: str, message: str) -> None:
    writer = Writer(tmp_path / "out")
    with pytest.raises(OutputError) as info:
        writer.write(path, b"x")
    assert str(info.value) == message
    assert not (tmp_path / "evil.txt").exists()


def test_a_symlinked_folder_leading_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(outside, out / "link")
    writer = Writer(out)
    with pytest.raises(OutputError) as info:
        writer.write("link/x.txt", b"x")
    assert str(info.value) == "'link/x.txt': leads outside the output folder"
    assert list(outside.iterdir()) == []


def test_a_symlinked_certificate_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(outside, out / "ASD-1")
    with pytest.raises(OutputError):
        Writer(out, "ASD-1")


def test_a_changed_file_fails_manifest_verification(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    writer.write("a.txt", b"1")
    manifest = json.loads(writer.finish().read_text())
    (tmp_path / "a.txt").write_bytes(b"2")
    assert not verify_manifest(tmp_path, manifest)


# --- stale outputs of a previous build ---------------------------------------------------------


def _build(folder: Path, files: dict[str, bytes]) -> Writer:
    writer = Writer(folder)
    for name, data in files.items():
        writer.write(name, data)
    writer.finish()
    return writer


def test_a_rebuild_with_fewer_outputs_removes_the_ones_it_no_longer_makes(tmp_path: Path) -> None:
    _build(tmp_path, {"record.json": b"{}", "certificate.en.pdf": b"en", "certificate.ru.pdf": b"ru",
                      "certificate.ru.html": b"ru", "charts/ru/a.svg": b"<svg/>"})
    (tmp_path / "notes.txt").write_text("the lab's own file, never listed")
    writer = _build(tmp_path, {"record.json": b"{}", "certificate.en.pdf": b"en2"})
    assert writer.removed() == ["certificate.ru.html", "certificate.ru.pdf", "charts/ru/a.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "certificate.en.pdf", "manifest.json", "notes.txt", "record.json"]
    manifest = read_manifest(tmp_path)
    assert manifest is not None and verify_manifest(tmp_path, manifest)
    assert [f["path"] for f in manifest["files"]] == ["certificate.en.pdf", "record.json"]


def test_stale_outputs_go_after_the_new_files_and_before_the_new_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _build(tmp_path, {"a.txt": b"1", "b.txt": b"2"})
    import certgen.writer as module

    seen: list[tuple[str, bool]] = []
    real = os.replace

    def spy(source: str, target: str, **dir_fds: int) -> None:
        seen.append((Path(target).name, (tmp_path / "b.txt").exists()))
        real(source, target, **dir_fds)

    writer = Writer(tmp_path)
    writer.write("a.txt", b"new")
    assert (tmp_path / "b.txt").exists()  # an interrupted rebuild has removed nothing yet
    monkeypatch.setattr(module.os, "replace", spy)
    writer.finish()
    # The old manifest goes aside first (the folder reads as interrupted during the commit).
    assert seen == [(".manifest.previous.json", True), ("a.txt", True), ("manifest.json", False)]


def test_only_listed_files_inside_the_folder_are_ever_removed(tmp_path: Path) -> None:
    """A manifest that lists paths outside the folder or through a symlink removes nothing there."""
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep")
    (tmp_path / "victim.txt").write_text("keep")
    out.mkdir()
    os.symlink(outside, out / "link")
    os.symlink(outside / "victim.txt", out / "file-link.txt")
    listed = ["../victim.txt", str(tmp_path / "victim.txt"), "link/victim.txt", "file-link.txt",
              "manifest.json", "missing.txt", "", 7]
    (out / "manifest.json").write_text(json.dumps(
        {"files": [{"path": p, "size": 1, "sha256": "0"} for p in listed]}))
    writer = Writer(out)
    writer.write("a.txt", b"1")
    writer.finish()
    assert writer.removed() == []
    assert (outside / "victim.txt").read_text() == "keep"
    assert (tmp_path / "victim.txt").read_text() == "keep"
    assert (out / "file-link.txt").is_symlink()


def test_a_malformed_previous_manifest_removes_nothing(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("x")
    (tmp_path / "manifest.json").write_text("{not json")
    writer = _build(tmp_path, {"a.txt": b"1"})
    assert writer.removed() == [] and (tmp_path / "old.txt").exists()


def test_a_file_where_the_new_build_needs_a_folder_is_one_line_and_blocks_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "charts").write_text("the lab's own file")
    writer = Writer(tmp_path)
    writer.write("charts/a.svg", b"<svg/>")
    with pytest.raises(OutputError) as info:
        writer.finish()
    assert str(info.value) == ("charts/a.svg: cannot put the new file in place: a file stands "
                               "where a folder must go")
    # The failed commit is never completed later: its staging folder is removed at once, and
    # the folder reads as interrupted until a build's commit succeeds.
    assert not (tmp_path / STAGING_NAME).exists() and read_manifest(tmp_path) is None
    assert (tmp_path / "charts").read_text() == "the lab's own file"
    (tmp_path / "charts").unlink()
    again = Writer(tmp_path)  # the folder is free
    again.write("charts/a.svg", b"<svg/>")
    again.finish()
    assert (tmp_path / "charts" / "a.svg").read_bytes() == b"<svg/>"
    assert (tmp_path / "charts").is_dir() and not (tmp_path / STAGING_NAME).exists()


def test_a_streamed_file_is_listed_by_its_whole_bytes(tmp_path: Path) -> None:
    import hashlib

    pieces = [b"x" * 1000, b"", "é\n".encode(), b"y" * 70_000]
    writer = Writer(tmp_path)
    writer.write_stream("big.json", iter(pieces))
    writer.finish()
    whole = b"".join(pieces)
    assert (tmp_path / "big.json").read_bytes() == whole
    manifest = read_manifest(tmp_path)
    assert manifest is not None and verify_manifest(tmp_path, manifest)
    [entry] = manifest["files"]  # type: ignore[misc]
    assert entry["size"] == len(whole)  # type: ignore[index]
    assert entry["sha256"] == hashlib.sha256(whole).hexdigest()  # type: ignore[index]


def test_a_stream_that_fails_half_way_keeps_the_previous_build(tmp_path: Path) -> None:
    first = Writer(tmp_path)
    first.write("big.json", b"old")
    first.finish()

    def pieces() -> object:
        yield b"new, half of it"
        raise RuntimeError("the render failed")

    with Writer(tmp_path) as rebuild, pytest.raises(RuntimeError):
        rebuild.write_stream("big.json", pieces())  # type: ignore[arg-type]
    assert not (tmp_path / STAGING_NAME).exists()
    assert (tmp_path / "big.json").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json", "manifest.json"]


def _tree_build(out: Path, samples: dict[str, dict[str, bytes]], index: bytes,
                die_after: int | None = None) -> Writer:
    """A tree built as the site builds one: an outer writer, a nested writer per sample inside
    its staging folder, the outer commit moving everything in. `die_after`: the outer commit
    stops (as kill -9 would) after that many renames."""
    outer = Writer(out)
    for name, files in samples.items():
        with Writer(outer.staging / "samples", name) as inner:
            for relpath, data in files.items():
                inner.write(relpath, data)
            inner.finish()
    outer.write("index.html", index)
    if die_after is None:
        outer.finish()
        return outer
    real = Writer._move_in
    moved: list[str] = []

    def dies(self: Writer, relpath: str) -> None:
        if self is outer and len(moved) == die_after:
            raise KeyboardInterrupt  # stands for kill -9: nothing after this point runs
        moved.append(relpath)
        real(self, relpath)

    Writer._move_in = dies  # type: ignore[method-assign]
    try:
        with pytest.raises(KeyboardInterrupt):
            outer.finish()
    finally:
        Writer._move_in = real  # type: ignore[method-assign]
    outer.close()
    return outer


def _all_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_interrupted_tree_commit_is_removed_and_the_next_tree_equals_a_clean_one(
    tmp_path: Path,
) -> None:
    """A site-shaped commit killed after it moved a nested sample's new file in (listed only
    by that sample's staged manifest, which never reached the output): the next writer moves
    nothing out of the leftover staging folder, and the next build's commit removes that file,
    so the tree equals the same build made into an empty folder, hidden files included."""
    out = tmp_path / "site"
    _tree_build(out, {"A": {"record.json": b"1", "x.html": b"1"},
                      "B": {"record.json": b"1"}}, b"index 1")
    killed = {"A": {"new.html": b"2", "record.json": b"2", "x.html": b"2"},
              "B": {"record.json": b"2"}}
    # Sorted moves: index.html, samples/A/new.html, then the kill.
    _tree_build(out, killed, b"index 2", die_after=2)
    assert (out / "samples" / "A" / "new.html").read_bytes() == b"2"
    assert read_manifest(out) is None and (out / STAGING_NAME).is_dir()
    (out / STAGING_NAME / "samples" / "A" / "x.html").write_bytes(b"planted")
    final = {"A": {"record.json": b"3", "x.html": b"3"}, "B": {"record.json": b"3"}}
    again = _tree_build(out, final, b"index 3")
    assert again.interrupted
    _tree_build(tmp_path / "clean", final, b"index 3")
    assert _all_files(out) == _all_files(tmp_path / "clean")
    assert "samples/A/new.html" in again.removed()
