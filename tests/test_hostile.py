"""Regression tests for issue 14: one per class of hostile or unlucky input that once ended in a
traceback, a hang, an outside read, a rule satisfied by nothing or a stale file. Each asserts the
one line a user now gets (docs/limits.md lists them all)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import card, run_cli, run_entry, simple_bundle, write_card

from certgen.captures.detect import read_capture, read_capture_file
from certgen.errors import BundleErrors, CaptureFormatError, CertgenError, CompareError, OutputError
from certgen.inputs.bundle import load_bundle, parse_card, read_card
from certgen.writer import (
    LOCK_NAME,
    PREVIOUS_NAME,
    STAGING_NAME,
    TEMP_PREFIX,
    Writer,
    read_manifest,
    verify_manifest,
)

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "examples" / "gold-rx7800xt"
SERIES = ROOT / "examples" / "compare" / "series"

SAMPLE_LAB = Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"
"""The examples' sample laboratory: builds that are not drafts need an issuer."""


def _card_text(**changes: Any) -> bytes:
    data = card([run_entry(not_run="the game crashed at start")])
    for path, value in changes.items():
        target = data
        parts = path.split("__")
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()


def _refusal(data: bytes) -> str:
    with pytest.raises(BundleErrors) as info:
        parse_card(data)
    return str(info.value)


# --- outside reads -------------------------------------------------------------------------------


def test_a_card_yaml_symlinked_out_of_the_bundle_is_refused_unread(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("customer: the secret\n")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    os.symlink(secret, bundle / "card.yaml")
    for load in (load_bundle, read_card):
        with pytest.raises(BundleErrors) as info:
            load(bundle)
        assert str(info.value) == "card.yaml: resolves outside the bundle (a symlink out)"


def _series(tmp_path: Path, first: str) -> Path:
    folder = tmp_path / "series"
    (folder / "runs").mkdir(parents=True)
    lines = ["series: 1", "pairs:"]
    for i in range(6):
        before = first if i == 0 else f"runs/{i}-a.csv"
        lines.append(f"  - {{before: '{before}', after: runs/{i}-b.csv}}")
    (folder / "series.yaml").write_text("\n".join(lines) + "\n")
    return folder / "series.yaml"


@pytest.mark.parametrize(("path", "message"), [
    ("/etc/passwd", "expected a relative path inside the series file's folder"),
    ("../../../../etc/passwd", "expected a path inside the series file's folder without '..'"),
    ("runs/link.csv", "resolves outside the series file's folder (a symlink out?)"),
])
def test_series_paths_are_confined_to_the_series_folder(
    tmp_path: Path, path: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    series = _series(tmp_path, path)
    (tmp_path / "outside.csv").write_text("MsBetweenPresents\nTOP-SECRET-LINE\n")
    os.symlink(tmp_path / "outside.csv", series.parent / "runs" / "link.csv")
    code, out, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o")],
                             capsys)
    assert code == 1
    assert err == f"certgen: {series}: pairs[0].before: {message}\n"
    assert "TOP-SECRET" not in out + err


def test_stray_links_and_special_files_in_a_bundle_are_never_opened(
    tmp_path: Path, alarm: None
) -> None:
    """Only what card.yaml names is read: a FIFO, a loop and a link out beside it cost nothing
    (the build's cache key and its scheduling cost read nothing else either)."""
    from certgen.builders.batch import bundle_cost

    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    os.mkfifo(bundle / "stray.fifo")
    os.symlink(bundle / "loop", bundle / "loop")
    os.symlink("/", bundle / "root-link")
    loaded = load_bundle(bundle)
    assert [f.name for f in loaded.files] == ["captures/run0.csv"]
    assert bundle_cost(bundle) > 0


# --- rules satisfied by nothing, and text limits ------------------------------------------------


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("0__soft_limit__justification", " ",
     "expected a text with visible characters (whitespace, control and zero-width characters "
     "do not count), got ' '"),
    ("0__soft_limit__vrm_reexamination", "\u200b",
     "expected a text with visible characters (whitespace, control and zero-width characters "
     "do not count), got '\\u200b'"),
    ("0__soft_limit__justification", "<script>alert(1)</script>",
     "expected a justification with visible text once sanitised (it would print as nothing), "
     "got '<script>alert(1)</script>'"),
])
def test_a_soft_limit_is_not_satisfied_by_invisible_text(field: str, value: str, expected: str
                                                         ) -> None:
    run = run_entry(capture="captures/run0.csv",
                    soft_limit={"justification": "VRM checked.", "vrm_reexamination": "pass"})
    run["soft_limit"][field.rsplit("__", 1)[1]] = value
    data = yaml.safe_dump(card([run]), sort_keys=False, allow_unicode=True).encode()
    assert _refusal(data) == f"card.yaml: runs[0].soft_limit.{field.rsplit('__', 1)[1]}: {expected}"


def test_bidi_controls_are_refused_in_names() -> None:
    assert _refusal(_card_text(customer="EVIL\u202egnp.exe")) == (
        "card.yaml: customer: bidirectional control U+202E is not allowed (it reorders the "
        "text), got 'EVIL\\u202egnp.exe'")


def test_control_characters_are_refused_in_names() -> None:
    assert _refusal(_card_text(card__serial="EX\x1b[31m")) == (
        "card.yaml: card.serial: control character U+001B is not allowed, got 'EX\\x1b[31m'")


def test_length_limits_refuse_never_clip() -> None:
    message = _refusal(_card_text(customer="x" * 201))
    assert message == "card.yaml: customer: expected at most 200 characters, got 201"
    run = run_entry(capture="captures/run0.csv",
                    soft_limit={"justification": "[" * 20_000, "vrm_reexamination": "pass"})
    data = yaml.safe_dump(card([run]), sort_keys=False).encode()
    assert "runs[0].soft_limit.justification: expected at most 5000 characters, got 20000" in (
        _refusal(data))


def test_a_huge_card_yaml_is_refused_before_parsing() -> None:
    with pytest.raises(BundleErrors) as info:
        parse_card(b"customer: " + b"x" * (2 << 20))
    assert str(info.value) == "card.yaml: 2097162 bytes, more than the limit of 1048576"


def test_sanitising_the_longest_justification_takes_well_under_a_second() -> None:
    from certgen.support.markup import sanitise_markdown

    for text in ("[" * 5000, "<a " * 1666, "[a](" * 1250, "![" * 2500):
        start = time.perf_counter()
        sanitise_markdown(text)
        assert time.perf_counter() - start < 2.0, text[:8]


def test_sanitising_keeps_links_and_shows_brackets_as_text() -> None:
    from certgen.support.markup import sanitise_markdown

    assert sanitise_markdown("See [log](https://x.org/a), [1] and a < b `x<y`") == (
        '<p>See <a href="https://x.org/a" rel="noopener noreferrer nofollow">log</a>, [1] and '
        "a &lt; b <code>x&lt;y</code></p>")


def test_a_certificate_id_ending_in_a_newline_is_refused() -> None:
    assert _refusal(_card_text(certificate__id="ID-1\n")) == (
        "card.yaml: certificate.id: expected letters, digits, '.', '_' or '-' (it names the "
        "output folder), got 'ID-1\\n'")


def test_verify_base_must_be_an_http_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    code, _out, err = run_cli(["build", str(GOLD), "--out", str(tmp_path),
                               "--verify-base", "javascript:alert(1)"], capsys)
    assert (code, err) == (1, "certgen: --verify-base: expected an http:// or https:// URL, got "
                              "'javascript:alert(1)'\n")
    assert list(tmp_path.iterdir()) == []


def test_process_names_from_captures_are_shown_escaped() -> None:
    text = ("Application,ProcessID,SwapChainAddress,MsBetweenPresents\n"
            "EVIL\u202egnp.exe,1,0x1,16.6\nEVIL\u202egnp.exe,1,0x1,16.7\nother.exe,2,0x2,10\n")
    [capture] = read_capture(text.encode(), name="run.csv")
    assert capture.group is not None
    assert capture.group.label() == "EVIL\\u202egnp.exe (pid 1, swap chain 0x1)"


# --- tracebacks on plausible input --------------------------------------------------------------


def test_an_impossible_date_is_one_line_naming_its_field() -> None:
    """Issue 27: the field is named, as every other card.yaml error names it."""
    assert _refusal(_card_text(certificate__issued="2026-02-30").replace(b"'", b"")) == (
        "card.yaml:3: certificate.issued: not a calendar date: '2026-02-30' (day is out of "
        "range for month)")


@pytest.mark.parametrize(("value", "shown"), [
    ("1e308", "1e+308"), ("-1e308", "-1e+308"), ("1e-308", "1e-308"), ("5e-324", "5e-324"),
])
def test_extreme_frame_times_are_refused(value: str, shown: str) -> None:
    data = f"MsBetweenPresents\n16.6\n{value}\n".encode()
    with pytest.raises(CaptureFormatError) as info:
        read_capture(data, name="run.csv")
    assert str(info.value) == (
        f"run.csv: MsBetweenPresents: frame 2: frame time {shown} ms is outside the range "
        "certgen accepts (1e-06 to 1e+07 ms)")


def test_a_capture_over_the_frame_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """MAX_CAPTURE_FRAMES (20 million) lowered to 3: the limit, not the byte size, refuses."""
    import certgen.captures.detect as detect
    from certgen.captures.common import MAX_CAPTURE_BYTES, MAX_CAPTURE_FRAMES

    assert (MAX_CAPTURE_FRAMES, MAX_CAPTURE_BYTES) == (20_000_000, 1 << 30)  # docs/limits.md
    monkeypatch.setattr(detect, "MAX_CAPTURE_FRAMES", 3)
    assert read_capture(b"MsBetweenPresents\n16.6\n16.7\n16.8\n", name="run.csv")
    with pytest.raises(CaptureFormatError) as info:
        read_capture(b"MsBetweenPresents\n16.6\n16.7\n16.8\n16.9\n", name="run.csv")
    assert str(info.value) == "run.csv: 4 frames, more than the limit of 3 for a capture"


def test_a_csv_field_over_the_csv_limit_is_one_line() -> None:
    data = ("Application,ProcessID,SwapChainAddress,MsBetweenPresents\n"
            f"a,1,0x1,{'x' * 140_000}\n").encode()
    with pytest.raises(CaptureFormatError) as info:
        read_capture(data, name="wide.csv")
    assert str(info.value) == (
        "wide.csv: not a readable CSV file (field larger than field limit (131072))")


def test_a_path_too_long_is_one_shortened_line(tmp_path: Path) -> None:
    path = tmp_path / ("a" * 300 + ".csv")
    with pytest.raises(CaptureFormatError) as info:
        read_capture_file(path)
    message = str(info.value)
    assert message.endswith("aaaa.csv: cannot read the file (File name too long)")
    assert len(message) < 250 and "…" in message


def test_fifos_and_devices_are_refused_before_reading(tmp_path: Path, alarm: None) -> None:
    fifo = tmp_path / "run.csv"
    os.mkfifo(fifo)
    with pytest.raises(CaptureFormatError) as info:
        read_capture_file(fifo, name="run.csv")
    assert str(info.value) == "run.csv: is a FIFO (named pipe), expected a capture file"
    with pytest.raises(BundleErrors) as bundle_info:
        load_bundle(fifo)
    assert str(bundle_info.value) == (
        f"{fifo}: is a FIFO (named pipe), expected a bundle folder or a .zip")
    with pytest.raises(BundleErrors) as zero_info:
        load_bundle("/dev/zero")
    assert str(zero_info.value) == "/dev/zero: is a device, expected a bundle folder or a .zip"


def test_a_fifo_named_by_card_yaml_is_refused(tmp_path: Path, alarm: None) -> None:
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    (bundle / "captures" / "run0.csv").unlink()
    os.mkfifo(bundle / "captures" / "run0.csv")
    with pytest.raises(BundleErrors) as info:
        load_bundle(bundle)
    assert str(info.value) == ("card.yaml: runs[0].capture: 'captures/run0.csv': expected a "
                               "file, got a FIFO, device or socket")


def test_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    with pytest.raises(CaptureFormatError) as info:
        read_capture_file(tmp_path / "loop", name="loop")
    assert str(info.value) == "loop: cannot read the file (Too many levels of symbolic links)"


def test_a_raw_nul_in_card_yaml_is_one_line() -> None:
    assert _refusal(b"customer: a\x00b\n") == (
        "card.yaml:1: invalid YAML: unacceptable character #x0000: special characters are not "
        "allowed")


def test_deep_nesting_and_huge_integers_in_yaml_are_one_line() -> None:
    assert _refusal(b"customer: " + b"[" * 5000 + b"]" * 5000) == (
        "card.yaml:1: invalid YAML: nested deeper than 64 levels")
    assert _refusal(b"customer: " + b"9" * 5000) == (
        "card.yaml:1: customer: an integer of more than 100 digits")


@pytest.mark.parametrize("payload", ["[" * 5000 + "]" * 5000, "9" * 5000])
def test_deep_nesting_and_huge_integers_in_json_are_one_line(payload: str) -> None:
    from certgen.record import load_record

    capframex = f'{{"Runs": {payload}}}'.encode()
    with pytest.raises(CaptureFormatError) as info:
        read_capture(capframex, name="s.json")
    assert str(info.value).startswith("s.json:1: not valid JSON: ")
    frame_stats = f'{{"schema_version": 1, "x": {payload}}}\n'.encode()
    with pytest.raises(CaptureFormatError) as stats_info:
        read_capture(frame_stats, name="f.jsonl")
    assert str(stats_info.value).startswith("f.jsonl:1: expected one JSON object per line")
    with pytest.raises(CertgenError) as record_info:
        load_record(f'{{"schema_version": {payload}}}'.encode())
    assert str(record_info.value).startswith("record.json: not a JSON record: ")


def test_deep_nesting_in_a_series_file_is_one_line(tmp_path: Path) -> None:
    from certgen.builders.report import read_series_file

    path = tmp_path / "series.yaml"
    path.write_text("series: 1\npairs: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(CompareError) as info:
        read_series_file(path)
    assert str(info.value) == f"{path}:2: not valid YAML: nested deeper than 64 levels"


def _zip(entries: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, blob in entries:
            archive.writestr(name, blob)
    return buffer.getvalue()


def _gold_entries() -> list[tuple[str, bytes]]:
    return [(p.relative_to(GOLD).as_posix(), p.read_bytes())
            for p in sorted(GOLD.rglob("*")) if p.is_file()]


def test_malformed_zips_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    blob = bytearray(_zip(_gold_entries()))
    # Every local header and central directory entry says "encrypted" (flag bit 0).
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = blob.find(signature)
        while at >= 0:
            blob[at + offset] |= 1
            at = blob.find(signature, at + 4)
    path.write_bytes(bytes(blob))
    with pytest.raises(BundleErrors) as info:
        load_bundle(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(f"{path}: card.yaml: ")

    blob = bytearray(_zip(_gold_entries()))
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = blob.find(signature)
        while at >= 0:
            blob[at + offset] = 99  # compression method 99 (AES): unsupported
            at = blob.find(signature, at + 4)
    path.write_bytes(bytes(blob))
    with pytest.raises(BundleErrors) as method_info:
        load_bundle(path)
    assert str(method_info.value).startswith(f"{path}: card.yaml: cannot read the zip entry")

    path.write_bytes(_zip([*_gold_entries(), ("captures", b"x")]))
    with pytest.raises(BundleErrors) as twice:
        load_bundle(path)
    assert str(twice.value) == f"{path}: entry 'captures' is both a file and a folder"

    path.write_bytes(_zip([*_gold_entries(), ("a" * 300, b"x")]))
    assert load_bundle(path).card.certificate.id  # a long stray name is harmless


def test_disk_full_is_an_output_error_with_its_cause(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    writer = Writer(tmp_path)
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError) as info:
        writer.write("a.pdf", b"x")
    assert str(info.value) == "a.pdf: cannot write: No space left on device (the disk is full)"
    assert isinstance(info.value.__cause__, OSError)
    assert list(tmp_path.iterdir()) == []  # nothing staged is left, the lock is released


def test_a_read_only_output_folder_is_an_output_error(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import certgen.writer as module

    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    writer = Writer(tmp_path)
    monkeypatch.setattr(module, "_write_new", read_only)
    with pytest.raises(OutputError) as info:
        writer.write("a.pdf", b"x")
    assert str(info.value) == "a.pdf: cannot write: Read-only file system (a read-only file system)"


# --- one bad bundle in a batch --------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_batch_attempts_and_reports_every_bundle(tmp_path: Path, jobs: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    ok1 = simple_bundle(tmp_path / "ok1", [(120.0, 90.0, 80.0)])
    ok2 = simple_bundle(tmp_path / "ok2", [(120.0, 90.0, 80.0)],
                        certificate={**card([])["certificate"], "id": "TEST-0002"})
    bad = tmp_path / "bad"
    write_card(bad, "certificate: {issued: 2026-02-30}\n")
    out = tmp_path / "out"
    code, stdout, err = run_cli(["build", str(ok1), str(bad), str(ok2), "--out", str(out),
                                 "--jobs", jobs, "--lab", str(SAMPLE_LAB)], capsys)
    assert code == 1
    assert sorted(p.name for p in out.iterdir()) == ["TEST-0001", "TEST-0002"]
    assert "built TEST-0001" in stdout and "built TEST-0002" in stdout
    assert err == (f"certgen: {bad}: card.yaml:1: certificate.issued: not a calendar date: "
                   "'2026-02-30' (day is out of range for month)\n"
                   "certgen: 1 of 3 bundles were not built\n")


def test_a_bug_in_one_bundle_still_builds_and_reports_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import certgen.builders.batch as module  # build_many calls build_bundle from here

    ok1 = simple_bundle(tmp_path / "ok1", [(120.0, 90.0, 80.0)])
    ok2 = simple_bundle(tmp_path / "ok2", [(120.0, 90.0, 80.0)],
                        certificate={**card([])["certificate"], "id": "TEST-0002"})
    bad = simple_bundle(tmp_path / "bad", [(120.0, 90.0, 80.0)],
                        certificate={**card([])["certificate"], "id": "TEST-0003"})
    real = module.build_bundle

    def buggy(bundle: str, *args: Any, **kwargs: Any) -> Any:
        if str(bundle) == str(bad):
            raise ZeroDivisionError("a bug")
        return real(bundle, *args, **kwargs)

    monkeypatch.setattr(module, "build_bundle", buggy)
    code, _out, err = run_cli(["build", str(ok1), str(bad), str(ok2), "--out",
                               str(tmp_path / "out"), "--jobs", "1", "--lab", str(SAMPLE_LAB)],
                              capsys)
    assert code == 70  # a bug: its traceback follows, after every bundle was reported
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["TEST-0001", "TEST-0002"]
    assert f"certgen: {bad}: not built (an internal error, below)" in err
    assert "ZeroDivisionError: a bug" in err


def test_pool_workers_ask_to_end_with_their_parent() -> None:
    """PR_SET_PDEATHSIG is set by the pool's initializer (read back with PR_GET_PDEATHSIG)."""
    code = ("import ctypes; from certgen.builders.batch import end_with_parent; "
            "end_with_parent(); libc = ctypes.CDLL(None); v = ctypes.c_int(); "
            "libc.prctl(2, ctypes.byref(v), 0, 0, 0); print(v.value)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == str(int(signal.SIGKILL))


_POOL_SCRIPT = """
import multiprocessing, os, signal, sys, time
from concurrent.futures import ProcessPoolExecutor
from certgen.builders.batch import end_with_parent

if __name__ == "__main__":
    context = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(max_workers=2, mp_context=context, initializer=end_with_parent)
    pids = {pool.submit(os.getpid).result() for _ in range(8)}
    for _ in range(2):
        pool.submit(time.sleep, 60)
    print(" ".join(map(str, sorted(pids))), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # the build process dies; its workers must follow
"""


def test_killing_the_build_process_ends_its_pool_workers(tmp_path: Path) -> None:
    script = tmp_path / "pool.py"
    script.write_text(_POOL_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    pids = [int(p) for p in done.stdout.split()]
    assert pids
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.1)
    assert not [p for p in pids if Path(f"/proc/{p}").exists()]


# --- stale files and concurrent builds ----------------------------------------------------------


def test_an_interrupted_rebuild_does_not_forget_what_the_first_build_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Writer(tmp_path)
    for name in ("record.json", "certificate.ru.pdf", "certificate.en.pdf", "charts/a.svg"):
        first.write(name, b"1")
    first.finish()
    killed = Writer(tmp_path)  # a rebuild killed during its commit, after one file moved in
    killed.write("record.json", b"2")
    killed.write("certificate.en.pdf", b"2")
    moved: list[str] = []
    real = Writer._move_in

    def dies(self: Writer, relpath: str) -> None:
        if moved:
            raise KeyboardInterrupt  # stands for kill -9: nothing after this point runs
        moved.append(relpath)
        real(self, relpath)

    monkeypatch.setattr(Writer, "_move_in", dies)
    with pytest.raises(KeyboardInterrupt):
        killed.finish()
    monkeypatch.undo()
    killed.close()  # past the commit point: what is staged is kept for the next writer
    assert not (tmp_path / "manifest.json").exists() and (tmp_path / PREVIOUS_NAME).exists()
    (tmp_path / f"{TEMP_PREFIX}record.json.abc.tmp").write_bytes(b"half")  # an old kill -9
    (tmp_path / "charts" / f"{TEMP_PREFIX}a.svg.abc.tmp").write_bytes(b"half")
    assert moved == ["certificate.en.pdf"] and (tmp_path / "certificate.en.pdf").read_bytes() == b"2"
    staged = (tmp_path / STAGING_NAME / "record.json").stat().st_ino
    nxt = Writer(tmp_path)  # the next writer removes the staging folder, moving nothing out
    nxt.close()
    assert nxt.interrupted and not (tmp_path / STAGING_NAME).exists()
    assert (tmp_path / "record.json").read_bytes() == b"1"  # never the staged b"2"
    assert (tmp_path / "record.json").stat().st_ino != staged
    assert read_manifest(tmp_path) is None  # still reads as interrupted: no manifest
    again = Writer(tmp_path)
    again.write("record.json", b"3")
    again.finish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "record.json"]
    assert again.removed() == ["certificate.en.pdf", "certificate.ru.pdf", "charts/a.svg"]
    manifest = read_manifest(tmp_path)
    assert manifest is not None and verify_manifest(tmp_path, manifest)


def test_a_second_build_into_one_folder_waits_then_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = Writer(tmp_path, "ASD-1")
    with pytest.raises(OutputError) as info:
        Writer(tmp_path, "ASD-1", lock_timeout=0.3)
    assert str(info.value) == (
        f"{tmp_path / 'ASD-1'}: another process is writing to this folder; gave up after "
        f"0.3 s (lock file {LOCK_NAME})")
    assert "another process is writing here; waiting up to 0.3 s" in capsys.readouterr().err
    first.write("a.txt", b"1")
    first.finish()
    second = Writer(tmp_path, "ASD-1", lock_timeout=0.3)  # free again
    second.write("a.txt", b"2")
    second.finish()
    assert sorted(p.name for p in (tmp_path / "ASD-1").iterdir()) == ["a.txt", "manifest.json"]


def test_an_output_folder_locked_by_any_process_is_named_as_another_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27: flock(1), a backup tool or sqlite3 can hold the lock as well as a build: the
    message must not say "certgen"."""
    folder = tmp_path / "ASD-1"
    folder.mkdir()
    holder = subprocess.Popen(["flock", str(folder / LOCK_NAME), "-c", "echo held; sleep 30"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(OutputError) as info:
            Writer(tmp_path, "ASD-1", lock_timeout=0.3)
    finally:
        holder.kill()
        holder.wait()
    text = str(info.value)
    assert "another process is writing to this folder" in text and "certgen" not in text.replace(
        LOCK_NAME, "")
    assert "certgen" not in capsys.readouterr().err.removeprefix("certgen: ").replace(
        LOCK_NAME, "")


def test_the_lock_is_per_folder_and_released_by_a_dead_process(tmp_path: Path) -> None:
    code = ("import sys, os; from certgen.writer import Writer; w = Writer(sys.argv[1], 'X'); "
            "print('locked', flush=True); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
    writer = Writer(tmp_path, "X", lock_timeout=1)  # the kernel released the dead one's lock
    writer.finish()
    Writer(tmp_path, "Y", lock_timeout=1).finish()


@pytest.mark.parametrize(("value", "message"), [
    ("99999999999999999999999", "expected at most 253402300799 (9999-12-31), got "
                                "'99999999999999999999999'"),
    ("9" * 5000, "expected at most 253402300799 (9999-12-31), got '" + "9" * 40 + "'"),
    ("\u00b2", "expected whole seconds since 1970-01-01, got '\u00b2'"),
])
def test_source_date_epoch_out_of_range_is_one_line(value: str, message: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from certgen.errors import BuildDateError
    from certgen.support.builddate import source_date_epoch

    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    with pytest.raises(BuildDateError) as info:
        source_date_epoch()
    assert str(info.value) == f"SOURCE_DATE_EPOCH: {message}"


def test_long_values_in_a_benchmark_csv_are_shortened_or_refused() -> None:
    """Found by the fuzz suite: a 5000-character cell was printed whole in the refusal."""
    long_kind = b"side,kind,name,value\nbefore," + b"9" * 5000 + b",,16.6\n"
    with pytest.raises(CaptureFormatError) as info:
        read_capture(long_kind, name="b.csv")
    assert str(info.value) == f"b.csv:2: kind: expected frame or metric, got '{'9' * 59}…'"
    long_side = b"side,kind,name,value\n" + b"s" * 101 + b",frame,,16.6\n"
    with pytest.raises(CaptureFormatError) as side_info:
        read_capture(long_side, name="b.csv")
    assert str(side_info.value) == "b.csv:2: side: expected at most 100 characters, got 101"


def test_long_keys_and_values_in_yaml_inputs_are_shortened(tmp_path: Path) -> None:
    """Found by the fuzz suite: a 6000-character series version was printed whole."""
    from certgen.builders.report import read_series_file

    path = tmp_path / "series.yaml"
    path.write_text("series: " + "x" * 6000 + "\n")
    with pytest.raises(CompareError) as info:
        read_series_file(path)
    assert str(info.value) == (
        f"{path}: series: expected 1 (the format version), got '{'x' * 58}…")
    message = _refusal(("? " + "k" * 6000 + "\n: 1\n").encode() + _card_text())
    assert f"card.yaml: {'k' * 59}…: unknown key" in message
