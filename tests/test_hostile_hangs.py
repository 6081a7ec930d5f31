"""Tracebacks and hangs of issue 40 (item 8): each reproduced as it was reported (servers on
loopback, started here) and now one line, exit 1, no traceback, within the `alarm` fixture's
20 s; the bounds are in docs/limits.md."""

from __future__ import annotations

import http.server
import json
import os
import socket
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
from bundlekit import run_cli, simple_bundle
from recordkit import complete_record
from test_captures_frameview import HEADER as FV_HEADER
from test_captures_frameview import frameview_log
from test_fleet_hostile import CP

from certgen.metrics.uncertainty import MAX_BOOTSTRAP_BLOCKS, sustained_stability
from certgen.model.uncertainty import FIGURES
from certgen.record import dump_record

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LAB = ROOT / "examples" / "lab.yaml"


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


def _capture(path: Path, frames: np.ndarray) -> Path:
    path.write_text("MsBetweenPresents\n" + "\n".join(f"{t:.4f}" for t in frames) + "\n")
    return path


# --- JSON nested 2,000 deep --------------------------------------------------------------------


def test_a_2000_deep_index_json_given_to_verify_is_one_line(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "index.json"
    index.write_text('{"format": "certgen-registry/1", "certificates": '
                     + "[" * 2000 + "]" * 2000 + "}")
    pdf = tmp_path / "cert.pdf"
    pdf.write_bytes(b"%PDF-1.7\n%%EOF\n")
    code, _, err = run_cli(["verify", str(pdf), "--revocations", str(index)], capsys)
    assert code == 1
    assert _one_line(err) == (
        f"certgen: {index}: expected the registry's index.json, which is JSON (nested deeper "
        "than 64 levels: line 1 column 113 (char 112))")


def test_a_2000_deep_fleet_import_line_is_one_line(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"certificate_id": ' + "[" * 2000 + "]" * 2000 + "}\n")
    code, _, err = run_cli(["fleet", "import", "--fleet", str(tmp_path / "f.sqlite"),
                            str(lines)], capsys)
    assert code == 1
    assert _one_line(err).endswith(f"{lines}:1: not valid JSON (nested deeper than 64 levels)")


# --- metrics --interval ------------------------------------------------------------------------


def test_a_1e7_ms_spike_in_a_million_frames_leaves_the_stability_not_estimated() -> None:
    """The spike outlasts 166 minutes in which no frame ends (a ZeroDivisionError): those
    minutes have no rate, and the stability says so instead of a ratio."""
    frames = np.full(1_000_000, 16.7)
    frames[500_000] = 1e7
    stability = sustained_stability(frames)
    assert stability.ratio is None and stability.worst_fps is None
    assert stability.not_estimated == (
        "no frame ends in block 141 (the longest frame, 10000000 ms, outlasts a block); a "
        "block's FPS needs frames that end in it")


def test_a_spike_through_metrics_interval_is_an_answer(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    frames = np.full(3_000, 16.7)
    frames[1_500] = 1e7
    path = _capture(tmp_path / "spike.csv", frames)
    code, out, err = run_cli(["metrics", "--json", "--interval", str(path)], capsys)
    assert (code, err) == (0, "")
    [entry] = json.loads(out)
    assert entry["stability"]["not_estimated"].startswith("no frame ends in block 2 ")
    assert set(entry["interval"]["not_estimated"]) == set(FIGURES)  # 3,000 frames: too few


def test_a_power_cell_of_5e_324_w_is_set_aside_and_the_capture_read(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """A denormal power reading made FPS per watt infinite (a pydantic traceback). A diagnostic
    never refuses a capture (issue 39): the power column is set aside, named with its reason,
    and the SOP figures stand."""
    base = frameview_log([("Game.exe", 7, "0x1", [("0", 1.0)] * 4)]).decode()
    lines = base.split("\r\n")
    cells = lines[3].split(",")
    cells[FV_HEADER.index("NV Pwr(W) (API)")] = "5e-324"
    lines[3] = ",".join(cells)
    path = tmp_path / "fv.csv"
    path.write_bytes("\r\n".join(lines).encode())
    clean = tmp_path / "clean.csv"
    clean.write_bytes(base.encode())
    code, out, err = run_cli(["metrics", "--json", str(path)], capsys)
    assert (code, err) == (0, "")
    [entry] = json.loads(out)
    [unusable] = [u for u in entry["unusable_columns"] if u["column"] == "NV Pwr(W) (API)"]
    assert (unusable["reason"], unusable["frames"], unusable["first_frame"]) == (
        "out_of_range", 1, 3)
    code, out_clean, _ = run_cli(["metrics", "--json", str(clean)], capsys)
    assert code == 0
    [reference] = json.loads(out_clean)
    sop = ("frames", "avg_fps", "low_1pct_fps", "low_0_1pct_fps", "consistency_gap", "stutter",
           "fluidity_score")
    assert [entry[k] for k in sop] == [reference[k] for k in sop]
    assert entry["avg_fps"] is not None


def test_interval_on_300k_frames_of_10_s_is_refused_in_one_line(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """Blocks of one frame (a frame a second is the floor): 300,000 blocks per resample, over
    an hour of bootstrap before; refused at once."""
    path = _capture(tmp_path / "slow.csv", np.full(300_000, 10_000.0))
    code, _, err = run_cli(["metrics", "--json", "--interval", str(path)], capsys)
    assert code == 1
    assert _one_line(err) == (
        f"certgen: {path}: --interval: the bootstrap would resample 300,000 blocks of 1 frame(s) "
        f"per resample, more than the limit of {MAX_BOOTSTRAP_BLOCKS:,} (docs/limits.md); the "
        "figures without --interval are not affected")


def test_interval_on_frames_that_tie_is_refused_not_tallied_frame_by_frame(
        tmp_path: Path, alarm: None, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Frames that all tie: resamples are not settled from the band around their k longest,
    and the band widened to the whole capture (10M constant frames: over 10 minutes, 2 GB).
    The bound (MAX_TIE_BAND, 32,768 ranks) is lowered here so that a small capture reaches it."""
    from certgen.metrics import uncertainty

    monkeypatch.setattr(uncertainty, "MAX_TIE_BAND", 256)
    path = _capture(tmp_path / "constant.csv", np.full(30_000, 16.7))
    code, _, err = run_cli(["metrics", "--json", "--interval", str(path)], capsys)
    assert code == 1
    assert _one_line(err).startswith(f"certgen: {path}: --interval: ")
    assert "cannot be settled within a band of 256 ranks around the 300 longest frames" in err


# --- fleet -------------------------------------------------------------------------------------


def _record(tmp_path: Path) -> Path:
    rec = complete_record({
        "certificate": {"id": "TRIG-1", "issued": "2026-01-01"},
        "status": {"issuable": True, "draft": False},
        "card": {"model": "Card", "serial": "S"},
        "runs": [{"index": 0, **CP._asdict(), "status": "recorded",
                  "metrics": {"avg_fps": 100.0, "low_1pct_fps": 90.0, "low_0_1pct_fps": 70.0,
                              "consistency_gap": 0.1, "stutter": 0.2222,
                              "fluidity_score": 86.33}}]})
    path = tmp_path / "record.json"
    path.write_bytes(dump_record(rec))
    return path


def test_fleet_add_on_a_fleet_with_a_recursive_trigger_is_one_line(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    fleet = tmp_path / "fleet.sqlite"
    record = _record(tmp_path)
    code, _, err = run_cli(["fleet", "add", "--fleet", str(fleet), str(record)], capsys)
    assert code == 0, err
    with sqlite3.connect(fleet) as conn:
        conn.execute("CREATE TRIGGER loop AFTER INSERT ON runs BEGIN SELECT count(*) FROM "
                     "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                     "SELECT x FROM c); END")
    before = fleet.read_bytes()
    for args in (["fleet", "add", "--fleet", str(fleet), str(record)],
                 ["fleet", "cohorts", "--fleet", str(fleet)]):
        code, _, err = run_cli(args, capsys)
        assert code == 1
        assert _one_line(err) == (
            f"certgen: {fleet}: holds a trigger 'loop' certgen did not create; a fleet database "
            "holds only certgen's tables and indexes")
    assert fleet.read_bytes() == before


def test_a_view_in_a_fleet_is_refused_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    fleet = tmp_path / "fleet.sqlite"
    code, _, err = run_cli(["fleet", "add", "--fleet", str(fleet), str(_record(tmp_path))],
                           capsys)
    assert code == 0, err
    with sqlite3.connect(fleet) as conn:
        conn.execute("CREATE VIEW everything AS SELECT * FROM runs")
    code, _, err = run_cli(["fleet", "cohorts", "--fleet", str(fleet)], capsys)
    assert (code, _one_line(err)) == (1, f"certgen: {fleet}: holds a view 'everything' certgen "
                                         "did not create; a fleet database holds only "
                                         "certgen's tables and indexes")


@pytest.mark.parametrize(("query", "shown"), [
    ("connect_timeout=100000", "'100000'"), ("connect_timeout=0", "'0'"),
    ("connect_timeout=soon", "'soon'")])
def test_a_postgresql_connect_timeout_above_the_bound_is_one_line_at_once(
        query: str, shown: str, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"postgresql://u@127.0.0.1:{silent.getsockname()[1]}/db?{query}"
        code, _, err = run_cli(["fleet", "cohorts", "--fleet", url], capsys)
    assert (code, _one_line(err)) == (
        1, f"certgen: {url}: connect_timeout: expected at most 30 seconds (0 or less waits "
           f"without limit), got {shown}")


def test_a_silent_postgresql_server_is_given_up_after_the_url_s_timeout(
        alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"postgresql://u@127.0.0.1:{silent.getsockname()[1]}/db?connect_timeout=2"
        code, _, err = run_cli(["fleet", "cohorts", "--fleet", url], capsys)
    assert code == 1
    assert _one_line(err).startswith(f"certgen: {url}: cannot connect to the fleet server: ")
    assert "timeout" in err


# --- the timestamp authority --------------------------------------------------------------------


def _blank_pdf() -> bytes:
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_an_endless_tsa_answer_is_refused_at_the_bound(tmp_path: Path) -> None:
    """An answer that never ends was read to 1.87 GB and then called unreachable. (Signed
    here without a render: WeasyPrint alone can pass 20 s on a loaded machine; the 20 s bound
    is set around the signing, the key and the authority being made first.)"""
    import datetime as dt
    import signal

    from tsakit import PASSPHRASE, running_authority

    from certgen.errors import CertgenError
    from certgen.render.sign import MAX_TSA_REPLY_BYTES, sign_pdf, signing_key

    sent: list[int] = []

    class Endless(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.end_headers()  # no length: the answer ends when the connection does
            piece = b"\x30" * 65536
            try:
                while True:
                    self.wfile.write(piece)
                    sent.append(len(piece))
            except OSError:
                pass

    def hang(signum: int, frame: object) -> None:
        raise TimeoutError("blocked: a hang")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/tsa"
    pdf = _blank_pdf()
    try:
        with running_authority(lab_valid_for=dt.timedelta(days=2), signatory="A. Sample") as tsa:
            key = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12").with_tsa(url)
            previous = signal.signal(signal.SIGALRM, hang)
            signal.alarm(20)
            try:
                with pytest.raises(CertgenError) as refused:
                    sign_pdf(pdf, key, name="A. Sample",
                             when=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
    finally:
        server.shutdown()
    assert str(refused.value) == (
        f"--tsa {url}: the timestamp authority's answer is larger than {MAX_TSA_REPLY_BYTES} "
        "bytes (a timestamp reply is a few kB); refused unread")
    assert "\n" not in str(refused.value)
    # What the server got out before the refusal: the bound, plus what the sockets buffer.
    assert sum(sent) < 64 * MAX_TSA_REPLY_BYTES


# --- the Dask scheduler ----------------------------------------------------------------------------


def test_a_scheduler_address_sending_garbage_is_one_line(
        tmp_path: Path, alarm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """distributed allocated what the first eight bytes declared: MemoryError 'Unable to
    allocate 5.58 EiB', exit 70."""
    pytest.importorskip("distributed")
    garbage = b"\xff" * 7 + b"\x4f" + os.urandom(64)

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)

        def serve() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(garbage)

        threading.Thread(target=serve, daemon=True).start()
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        bundle = simple_bundle(tmp_path / "b", [(120.0, 90.0, 80.0)])
        code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"),
                                "--draft", "--scheduler", address], capsys)
    declared = int.from_bytes(garbage[:8], "little")
    assert (code, _one_line(err)) == (
        1, f"certgen: the listener at {address} is not a Dask scheduler: its first message "
           f"declares {declared} bytes (a Dask greeting declares at most 65536 bytes)")


def test_a_library_message_over_several_lines_is_worded_on_one() -> None:
    """tests/test_fuzz.py found a timestamp reply whose asn1crypto error spans lines; the
    --tsa refusal quotes it on one line, cut to 300 characters, invisible characters escaped."""
    from certgen.render.sign import _one_line

    text = _one_line(ValueError("Error parsing asn1crypto.tsp.PKIStatusInfo -\n    class "
                                "should have been universal\u202e" + "x" * 400))
    assert "\n" not in text and len(text) == 300 and "\\u202e" in text
    assert text.startswith("Error parsing asn1crypto.tsp.PKIStatusInfo - class should")
