"""Bundle loading: the strict card.yaml schema, confined paths and checked zips (docs/spec/bundle.md)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bundlekit import card, run_entry, write_card, write_presentmon

from certgen.errors import BundleError, BundleErrors
from certgen.inputs.bundle import ZipLimits, card_json_schema, load_bundle


def good_bundle(root: Path, **run_extra: Any) -> Path:
    write_presentmon(root / "captures/run0.csv", np.full(1000, 10.0))
    return write_card(root, card([run_entry(capture="captures/run0.csv", **run_extra)]))


def errors_of(path: Path, **kw: Any) -> tuple[str, ...]:
    with pytest.raises(BundleErrors) as info:
        load_bundle(path, **kw)
        pass
    return info.value.errors


def test_a_valid_bundle_loads(tmp_path: Path) -> None:
    root = good_bundle(tmp_path)
    bundle = load_bundle(root)
    assert bundle.card.certificate.id == "TEST-0001"
    assert bundle.card.runs[0].capture == "captures/run0.csv"
    capture = bundle.file("captures/run0.csv")
    assert capture.data == (root / "captures/run0.csv").read_bytes()
    assert capture.sha256 == hashlib.sha256(capture.data).hexdigest()


def test_misspelt_key_is_an_error_with_a_hint(tmp_path: Path) -> None:
    data = card([run_entry(not_run="no RT")])
    data["card"]["vendr"] = data["card"].pop("vendor")
    write_card(tmp_path, data)
    assert errors_of(tmp_path) == (
        "card.yaml: card.vendor: required key missing",
        "card.yaml: card.vendr: unknown key (did you mean 'vendor'?)",
    )


def test_wrong_types_name_field_and_expectation(tmp_path: Path) -> None:
    data = card([run_entry(resolution="1440", not_run="x"), run_entry(resolution=1440, not_run="x")])
    data["card"]["driver"] = 566.14
    data["card"]["hardware_ray_tracing"] = "yes please"
    write_card(tmp_path, data)
    assert errors_of(tmp_path) == (
        "card.yaml: card.hardware_ray_tracing: expected true or false, got 'yes please'",
        "card.yaml: card.driver: expected a text, got '566.14'",
        "card.yaml: runs[0].resolution: expected WIDTHxHEIGHT, got '1440'",
        "card.yaml: runs[1].resolution: expected WIDTHxHEIGHT, got '1440'",
    )


def test_unknown_upscaler_and_sop(tmp_path: Path) -> None:
    data = card([run_entry(upscaler="dlss", not_run="x")])
    data["certificate"]["sop"] = "SOP-GPU-001 v9"
    write_card(tmp_path, data)
    assert errors_of(tmp_path) == (
        "card.yaml: certificate.sop: expected one of SOP-GPU-001 v1.1, got 'SOP-GPU-001 v9'",
        "card.yaml: runs[0].upscaler: expected one of none, DLSS, FSR, XeSS, got 'dlss'",
    )


def test_missing_capture_is_named(tmp_path: Path) -> None:
    write_card(tmp_path, card([run_entry(capture="captures/nope.csv")]))
    assert errors_of(tmp_path) == (
        "card.yaml: runs[0].capture: 'captures/nope.csv': file not found in the bundle",
    )


def test_parent_and_absolute_paths_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    write_presentmon(outside, np.full(10, 10.0))
    bundle = tmp_path / "bundle"
    runs = [
        run_entry(capture="../outside.csv"),
        run_entry(capture=str(outside)),
        run_entry(capture="captures/../../outside.csv"),
    ]
    write_card(bundle, card(runs))
    assert errors_of(bundle) == (
        ("card.yaml: runs[0].capture: expected a path inside the bundle without '..', "
        "got '../outside.csv'"),
        f"card.yaml: runs[1].capture: expected a relative path inside the bundle, got '{outside}'",
        ("card.yaml: runs[2].capture: expected a path inside the bundle without '..', "
        "got 'captures/../../outside.csv'"),
    )


def test_symlink_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    write_presentmon(secret, np.full(10, 10.0))
    bundle = tmp_path / "bundle"
    (bundle / "captures").mkdir(parents=True)
    os.symlink(secret, bundle / "captures" / "link.csv")
    write_card(bundle, card([run_entry(capture="captures/link.csv")]))
    assert errors_of(bundle) == (
        ("card.yaml: runs[0].capture: 'captures/link.csv': resolves outside the bundle "
        "(a symlink out)"),
    )


def test_symlink_inside_the_bundle_is_fine(tmp_path: Path) -> None:
    good_bundle(tmp_path)
    os.symlink(tmp_path / "captures/run0.csv", tmp_path / "captures/alias.csv")
    write_card(tmp_path, card([run_entry(capture="captures/alias.csv")]))
    bundle = load_bundle(tmp_path)
    assert bundle.card.runs[0].capture == "captures/alias.csv"


def test_first_capture_path_is_confined_too(tmp_path: Path) -> None:
    good_bundle(tmp_path, first_capture={"file": "../x.csv", "sha256": "0" * 64})
    assert errors_of(tmp_path) == (
        ("card.yaml: runs[0].first_capture.file: expected a path inside the bundle without '..', "
        "got '../x.csv'"),
    )


def test_duplicate_keys_are_refused_with_lines(tmp_path: Path) -> None:
    good_bundle(tmp_path)
    text = (tmp_path / "card.yaml").read_text()
    text = text.replace("customer: Test Customer\n", "customer: Test Customer\ncustomer: Other\n")
    write_card(tmp_path, text)
    line = text.splitlines().index("customer: Other") + 1
    assert errors_of(tmp_path) == (
        f"card.yaml:{line}: duplicate key 'customer' (first at line {line - 1})",
    )


def test_capture_and_not_run_are_exclusive(tmp_path: Path) -> None:
    good_bundle(tmp_path)
    runs = [run_entry(), run_entry(not_run="x", capture="captures/run0.csv")]
    write_card(tmp_path, card(runs))
    assert errors_of(tmp_path) == (
        "card.yaml: runs[0]: expected exactly one of 'capture' and 'not_run'",
        "card.yaml: runs[1]: expected exactly one of 'capture' and 'not_run'",
    )


def test_every_error_is_reported_at_once(tmp_path: Path) -> None:
    text = """\
certificate:
  id: ASD-1
  issued: 2026-11-29
  sop: SOP-GPU-001 v1.1
  languages: [en, de]
customer: Example
card:
  vendor: Example
  model: M
  gpu: G
  vram_gb: six
  serial: S
  hardware_ray_tracing: false
  driver: "1"
phase1: {vrm_rail_resistance: pass}
grade_cap: {grade: BRONZE, reason: r}
runs:
  - title: T
    resolution: 2560x1440
    preset: Ultra
    ray_tracing: false
    upscaler: none
    upscaler_mode: null
    frame_generation: false
    captrue: captures/a.csv
"""
    write_card(tmp_path, text)
    with pytest.raises(BundleErrors) as info:
        load_bundle(tmp_path)
        pass
    assert info.value.errors == (
        "card.yaml: certificate.languages[1]: expected one of en, ru, pt, got 'de'",
        "card.yaml: card.vram_gb: expected a number, got 'six'",
        "card.yaml: grade_cap.grade: expected one of PLATINUM, GOLD, SILVER, got 'BRONZE'",
        "card.yaml: runs[0].captrue: unknown key (did you mean 'capture'?)",
    )
    # One error, one line each: the CLI prints them all.
    assert str(info.value) == "\n".join(info.value.errors)
    assert isinstance(info.value, BundleError) and isinstance(info.value, ValueError)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    write_card(tmp_path, "certificate:\n  id: [unclosed\ncustomer: x\n")
    (error,) = errors_of(tmp_path)
    assert error.startswith("card.yaml:3: invalid YAML: ")


def test_no_card_yaml(tmp_path: Path) -> None:
    assert errors_of(tmp_path) == (f"{tmp_path}: no card.yaml in the bundle",)


# --- zips ------------------------------------------------------------------------------------


def zip_folder(folder: Path, target: Path, prefix: str = "my-card/") -> Path:
    with zipfile.ZipFile(target, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, prefix + path.relative_to(folder).as_posix())
    return target


def test_a_zipped_bundle_loads_from_its_top_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    zipped = zip_folder(good_bundle(tmp_path / "b"), tmp_path / "b.zip")
    private_tmp = tmp_path / "tmp"  # this test's own temporary folder: other tests use /tmp too
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    bundle = load_bundle(zipped)
    assert bundle.card.runs[0].capture == "captures/run0.csv"
    folder = load_bundle(tmp_path / "b")
    assert bundle.files == folder.files  # the same bytes and digests as the folder's
    assert bundle.content_sha256() == folder.content_sha256()
    assert list(private_tmp.iterdir()) == []  # nothing extracted to disk


def test_files_the_card_does_not_name_are_never_read(tmp_path: Path) -> None:
    """A stray file in a bundle (even an unreadable one) costs nothing: only named files are read."""
    root = good_bundle(tmp_path / "b")
    stray = root / "captures" / "junk.bin"
    stray.write_bytes(b"\0" * 1024)
    stray.chmod(0)
    bundle = load_bundle(root)
    assert [f.name for f in bundle.files] == ["captures/run0.csv"]
    zipped = zip_folder(root, tmp_path / "b.zip") if os.access(stray, os.R_OK) else None
    if zipped is not None:  # root can read a mode-0 file: then zip it and check the zip too
        assert [f.name for f in load_bundle(zipped).files] == ["captures/run0.csv"]


def test_a_zip_entry_whose_data_is_corrupt_is_refused_in_one_line(tmp_path: Path) -> None:
    zipped = zip_folder(good_bundle(tmp_path / "b"), tmp_path / "b.zip")
    data = bytearray(zipped.read_bytes())
    at = data.find(b"Application")  # inside the stored capture entry: its CRC no longer matches
    data[at] ^= 0x20
    zipped.write_bytes(bytes(data))
    problems = errors_of(zipped)
    assert len(problems) == 1
    assert problems[0].startswith(f"{zipped}: captures/run0.csv: cannot read the zip entry (")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("../evil.csv", "escapes the bundle through '..'"),
        ("my-card/../../evil.csv", "escapes the bundle through '..'"),
        ("/etc/evil.csv", "has an absolute path"),
        ("C:/evil.csv", "has an absolute path"),
    ],
)
def test_zip_slip_entries_are_refused_before_extraction(
    tmp_path: Path, entry: str, problem: str
) -> None:
    zipped = zip_folder(good_bundle(tmp_path / "b"), tmp_path / "b.zip")
    with zipfile.ZipFile(zipped, "a") as zf:
        zf.writestr(entry, "x")
    assert errors_of(zipped) == (f"{zipped}: entry {entry!r} {problem}",)
    assert not (tmp_path / "evil.csv").exists()


def test_zip_symlink_entry_is_refused(tmp_path: Path) -> None:
    zipped = zip_folder(good_bundle(tmp_path / "b"), tmp_path / "b.zip")
    with zipfile.ZipFile(zipped, "a") as zf:
        info = zipfile.ZipInfo("my-card/captures/link.csv")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    assert errors_of(zipped) == (f"{zipped}: entry 'my-card/captures/link.csv' is a symbolic link",)


def test_zip_size_limits_are_checked_before_extraction(tmp_path: Path) -> None:
    zipped = zip_folder(good_bundle(tmp_path / "b"), tmp_path / "b.zip")
    with zipfile.ZipFile(zipped) as zf:
        sizes = {i.filename: i.file_size for i in zf.infolist()}
    big = "my-card/captures/run0.csv"
    limits = ZipLimits(max_entries=10, max_entry_bytes=sizes[big] - 1, max_total_bytes=10**9)
    assert errors_of(zipped, limits=limits) == (
        f"{zipped}: entry {big!r} is {sizes[big]} bytes, more than the limit of {sizes[big] - 1}",
    )
    total = sum(sizes.values())
    limits = ZipLimits(max_entries=1, max_entry_bytes=10**9, max_total_bytes=total - 1)
    assert errors_of(zipped, limits=limits) == (
        f"{zipped}: {len(sizes)} entries, more than the limit of 1",
        f"{zipped}: {total} bytes uncompressed, more than the limit of {total - 1}",
    )


def test_not_a_bundle(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello")
    assert errors_of(junk) == (f"{junk}: expected a bundle folder or a .zip of one",)


# --- the published schema -----------------------------------------------------------------


def test_schema_is_generated_strict_and_deterministic() -> None:
    schema = card_json_schema()
    assert json.dumps(schema, sort_keys=True) == json.dumps(card_json_schema(), sort_keys=True)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["certificate", "customer", "card", "phase1", "grade_cap", "runs"]
    run = schema["$defs"]["Run"]
    assert run["additionalProperties"] is False
    assert run["properties"]["resolution"]["pattern"] == "^([1-9][0-9]{1,5})x([1-9][0-9]{1,5})$"
    assert run["properties"]["upscaler"]["enum"] == ["none", "DLSS", "FSR", "XeSS"]


def test_zip_with_a_duplicate_entry_is_refused(tmp_path: Path) -> None:
    zipped = zip_folder(good_bundle(tmp_path / "b"), tmp_path / "b.zip")
    with zipfile.ZipFile(zipped, "a") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("my-card/card.yaml", "customer: evil\n")
    assert errors_of(zipped) == (f"{zipped}: entry 'my-card/card.yaml' appears twice",)


@pytest.mark.parametrize(("value", "shown"), [(1700000000, "'1700000000'"),
                                              ("29/11/2026", "'29/11/2026'")])
def test_issue_date_must_be_a_date(tmp_path: Path, value: object, shown: str) -> None:
    good_bundle(tmp_path)
    data = card([run_entry(capture="captures/run0.csv")])
    data["certificate"]["issued"] = value
    write_card(tmp_path, data)
    (error,) = errors_of(tmp_path)
    assert error == f"card.yaml: certificate.issued: expected a date YYYY-MM-DD, got {shown}"
