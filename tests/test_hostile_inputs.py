"""Regression tests for issue 27 (inputs): the input surfaces added after issue 14 — lab.yaml,
the signing inputs, --scheduler, a PostgreSQL fleet URL, rules files on CERTGEN_RULES_PATH,
revocations.yaml and big documents — each refused in one line naming the file, line or field
(docs/limits.md), never a traceback or a hang."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import card, run_cli, run_entry, simple_bundle

from certgen.errors import BundleErrors, CertgenError, LabError, RevocationsError
from certgen.inputs.bundle import MAX_RUNS, parse_card
from certgen.inputs.lab import MAX_LAB_BYTES, parse_lab
from certgen.registry import load_revocations, parse_revocations
from certgen.sop import RULES_PATH_ENV, available_sops

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LAB = ROOT / "examples" / "lab.yaml"
V11_RULES = ROOT / "certgen" / "sop" / "sop-gpu-001-v1.1.yaml"


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


# --- lab.yaml ------------------------------------------------------------------------------------


def _lab(**changes: Any) -> bytes:
    data = yaml.safe_load(SAMPLE_LAB.read_text("utf-8"))
    for key, value in changes.items():
        if key.startswith("signatory_"):
            data["signatory"][key.removeprefix("signatory_")] = value
        else:
            data[key] = value
    return yaml.safe_dump(data, allow_unicode=True).encode()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("name", "  ", "name: expected a text with visible characters (whitespace, control and "
                   "zero-width characters do not count), got '  '"),
    ("name", "\u200b\u200b", "name: expected a text with visible characters (whitespace, "
                             "control and zero-width characters do not count), got '\\u200b\\u200b'"),
    ("name", "EVIL\u202egnp", "name: bidirectional control U+202E is not allowed (it reorders "
                              "the text), got 'EVIL\\u202egnp'"),
    ("name", "EX\x1b[31m", "name: control character U+001B is not allowed, got 'EX\\x1b[31m'"),
    ("signatory_name", "A.\nSample",
     "signatory.name: control character U+000A is not allowed, got 'A.\\nSample'"),
    ("name", "x" * 5000, "name: expected at most 200 characters, got 5000"),
    ("signatory_name", "<b>A. Sample</b>", "signatory.name: markup is not allowed (the text is "
                                           "printed as written), got '<b>A. Sample</b>'"),
    ("verification_base", "https://lab.org/" + "x" * 5000,
     "verification_base: expected at most 200 characters, got 5016"),
])
def test_lab_texts_follow_card_yaml_text_rules(field: str, value: str, message: str) -> None:
    with pytest.raises(LabError) as info:
        parse_lab(_lab(**{field: value}))
    assert str(info.value) == f"lab.yaml: {message}"


def test_a_lab_profile_over_the_size_limit_is_refused_before_parsing() -> None:
    data = _lab(contact="y" * MAX_LAB_BYTES)
    with pytest.raises(LabError) as info:
        parse_lab(data)
    assert str(info.value) == (f"lab.yaml: {len(data)} bytes, more than the limit of "
                               f"{MAX_LAB_BYTES} for a laboratory profile")


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_lab_as_a_fifo_device_or_folder_is_one_line(
        tmp_path: Path, kind: str, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    lab = {"fifo": tmp_path / "lab.yaml", "device": Path("/dev/zero"),
           "folder": tmp_path / "labdir"}[kind]
    if kind == "fifo":
        os.mkfifo(lab)
    elif kind == "folder":
        lab.mkdir()
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"),
                            "--lab", str(lab)], capsys)
    what = {"fifo": "is a FIFO (named pipe)", "device": "is a device",
            "folder": "is a directory"}[kind]
    assert (code, _one_line(err)) == (
        1, f"certgen: {lab}: {what}, expected a laboratory profile")


# --- signing inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize(("option", "source", "what"), [
    ("--sign", "fifo", "is a FIFO (named pipe), expected a PKCS#12 key file"),
    ("--sign", "/dev/zero", "is a device, expected a PKCS#12 key file"),
    ("--sign", "/dev/urandom", "is a device, expected a PKCS#12 key file"),
    ("--sign-passphrase-file", "fifo", "is a FIFO (named pipe), expected a passphrase file"),
    ("--sign-passphrase-file", "/dev/zero", "is a device, expected a passphrase file"),
])
def test_signing_inputs_as_fifos_or_devices_are_one_line(
        tmp_path: Path, option: str, source: str, what: str, alarm: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyhanko")
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    path = source
    if source == "fifo":
        path = str(tmp_path / "input")
        os.mkfifo(path)
    key = tmp_path / "key.p12"
    key.write_bytes(b"not a key")
    args = ["--sign", path] if option == "--sign" else [
        "--sign", str(key), "--sign-passphrase-file", path]
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"),
                            "--lab", str(SAMPLE_LAB), *args], capsys)
    assert (code, _one_line(err)) == (1, f"certgen: {path}: {what}")


@pytest.mark.parametrize(("url", "message"), [
    ("javascript:alert(1)", "expected an http:// or https:// URL, got 'javascript:alert(1)'"),
    ("http://", "expected an http:// or https:// URL, got 'http://'"),
    ("http://[::1/tsa", "expected an http:// or https:// URL, got 'http://[::1/tsa'"),
    ("http://tsa.example\n/x", "expected an http:// or https:// URL, got 'http://tsa.example\\n/x'"),
    ("https://tsa.example/" + "a" * 600, "expected at most 500 characters, got 620"),
])
def test_a_bad_tsa_url_is_one_line_not_a_usage_error(
        tmp_path: Path, url: str, message: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27 (the must-show re-run): `--tsa javascript:…` was a click usage error, three
    lines and exit 2, where --verify-base gives one line."""
    pytest.importorskip("pyhanko")
    from pkikit import PASSPHRASE, make_pki

    key = tmp_path / "key.p12"
    key.write_bytes(make_pki().lab_p12)
    monkeypatch.setenv("CERTGEN_SIGN_PASSPHRASE", PASSPHRASE.decode())
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--lab",
                            str(SAMPLE_LAB), "--sign", str(key), "--tsa", url], capsys)
    assert (code, _one_line(err)) == (1, f"certgen: --tsa: {message}")
    assert not (tmp_path / "out").exists()


# --- --scheduler ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "message"), [
    ("not an address", "expected a Dask scheduler address tcp://HOST:PORT, got 'not an address'"),
    ("tcp://:8786", "expected a Dask scheduler address tcp://HOST:PORT, got 'tcp://:8786'"),
    ("inproc://", "expected a Dask scheduler address tcp://HOST:PORT, got 'inproc://'"),
    ("tls://127.0.0.1:8786", "expected a Dask scheduler address tcp://HOST:PORT, got "
                             "'tls://127.0.0.1:8786': a TLS scheduler needs a security "
                             "configuration certgen does not take"),
])
def test_a_scheduler_address_certgen_cannot_use_is_one_line(
        tmp_path: Path, address: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--draft",
                            "--scheduler", address], capsys)
    assert (code, _one_line(err)) == (1, f"certgen: --scheduler: {message}")


def test_a_scheduler_that_never_answers_times_out_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alarm: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A listener that accepts and stays silent hung distributed's Client for ever."""
    pytest.importorskip("distributed")
    from certgen.builders import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"),
                                "--draft", "--scheduler", address], capsys)
    # No timing here (a loaded machine): the alarm fails a hang, the message names the timeout.
    assert (code, _one_line(err)) == (
        1, f"certgen: cannot reach the Dask scheduler at {address}: no answer within 1 s "
           "(the connect timeout)")


# --- PostgreSQL fleet URL ------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "shown", "why"), [
    ("postgresql://u:secret@[::1/db", "postgresql://u:***@[::1/db", "Invalid IPv6 URL"),
    ("postgresql://u:secret@host:port/db", "postgresql://u:***@host:port/db",
     "Port could not be cast to integer value as 'port'"),
])
def test_a_malformed_postgresql_url_is_one_line_without_its_password(
        url: str, shown: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("psycopg")
    code, _, err = run_cli(["fleet", "cohorts", "--fleet", url], capsys)
    assert (code, _one_line(err)) == (
        1, f"certgen: {shown}: not a valid PostgreSQL URL ({why}); expected "
           "postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE")
    assert "secret" not in err


# --- rules files on CERTGEN_RULES_PATH -----------------------------------------------------------

RULES_NAME = "sop-x-v1.yaml"
RULES_SOP = "SOP-X v1"


def _rules_text(edit: tuple[str, str] | None = None) -> str:
    text = V11_RULES.read_text("utf-8").replace("sop: SOP-GPU-001 v1.1", f"sop: {RULES_SOP}")
    assert RULES_SOP in text
    return text if edit is None else text.replace(*edit)


BROKEN_RULES: list[tuple[str, str | None, str]] = [
    ("syntax", "sop: [unclosed\n", ":2: invalid YAML: expected ',' or ']', but got "
                                   "'<stream end>'"),
    ("nan", _rules_text(("consistency_gap: 0.7", "consistency_gap: .nan")),
     ":8: fluidity_weights.consistency_gap: expected a finite number, got 'nan'"),
    ("no grades", _rules_text(("grades: [PLATINUM, GOLD, SILVER]", "grades: []")),
     ":13: grades: expected the grades PLATINUM, GOLD, SILVER, highest first, got a list"),
    ("deep", "sop: " + "[" * 5000, ":1: invalid YAML: nested deeper than 64 levels"),
    ("list", "- a\n- b\n", ": expected a mapping at the top level"),
    ("python tag", "sop: !!python/object:os.system x\n",
     ":1: sop: could not determine a constructor for the tag "
     "'tag:yaml.org,2002:python/object:os.system'"),
    ("no sop", "".join(line for line in _rules_text().splitlines(keepends=True)
                       if not line.startswith("sop:")), ": sop: required key missing"),
    ("folder", None, "is a directory, expected a rules file"),
    ("fifo", None, "is a FIFO (named pipe), expected a rules file"),
]


@pytest.mark.parametrize(("kind", "text", "message"), BROKEN_RULES,
                         ids=[case[0] for case in BROKEN_RULES])
def test_a_broken_rules_file_is_one_line_and_stops_only_its_own_sop(
        tmp_path: Path, kind: str, text: str | None, message: str, alarm: None,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    path = folder / RULES_NAME
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        assert text is not None
        path.write_text(text, encoding="utf-8")
    monkeypatch.setenv(RULES_PATH_ENV, str(folder))
    # A v1.1 bundle is not stopped by a broken file of another SOP on the path.
    v11 = simple_bundle(tmp_path / "v11", [(120.0, 110.0, 100.0)])
    code, out, err = run_cli(["check", str(v11)], capsys)
    assert (code, err) == (0, "") and out
    assert available_sops() == ["SOP-GPU-001 v1.1"]
    # A bundle naming the broken file's SOP is refused in one line naming the file.
    other = simple_bundle(tmp_path / "x", [(120.0, 110.0, 100.0)], certificate={
        "id": "X-1", "issued": "2026-11-29", "sop": RULES_SOP, "languages": ["en"]})
    code, _, err = run_cli(["check", str(other)], capsys)
    shown = f"{path}: {message}" if kind in ("folder", "fifo") else f"{RULES_NAME}{message}"
    assert (code, _one_line(err)) == (1, f"certgen: {shown}")


# --- revocations.yaml ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ("- id: A-1\n  date: 2026-02-30\n  reason: x\n",
     "revocations.yaml:2: [0].date: not a calendar date: '2026-02-30' (day is out of range for "
     "month)"),
    ("- id: A-1\n  date: 2026-01-01\n  reason: " + "[" * 5000 + "\n",
     "revocations.yaml:3: invalid YAML: nested deeper than 64 levels"),
    ("- id: " + "9" * 5000 + "\n  date: 2026-01-01\n  reason: x\n",
     "revocations.yaml:1: [0].id: an integer of more than 100 digits"),
    ("- A-1\n- A-2\n- A-3\n",
     "revocations.yaml:1: expected a list of revocations, each with id, date and reason, got a "
     "list of bare ids (a revocation needs its date and reason)"),
])
def test_hostile_revocation_lists_are_one_line(text: str, message: str) -> None:
    with pytest.raises(RevocationsError) as info:
        parse_revocations(text.encode())
    assert str(info.value) == message


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_revocations_as_a_fifo_device_or_folder_are_one_line(
        tmp_path: Path, kind: str, alarm: None) -> None:
    path = {"fifo": tmp_path / "revocations.yaml", "device": Path("/dev/zero"),
            "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    with pytest.raises(RevocationsError) as info:
        load_revocations(path)
    what = {"fifo": "is a FIFO (named pipe)", "device": "is a device",
            "folder": "is a directory"}[kind]
    assert str(info.value) == f"{path}: {what}, expected a revocations list"


def test_registry_and_verify_hold_one_size_limit_for_revocations_yaml(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: verify took a 64 MiB revocations.yaml, the registry 16 MiB. One limit now,
    16 MiB as docs/limits.md states it; verify's larger limit is for the registry's index.json
    only (JSON, about 1 kB a certificate)."""
    from certgen.verify.revocation import load_revocations as verify_load

    limit = 16 * 1024 * 1024
    entry = b"- id: A-1\n  date: 2026-01-01\n  reason: x\n"
    big = tmp_path / "revocations.yaml"
    big.write_bytes(entry + b"#" * (limit + 1 - len(entry) - 1) + b"\n")
    assert big.stat().st_size == limit + 1
    expected = f"{big}: {limit + 1} bytes, more than the limit of {limit} for a revocations list"
    with pytest.raises(RevocationsError) as info:
        load_revocations(big)
    assert str(info.value) == expected
    with pytest.raises(CertgenError) as refused:
        verify_load(big)
    assert str(refused.value) == expected
    pdf = tmp_path / "c.pdf"
    pdf.write_bytes(b"%PDF-1.7\n")
    code, _, err = run_cli(["verify", "--revocations", str(big), str(pdf)], capsys)
    assert (code, _one_line(err)) == (1, f"certgen: {expected}")
    # An index.json past 16 MiB is still read by verify (a registry of some 20,000 certificates).
    index = tmp_path / "index.json"
    # Entries as the registry writes them (verify reads index.json strictly: an id, the
    # record's SHA-256, a status agreeing with `revoked`).
    rows: list[dict[str, Any]] = [
        {"id": f"C-{i}", "record_sha256": "0" * 64, "status": "valid", "revoked": None,
         "pad": "p" * 900} for i in range(20_000)]
    rows[7]["status"] = "revoked"
    rows[7]["revoked"] = {"date": "2026-01-02", "reason": {"en": "withdrawn"}}
    index.write_text(json.dumps({"format": "certgen-registry/1", "as_of": "2026-12-01",
                                 "certificates": rows}))
    assert index.stat().st_size > limit
    listed = verify_load(index)
    assert [(r.id, r.date) for r in listed] == [("C-7", "2026-01-02")]


# --- big documents -------------------------------------------------------------------------------


def _card_bytes(data: dict[str, Any]) -> bytes:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()


def test_more_runs_than_the_limit_are_refused_before_the_schema(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """600 runs kept a build busy for minutes with nothing said; the limit refuses them before
    any run is validated (no timing here: the schema is simply never reached)."""
    from certgen.inputs import bundle
    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the runs were validated")

    monkeypatch.setattr(bundle.CardFile, "model_validate", never)
    runs = [run_entry(f"Game {i}", not_run="the game crashed at start") for i in range(600)]
    with pytest.raises(BundleErrors) as info:
        parse_card(_card_bytes(card(runs)))
    assert str(info.value) == f"card.yaml: runs: expected at most {MAX_RUNS} runs, got 600"


def test_a_2_mb_customer_name_and_a_200000_entry_customer_list_are_one_line() -> None:
    big = _card_bytes(card([run_entry(not_run="x")], customer="x" * (2 << 20)))
    with pytest.raises(BundleErrors) as info:
        parse_card(big)
    assert str(info.value) == f"card.yaml: {len(big)} bytes, more than the limit of 1048576"
    long = _card_bytes(card([run_entry(not_run="x")], customer="x" * 5000))
    with pytest.raises(BundleErrors) as info:
        parse_card(long)
    assert str(info.value) == "card.yaml: customer: expected at most 200 characters, got 5000"
    many = _card_bytes(card([run_entry(not_run="x")], customer=["a"] * 200_000))
    with pytest.raises(BundleErrors) as info:
        parse_card(many)
    assert str(info.value) == "card.yaml: customer: expected a text, got a list"
