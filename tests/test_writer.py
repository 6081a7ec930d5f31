"""The writer: atomic, confined to the output folder, no duplicate paths, manifest last."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from certgen.errors import OutputError
from certgen.writer import Writer, read_manifest, verify_manifest


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


def test_starting_a_rebuild_removes_the_old_manifest(tmp_path: Path) -> None:
    first = Writer(tmp_path)
    first.write("a.txt", b"1")
    first.finish()
    Writer(tmp_path)
    assert not (tmp_path / "manifest.json").exists()  # an interrupted rebuild is visible


def test_two_outputs_with_the_same_path_are_refused(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    writer.write("certificate.en.pdf", b"1")
    with pytest.raises(OutputError) as info:
        writer.write("certificate.en.pdf", b"2")
    assert str(info.value) == "certificate.en.pdf: two outputs with the same path"
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
