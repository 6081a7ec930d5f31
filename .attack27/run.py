#!/usr/bin/env python3
"""Issue 27's "Must show": every case and attack class the issue lists, re-run against this
checkout's certgen, one Markdown row each: case, command, exit code, the line printed on stderr,
traceback or not, whether the previous build is intact (where a build was there before), time.

Run as root with the worktree's interpreter (tmpfs mounts need root):
    /work/wt-d/.venv/bin/python /work/wt-d/.attack27/run.py [step ...]  > table.md
Fixtures and outputs go under $ATTACK_DIR (default /tmp/wt-d/attack27); details.log there holds
every command's whole stderr. Nothing in the repository is written.
"""
from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(os.environ.get("CERTGEN_REPO", Path(__file__).resolve().parents[1]))
W = Path(os.environ.get("ATTACK_DIR", "/tmp/wt-d/attack27"))
CG = str(REPO / ".venv/bin/certgen")
PY = str(REPO / ".venv/bin/python")
EX = REPO / "examples"
GOLD = str(EX / "gold-rx7800xt")
LAB = str(EX / "lab.yaml")
ROWS: list[dict[str, str]] = []
W.mkdir(parents=True, exist_ok=True)
LOG = open(W / "details.log", "w")
os.chdir(W)
sys.path.insert(0, str(REPO / "tests"))


def sh(cmd: str) -> None:
    subprocess.run(cmd, shell=True, check=False, cwd=W)


def short(s: str) -> str:
    return (s.replace(CG, "certgen").replace(str(W) + "/", "").replace(GOLD, "gold")
            .replace(LAB, "lab.yaml").replace(str(EX) + "/", "examples/")
            .replace(str(REPO) + "/", ""))


def snapshot(d: Path) -> dict[str, str] | None:
    """SHA-256 of every file under d (staging and lock files left out), or None if absent."""
    d = Path(d)
    if not d.exists():
        return None
    out = {}
    for p in sorted(d.rglob("*")):
        rel = p.relative_to(d)
        if p.is_file() and not any(part.startswith((".certgen-new", ".certgen-tmp", ".certgen.lock"))
                                   for part in rel.parts):
            out[str(rel)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def intact(before: dict[str, str] | None, folder: Path) -> str:
    if not before:
        return "NO (no previous build was made)"
    now = snapshot(folder)
    if now != before:
        return "NO (changed)"
    manifests = [k for k in now if k.endswith("manifest.json")]
    return f"yes ({len(now)} files, {len(manifests)} manifest)" if manifests else "NO (no manifest)"


def run(case: str, args: list[str], *, env: dict[str, str] | None = None, timeout: int = 120,
        want: tuple[int, ...] = (1,), lines: int | None = 1, expect: str | None = None,
        previous: tuple[dict[str, str] | None, Path] | None = None, cmd: str | None = None,
        note: str = "") -> tuple[int, str]:
    e = dict(os.environ)
    e.pop("CERTGEN_LAB", None)
    e.pop("CERTGEN_RULES_PATH", None)
    e.update(env or {})
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, cwd=W, env=e, capture_output=True, text=True, errors="replace",
                           stdin=subprocess.DEVNULL, timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as ex:
        rc, err = "timeout", (ex.stderr or b"").decode("utf-8", "replace") if isinstance(
            ex.stderr, bytes) else (ex.stderr or "")
    dt = time.monotonic() - t0
    shown = [x for x in err.splitlines() if x.strip()]
    problems = []
    if rc not in want:
        problems.append(f"exit {rc}, expected {'/'.join(map(str, want))}")
    if lines is not None and len(shown) != lines:
        problems.append(f"{len(shown)} stderr lines")
    tb = "Traceback" in err or "internal error" in err
    if tb:
        problems.append("traceback")
    if expect and expect not in err:
        problems.append(f"does not say {expect!r}")
    prev = "n/a"
    if previous is not None:
        prev = intact(*previous)
        if not prev.startswith("yes"):
            problems.append("previous build not intact")
    line = (shown[-1] if shown else "(nothing)").strip()
    if len(line) > 230:
        line = line[:150] + " … " + line[-60:]
    row = {"case": case, "cmd": cmd or short(" ".join(args)), "exit": str(rc), "line": short(line),
           "tb": "yes" if tb else "no", "prev": prev, "time": f"{dt:.1f} s",
           "ok": "ok" if not problems else "NOT OK: " + "; ".join(problems)}
    if note:
        row["ok"] += f" ({note})"
    ROWS.append(row)
    LOG.write(f"=== {case}\n$ {' '.join(args)}\nexit {rc} in {dt:.1f}s\n{err}\n")
    LOG.flush()
    print(f"{row['ok'][:60]:60} {case}", file=sys.stderr, flush=True)
    return rc if isinstance(rc, int) else -1, err


def fifo(rel: str) -> str:
    p = W / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.exists() or p.is_symlink():
        p.unlink()
    os.mkfifo(p)
    return str(p)


def write(rel: str, data: str | bytes) -> str:
    p = W / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    p.write_bytes(data)
    return str(p)


def bundle(name: str, edit=None, text: str | None = None, source: str = GOLD) -> str:
    b = W / name
    shutil.rmtree(b, ignore_errors=True)
    shutil.copytree(source, b)
    t = (b / "card.yaml").read_text()
    if edit:
        t = edit(t)
    if text is not None:
        t = text
    (b / "card.yaml").write_text(t)
    return str(b)


def quiet(args: list[str], **kw) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("CERTGEN_RULES_PATH", None)
    e.update(kw.pop("env", {}))
    return subprocess.run(args, cwd=W, capture_output=True, text=True, env=e, **kw)


def mounted_tmpfs(d: Path, size: str) -> bool:
    sh(f"umount {d} 2>/dev/null; rm -rf {d}; mkdir -p {d}")
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)],
                          capture_output=True).returncode == 0


# ---------------------------------------------------------------- rebuild failures
def rebuilds() -> None:
    d = W / "tmpfs"
    if not mounted_tmpfs(d, "2m"):
        ROWS.append({"case": "full disk", "cmd": "mount -t tmpfs", "exit": "", "line":
                     "mount failed: not run", "tb": "", "prev": "", "time": "", "ok": "NOT RUN"})
    else:
        try:
            quiet([CG, "build", GOLD, "--out", str(d / "out"), "--lab", LAB, "--lang", "en"])
            quiet([CG, "compare", str(EX / "compare/change/before.json"),
                   str(EX / "compare/change/after.json"), "--out", str(d / "r")])
            b_build, b_cmp = snapshot(d / "out"), snapshot(d / "r")
            with open(d / "filler", "wb", buffering=0) as f:  # unbuffered: closing cannot fail
                try:
                    while True:
                        f.write(b"\0" * 4096)
                except OSError:
                    pass
            run("rebuild onto a full disk (2 MB tmpfs, filled)",
                [CG, "build", GOLD, "--out", str(d / "out"), "--lab", LAB, "--lang", "en,ru"],
                previous=(b_build, d / "out"), expect="disk is full",
                cmd="certgen build gold --out tmpfs/out --lab lab.yaml --lang en,ru")
            run("compare rebuild onto a full disk",
                [CG, "compare", str(EX / "compare/change/before.json"),
                 str(EX / "compare/change/after.json"), "--out", str(d / "r")],
                previous=(b_cmp, d / "r"), expect="disk is full",
                cmd="certgen compare before.json after.json --out tmpfs/r")
        finally:
            sh(f"umount {d}")
    # A rebuild the rules refuse (a render-stage failure) and one whose signing fails.
    from pkikit import PASSPHRASE, make_pki
    pki = make_pki()
    key = write("sign/lab.p12", pki.lab_p12)
    write("sign/pass.txt", PASSPHRASE.decode() + "\n")
    write("sign/wrong.txt", "not the passphrase\n")
    out = W / "rb"
    shutil.rmtree(out, ignore_errors=True)
    b = bundle("b_rebuild")
    quiet([CG, "build", b, "--out", str(out), "--lab", LAB, "--lang", "en"])
    before = snapshot(out)
    bundle("b_rebuild", lambda t: t.replace('serial: "SAMPLE-7800XT-0002"', 'serial: "EX\\x1b[31m"'))
    run("rebuild refused (card.yaml now invalid)", [CG, "build", b, "--out", str(out), "--lab",
                                                     LAB, "--lang", "en"],
        previous=(before, out), cmd="certgen build b_rebuild --out rb (card.serial now bad)")
    bundle("b_rebuild")
    run("signed rebuild, wrong passphrase", [CG, "build", b, "--out", str(out), "--lab", LAB,
                                              "--lang", "en", "--sign", key,
                                              "--sign-passphrase-file", "sign/wrong.txt"],
        previous=(before, out),
        cmd="certgen build b_rebuild --out rb --sign lab.p12 --sign-passphrase-file wrong.txt")
    # A signing failure during the build (the key expires before the certificate).
    from pkikit import issue
    import datetime as dt
    short_p12 = issue(pki, not_after=dt.datetime.now(dt.UTC) + dt.timedelta(days=30))
    write("sign/short.p12", short_p12)
    run("signed rebuild, key expires before the certificate",
        [CG, "build", b, "--out", str(out), "--lab", LAB, "--lang", "en", "--sign",
         "sign/short.p12", "--sign-passphrase-file", "sign/pass.txt"],
        previous=(before, out), cmd="certgen build b_rebuild --out rb --sign short.p12 …")


def kill9() -> None:
    out = W / "k9"
    shutil.rmtree(out, ignore_errors=True)
    quiet([CG, "build", GOLD, "--out", str(out), "--lab", LAB, "--lang", "en"])
    before = snapshot(out)
    for delay in (1.5, 4.0, 7.0, 9.0, 11.0):
        t0 = time.monotonic()
        p = subprocess.Popen([CG, "build", GOLD, "--out", str(out), "--lab", LAB, "--lang",
                              "en,ru,pt"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(delay)
        alive = p.poll() is None
        if alive:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        time.sleep(0.3)
        prev = intact(before, out)
        ok = prev.startswith("yes") if alive else True
        ROWS.append({"case": f"kill -9 mid-build at {delay} s", "cmd":
                     "certgen build gold --out k9 --lang en,ru,pt; kill -9", "exit":
                     "-9" if alive else str(p.returncode), "line": "(killed)" if alive else
                     "(finished before the kill)", "tb": "no", "prev": prev, "time":
                     f"{time.monotonic() - t0:.1f} s", "ok": "ok" if ok else "NOT OK"})
        if not alive:
            break
    run("next build after the kills", [CG, "build", GOLD, "--out", str(out), "--lab", LAB,
                                       "--lang", "en,ru,pt"], want=(0,), lines=0,
        cmd="certgen build gold --out k9 --lang en,ru,pt")
    left = [str(x.relative_to(out)) for x in out.rglob(".certgen-*")]
    ROWS[-1]["line"] = f"(stderr empty; left behind: {left or 'nothing'})"


# ---------------------------------------------------------------- output folders
def site() -> None:
    d = W / "ro"
    if mounted_tmpfs(d, "8m") and subprocess.run(["mount", "-o", "remount,ro", str(d)]).returncode == 0:
        try:
            run("site --out a read-only file system", [CG, "site", "--out", str(d)],
                expect="read-only")
            run("site --out under a read-only folder", [CG, "site", "--out", str(d / "site")])
            run("build --out read-only", [CG, "build", GOLD, "--out", str(d), "--lab", LAB])
        finally:
            sh(f"umount {d}")
    else:
        ROWS.append({"case": "site --out read-only", "cmd": "mount", "exit": "", "line":
                     "mount failed: not run", "tb": "", "prev": "", "time": "", "ok": "NOT RUN"})
    write("afile", "x\n")
    run("site --out a regular file", [CG, "site", "--out", "afile"])
    run("site --out under a regular file", [CG, "site", "--out", "afile/sub"])
    run("demo --out a regular file", [CG, "demo", "--out", "afile"])
    run("calibrate --out a regular file", [CG, "calibrate", "--fleet", str(fleet_file("cf")),
                                           "--out", "afile"])
    # The output folder's lock held by a process that is not certgen.
    out = W / "lockout"
    shutil.rmtree(out, ignore_errors=True)
    quiet([CG, "build", GOLD, "--out", str(out), "--lab", LAB, "--lang", "en"])
    before = snapshot(out)
    shutil.rmtree(W / "b_lock", ignore_errors=True)
    b = bundle("b_lock", lambda t: t.replace('customer: "Sample only — illustrative numbers"',
                                             'customer: "Changed customer"'))
    holder = subprocess.Popen(["flock", str(out / "SAMPLE-GOLD-0002" / ".certgen.lock"), "-c",
                               "echo held; sleep 100"], stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()
    try:
        run("output folder locked by flock(1)", [CG, "build", b, "--out", str(out), "--lab",
                                                 LAB, "--lang", "en"],
            lines=2, expect="another process", previous=(before, out),
            cmd="flock out/ID/.certgen.lock sleep & certgen build … --out lockout",
            note="2 lines: the documented waiting notice, then the refusal after 60 s")
    finally:
        holder.kill()
        holder.wait()


# ---------------------------------------------------------------- fleets
def fleet_file(name: str) -> Path:
    f = W / f"{name}.sqlite"
    for x in W.glob(f"{name}.sqlite*"):
        x.unlink()
    quiet([CG, "fleet", "import", "--fleet", str(f), str(EX / "fleet.jsonl")])
    return f


def fleet() -> None:
    f = fleet_file("f")
    ps = sqlite3.connect(f).execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(f.read_bytes())
    data[3 * ps:4 * ps] = os.urandom(ps)
    f.write_bytes(bytes(data))
    before = f.read_bytes()
    for case, args in (("cohorts", ["fleet", "cohorts", "--fleet", "f.sqlite"]),
                       ("check", ["check", GOLD, "--fleet", "f.sqlite"]),
                       ("export", ["fleet", "export", "--fleet", "f.sqlite"]),
                       ("import", ["fleet", "import", "--fleet", "f.sqlite",
                                   str(EX / "fleet.jsonl")]),
                       ("calibrate", ["calibrate", "--fleet", "f.sqlite", "--out", "cal"])):
        run(f"damaged fleet (page 4 random): {case}", [CG, *args], expect="damaged")
    ROWS[-1]["ok"] += "" if f.read_bytes() == before else " NOT OK: the file changed"
    # the same page replaced by an empty leaf (a valid page: quick_check alone misses it)
    f2 = fleet_file("f2")
    data = bytearray(f2.read_bytes())
    data[3 * ps:4 * ps] = b"\x0d" + b"\0" * 4 + b"\x10\x00" + b"\0" * (ps - 7)
    f2.write_bytes(bytes(data))
    run("fleet page 4 an empty leaf: cohorts", [CG, "fleet", "cohorts", "--fleet", "f2.sqlite"],
        expect="damaged")
    write("notsqlite.sqlite", os.urandom(5000))
    run("fleet not SQLite: calibrate", [CG, "calibrate", "--fleet", "notsqlite.sqlite", "--out",
                                        "cal"])
    run("fleet not SQLite: cohorts", [CG, "fleet", "cohorts", "--fleet", "notsqlite.sqlite"])


def lock() -> None:
    f = fleet_file("lk")
    holder = subprocess.Popen(["sqlite3", str(f)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdin and holder.stdout
    holder.stdin.write("BEGIN IMMEDIATE;\nSELECT 'held';\n")
    holder.stdin.flush()
    holder.stdout.readline()
    try:
        run("fleet lock held by sqlite3", [CG, "fleet", "import", "--fleet", "lk.sqlite",
                                           "--lock-timeout", "2", str(EX / "fleet.jsonl")],
            lines=2, expect="another process held",
            note="2 lines: the documented waiting notice, then the refusal")
    finally:
        holder.kill()
        holder.wait()


def feb30() -> None:
    b = bundle("b_feb30", lambda t: t.replace("issued: 2026-11-29", "issued: 2026-02-30"))
    run("issued: 2026-02-30", [CG, "check", b], expect="certificate.issued")


# ---------------------------------------------------------------- lab.yaml
def lab() -> None:
    base = Path(LAB).read_text()
    name_line = 'name: "Sample Frame-Pacing Laboratory (SPECIMEN, not a real laboratory)"'
    sig_line = '  name: "A. Sample"'
    assert name_line in base and sig_line in base
    vals = {"blank": '"   "', "zero-width only": '"\\u200b\\u200d\\ufeff"',
            "bidi control": '"EVIL\\u202egnp.exe"', "control char": '"Lab\\x1b[31m red"',
            "multi-line": '"Line one\\nLine two"', "5,000 chars": '"' + "L" * 5000 + '"',
            "markup": '"<b>markup</b>"'}
    for k, v in vals.items():
        slug = k.replace(" ", "_").replace(",", "")
        p = write(f"lab/name-{slug}.yaml", base.replace(name_line, f"name: {v}"))
        run(f"lab name: {k}", [CG, "build", GOLD, "--out", "o", "--lab", p])
        p = write(f"lab/sig-{slug}.yaml", base.replace(sig_line, f"  name: {v}"))
        run(f"lab signatory: {k}", [CG, "build", GOLD, "--out", "o", "--lab", p])
    vb = 'verification_base: "https://certificates.example.org/verify"'
    assert vb in base
    p = write("lab/vb5000.yaml", base.replace(vb, 'verification_base: "https://x.example.org/'
                                                 + "a" * 4977 + '"'))
    run("lab verification_base 5,000 chars", [CG, "build", GOLD, "--out", "o", "--lab", p])
    p = write("lab/big30mb.yaml", base + "contact_notes: |\n" + ("  " + "y" * 998 + "\n") * 30 * 1024)
    run("lab.yaml 30 MB", [CG, "build", GOLD, "--out", "o", "--lab", p])
    run("lab.yaml a FIFO", [CG, "build", GOLD, "--out", "o", "--lab", fifo("lab/fifo.yaml")])
    run("lab.yaml /dev/zero", [CG, "build", GOLD, "--out", "o", "--lab", "/dev/zero"])
    (W / "lab/dir.yaml").mkdir(exist_ok=True)
    run("lab.yaml a folder", [CG, "build", GOLD, "--out", "o", "--lab", "lab/dir.yaml"])


# ---------------------------------------------------------------- signing inputs
def signing() -> None:
    env = {"CERTGEN_SIGN_PASSPHRASE": "x"}
    run("--sign a FIFO", [CG, "build", GOLD, "--out", "o", "--lab", LAB, "--sign",
                          fifo("sign/key.p12")], env=env)
    for dev in ("/dev/zero", "/dev/urandom"):
        run(f"--sign {dev}", [CG, "build", GOLD, "--out", "o", "--lab", LAB, "--sign", dev],
            env=env)
    write("sign/any.p12", "not a p12\n")
    run("--sign not a PKCS#12 file", [CG, "build", GOLD, "--out", "o", "--lab", LAB, "--sign",
                                      "sign/any.p12"], env=env)
    run("--sign-passphrase-file a FIFO", [CG, "build", GOLD, "--out", "o", "--lab", LAB,
                                          "--sign", "sign/any.p12", "--sign-passphrase-file",
                                          fifo("sign/pass.fifo")])
    run("--sign-passphrase-file /dev/zero", [CG, "build", GOLD, "--out", "o", "--lab", LAB,
                                             "--sign", "sign/any.p12",
                                             "--sign-passphrase-file", "/dev/zero"])


# ---------------------------------------------------------------- timestamps (--tsa)
class _Junk(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = self.server.body  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/timestamp-reply")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a) -> None:
        pass


def tsa() -> None:
    from pkikit import PASSPHRASE  # noqa: F401  (sign/lab.p12 made in rebuilds())
    if not (W / "sign/lab.p12").exists():
        from pkikit import make_pki
        write("sign/lab.p12", make_pki().lab_p12)
        write("sign/pass.txt", PASSPHRASE.decode() + "\n")
    common = [CG, "build", GOLD, "--out", "tsaout", "--lab", LAB, "--lang", "en", "--sign",
              "sign/lab.p12", "--sign-passphrase-file", "sign/pass.txt", "--tsa"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    run("--tsa nothing listening", [*common, f"http://127.0.0.1:{closed}/"],
        cmd=f"certgen build gold … --sign lab.p12 --tsa http://127.0.0.1:{closed}/")
    for label, body in (("random bytes", os.urandom(700)), ("an HTML page", b"<html>no</html>"),
                        ("an empty reply", b"")):
        server = http.server.HTTPServer(("127.0.0.1", 0), _Junk)
        server.body = body  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            run(f"--tsa answering {label}", [*common, f"http://127.0.0.1:{server.server_port}/"],
                cmd=f"certgen build gold … --tsa http://127.0.0.1:PORT/ ({label})")
        finally:
            server.shutdown()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        run("--tsa a silent listener", [*common, f"http://127.0.0.1:{listener.getsockname()[1]}/"],
            timeout=150, cmd="certgen build gold … --tsa http://127.0.0.1:PORT/ (never answers)")
    finally:
        listener.close()
    run("--tsa javascript:", [*common, "javascript:alert(1)"])


# ---------------------------------------------------------------- scheduler, PostgreSQL
def scheduler() -> None:
    for a in ("not an address", "tcp://:8786", "inproc://x", "tls://127.0.0.1:8786"):
        run(f"--scheduler {a!r}", [CG, "build", GOLD, "--out", "o", "--lab", LAB,
                                   "--scheduler", a])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        run("--scheduler a silent listener", [CG, "build", GOLD, "--out", "o", "--lab", LAB,
                                              "--scheduler",
                                              f"tcp://127.0.0.1:{listener.getsockname()[1]}"],
            timeout=90, cmd="certgen build gold … --scheduler tcp://127.0.0.1:PORT (silent)")
    finally:
        listener.close()


def postgres() -> None:
    for url in ("postgresql://u:pw@[::1/db", "postgresql://u:pw@host:notaport/db",
                "postgresql://u:pw@/"):
        rc, err = run(f"PostgreSQL URL {url.replace('pw', '***')}",
                      [CG, "fleet", "cohorts", "--fleet", url], timeout=60,
                      cmd=f"certgen fleet cohorts --fleet '{url}'")
        if "pw@" in err:
            ROWS[-1]["ok"] = "NOT OK: the password is shown"


# ---------------------------------------------------------------- rules files
def rules() -> None:
    v11 = (REPO / "certgen/sop/sop-gpu-001-v1.1.yaml").read_text()
    good = v11.replace("sop: SOP-GPU-001 v1.1", "sop: SOP-X v1").replace(
        "rules_version: sop-gpu-001-v1.1", "rules_version: sop-x-v1")
    variants = {
        "a YAML syntax error": good.replace("grades: [PLATINUM, GOLD, SILVER]",
                                            "grades: [PLATINUM, GOLD, SILVER"),
        "NaN weights": good.replace("consistency_gap: 0.7", "consistency_gap: .nan"),
        "an empty grade list": good.replace("grades: [PLATINUM, GOLD, SILVER]", "grades: []"),
        "nesting 5,000 deep": "sop: SOP-X v1\nx: " + "[" * 5000 + "]" * 5000 + "\n",
        "a list, not a mapping": "- sop: SOP-X v1\n- rules_version: sop-x-v1\n",
        "a !!python/object tag": good.replace("calibrated: false",
                                              "calibrated: !!python/object:os.system {}"),
        "a folder named *.yaml": None,
        "no sop key": good.replace("sop: SOP-X v1\n", ""),
        "a FIFO": None,
        "2 MB": good + "# " + "z" * (2 << 20) + "\n",
    }
    sopx = bundle("b_sopx", lambda t: t.replace('sop: "SOP-GPU-001 v1.1"', 'sop: "SOP-X v1"'))
    out = W / "rules_out"
    shutil.rmtree(out, ignore_errors=True)
    quiet([CG, "build", GOLD, "--out", str(out), "--lab", LAB, "--lang", "en"])
    for i, (k, v) in enumerate(variants.items()):
        d = W / "rules" / f"r{i}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        f = d / "sop-x-v1.yaml"
        if k == "a folder named *.yaml":
            f.mkdir()
        elif k == "a FIFO":
            os.mkfifo(f)
        else:
            f.write_text(v)
        env = {"CERTGEN_RULES_PATH": str(d)}
        run(f"rules file {k} on the path: build a v1.1 bundle",
            [CG, "build", GOLD, "--out", str(out), "--lab", LAB, "--lang", "en"], env=env,
            want=(0,), lines=0, timeout=180,
            cmd=f"CERTGEN_RULES_PATH=rules/r{i} certgen build gold --out rules_out")
        ROWS[-1]["line"] = "(stderr empty; built)" if ROWS[-1]["line"] == "(nothing)" else ROWS[-1]["line"]
        run(f"rules file {k}: a bundle of that SOP", [CG, "check", sopx], env=env,
            lines=None, expect="sop-x-v1.yaml",
            cmd=f"CERTGEN_RULES_PATH=rules/r{i} certgen check b_sopx")


# ---------------------------------------------------------------- revocations
def revocations() -> None:
    recs = W / "records"
    shutil.rmtree(recs, ignore_errors=True)
    quiet([CG, "build", GOLD, "--out", str(recs), "--lab", LAB, "--lang", "en"])
    cases = {
        "an impossible date": '- id: "SAMPLE-GOLD-0002"\n  date: 2026-02-30\n  reason: "x"\n',
        "nesting 5,000 deep": "- id: " + "[" * 5000 + "]" * 5000 + "\n",
        "a 5,000-digit number": '- id: "SAMPLE-GOLD-0002"\n  date: 2026-11-30\n  reason: '
                                + "9" * 5000 + "\n",
        "a list of bare ids": '- "SAMPLE-GOLD-0002"\n- "SAMPLE-SILVER-0003"\n',
        "16 MiB + 1 byte": '- id: "SAMPLE-GOLD-0002"\n  date: 2026-11-30\n  reason: "x"\n#'
                           + "p" * ((16 << 20) - 58) + "\n",
    }
    for k, v in cases.items():
        p = write(f"rev/{k.replace(' ', '_').replace(',', '')}.yaml", v)
        shutil.rmtree(W / "reg", ignore_errors=True)
        run(f"revocations: {k} (registry)", [CG, "registry", str(recs), "--out", "reg",
                                             "--as-of", "2026-12-01", "--revocations", p])
    big = str(W / "rev/16_MiB_+_1_byte.yaml")
    run("revocations: 16 MiB + 1 byte (verify)", [CG, "verify", "--revocations", big,
                                                   str(recs / "SAMPLE-GOLD-0002/certificate.en.pdf")],
        expect="limit of 16777216")
    for label, path in (("a FIFO", fifo("rev/fifo.yaml")), ("/dev/zero", "/dev/zero")):
        run(f"revocations: {label} (registry)", [CG, "registry", str(recs), "--out", "reg",
                                                 "--as-of", "2026-12-01", "--revocations", path])
        run(f"revocations: {label} (verify)", [CG, "verify", "--revocations", path,
                                               str(recs / "SAMPLE-GOLD-0002/certificate.en.pdf")])


# ---------------------------------------------------------------- verify
def verify() -> None:
    import datetime as dt

    from pkikit import PASSPHRASE, make_pki
    pki = make_pki()
    write("sign/lab.p12", pki.lab_p12)
    write("sign/pass.txt", PASSPHRASE.decode() + "\n")
    write("sign/ca.pem", pki.ca_pem)
    out = W / "signed"
    shutil.rmtree(out, ignore_errors=True)
    quiet([CG, "build", GOLD, "--out", str(out), "--lab", LAB, "--lang", "en", "--sign",
           "sign/lab.p12", "--sign-passphrase-file", "sign/pass.txt"])
    pdf = (out / "SAMPLE-GOLD-0002/certificate.en.pdf").read_bytes()
    import re
    a, b, c, _ = map(int, re.search(rb"/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", pdf).groups())
    flipped = bytearray(pdf)
    flipped[b + 20] = ord("0") if flipped[b + 20] != ord("0") else ord("1")
    variants = {"cut in half": pdf[:len(pdf) // 2], "a /Contents digit changed": bytes(flipped),
                "a signed byte changed": pdf[:100] + b"X" + pdf[101:],
                "junk appended": pdf + b"\n1 0 obj\n(PLATINUM)\nendobj\n",
                "empty": b""}
    run("verify the genuine signed certificate", [CG, "verify", str(out / "SAMPLE-GOLD-0002/certificate.en.pdf"),
                                                  "--trust", "sign/ca.pem"],
        want=(3,), lines=0, timeout=180, cmd="certgen verify certificate.en.pdf --trust ca.pem")
    ROWS[-1]["line"] = "(stderr empty; stdout ends VERIFIED EXCEPT: revocation not checked)"
    for k, v in variants.items():
        p = write(f"verify/{k.replace(' ', '_').replace('/', '')}.pdf", v)
        run(f"verify a signed certificate, {k}", [CG, "verify", p, "--trust", "sign/ca.pem"],
            want=(1,), lines=None, timeout=180, cmd=f"certgen verify {short(p)} --trust ca.pem")
        r = ROWS[-1]
        if r["line"] == "(nothing)":
            r["line"] = "(stderr empty; stdout ends NOT VERIFIED)"
    run("verify /dev/zero", [CG, "verify", "/dev/zero"])
    run("verify a FIFO", [CG, "verify", fifo("verify/fifo.pdf")])


# ---------------------------------------------------------------- big documents
def many_runs(source: Path, root: Path, n: int) -> None:
    """GOLD with n runs: each run a copy of one of its captures with one header byte changed
    (certgen refuses one capture behind two runs), first captures copied the same way."""
    import yaml
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source, root)
    card = yaml.safe_load((root / "card.yaml").read_text())
    runs = card["runs"]
    out = []
    for i in range(n):
        r = dict(runs[i % len(runs)])
        r["title"] = f"{r['title']} #{i // len(runs) + 1}"
        if i >= len(runs):
            text = (root / r["capture"]).read_text().replace(",32803468,", f",{32803468 + i},", 1)
            (root / f"captures/r{i}.csv").write_text(text)
            r["capture"] = f"captures/r{i}.csv"
            if r.get("first_capture"):
                fc = dict(r["first_capture"])
                text = (root / fc["file"]).read_text().replace(",32803468,", f",{32803468 + i},", 1)
                (root / f"archive/r{i}-first.csv").write_text(text)
                fc["file"] = f"archive/r{i}-first.csv"
                fc["sha256"] = hashlib.sha256((root / fc["file"]).read_bytes()).hexdigest()
                r["first_capture"] = fc
        out.append(r)
    card["runs"] = out
    card["certificate"]["id"] = f"BIG-{n}"
    (root / "card.yaml").write_text(yaml.safe_dump(card, allow_unicode=True, sort_keys=False))


def big() -> None:
    b = bundle("b_bigname", lambda t: t.replace('customer: "Sample only — illustrative numbers"',
                                                'customer: "' + "C" * (2 << 20) + '"'))
    run("card.yaml customer of 2 MB", [CG, "check", b])
    t = (Path(GOLD) / "card.yaml").read_text()
    head, runs_part = t.split("runs:\n", 1)
    first = "  - title" + runs_part.split("  - title")[1]
    b = bundle("b_600runs", text=head + "runs:\n" + first * 600)
    run("card.yaml with 600 runs", [CG, "check", b])
    arr = "customer: [" + ",".join("a" for _ in range(200000)) + "]"
    b = bundle("b_custarr", lambda t: t.replace('customer: "Sample only — illustrative numbers"', arr))
    run("customer a 200,000-entry array", [CG, "check", b])
    # 100 runs (the limit): built, one PDF, no progress lines off a terminal.
    many_runs(Path(GOLD), W / "b_100runs", 100)
    shutil.rmtree(W / "o100", ignore_errors=True)
    run("card.yaml with 100 runs (the limit), built", [CG, "build", str(W / "b_100runs"), "--out",
                                                       "o100", "--lab", LAB, "--lang", "en"],
        want=(0,), lines=0, timeout=400, cmd="certgen build b_100runs --out o100 --lang en")
    ROWS[-1]["line"] = "(stderr empty: no progress off a terminal)" if ROWS[-1]["line"] == "(nothing)" else ROWS[-1]["line"]


# ---------------------------------------------------------------- calibrate
def calibrate() -> None:
    f = fleet_file("cf")
    v11 = (REPO / "certgen/sop/sop-gpu-001-v1.1.yaml").read_text()
    cand = v11.replace("rules_version: sop-gpu-001-v1.1", "rules_version: sop-gpu-001-v1.2-cand")
    base = [CG, "calibrate", "--fleet", str(f), "--out", "calo", "--rules"]
    run("calibrate --rules a FIFO", [*base, fifo("cal_in/rules-fifo.yaml")])
    run("calibrate --rules /dev/zero", [*base, "/dev/zero"])
    (W / "cal_in/dir.yaml").mkdir(parents=True, exist_ok=True)
    run("calibrate --rules a folder", [*base, "cal_in/dir.yaml"])
    run("calibrate --rules an unknown key", [*base, write("cal_in/unknown.yaml", cand + "calibratd: true\n")])
    run("calibrate --rules weights 0.6 + 0.3", [*base, write("cal_in/weights.yaml", cand.replace(
        "consistency_gap: 0.7", "consistency_gap: 0.6"))])
    run("calibrate --rules two problems", [*base, write("cal_in/two.yaml", cand.replace(
        "  gold: 88", "  gold: 88\n  silver: 70").replace("platinum: 95", "platinum: high"))],
        lines=2, note="2 lines: every problem of the rules file, each naming it")
    run("calibrate --rules NaN line", [*base, write("cal_in/nan.yaml", cand.replace(
        "platinum: 95", "platinum: .nan"))])
    run("calibrate --rules 2 MB", [*base, write("cal_in/big.yaml", cand + "#" + "z" * (2 << 20))])
    for x in W.glob("empty.sqlite*"):
        x.unlink()
    write("empty.jsonl", "")
    quiet([CG, "fleet", "import", "--fleet", "empty.sqlite", "empty.jsonl"])
    run("calibrate an empty fleet", [CG, "calibrate", "--fleet", "empty.sqlite", "--out", "calo"])
    write("zero.sqlite", b"")
    run("calibrate a 0-byte file as the fleet", [CG, "calibrate", "--fleet", "zero.sqlite", "--out", "calo"])
    run("calibrate a FIFO as the fleet", [CG, "calibrate", "--fleet", fifo("cal_in/fleet.fifo"), "--out", "calo"])
    # a calibration rebuild onto a full disk keeps the previous review
    d = W / "caltmpfs"
    if mounted_tmpfs(d, "3m"):
        try:
            quiet([CG, "calibrate", "--fleet", str(f), "--out", str(d / "cal"), "--lang", "en"])
            before = snapshot(d / "cal")
            with open(d / "filler", "wb", buffering=0) as fill:
                try:
                    while True:
                        fill.write(b"\0" * 4096)
                except OSError:
                    pass
            run("calibrate rebuild onto a full disk", [CG, "calibrate", "--fleet", str(f), "--out",
                                                       str(d / "cal"), "--lang", "en,ru"],
                previous=(before, d / "cal"), expect="disk is full",
                cmd="certgen calibrate --fleet cf.sqlite --out caltmpfs/cal --lang en,ru")
        finally:
            sh(f"umount {d}")


STEPS = [rebuilds, kill9, site, fleet, lock, feb30, lab, signing, tsa, scheduler, postgres,
         rules, revocations, verify, big, calibrate]


def main() -> None:
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    only = sys.argv[1:]
    t0 = time.monotonic()
    for step in STEPS:
        if only and step.__name__ not in only:
            continue
        try:
            step()
        except Exception as ex:  # a fault of this script, not of certgen: shown as a row
            ROWS.append({"case": step.__name__, "cmd": "(script error)", "exit": "", "line":
                         repr(ex)[:200], "tb": "", "prev": "", "time": "", "ok": "SCRIPT ERROR"})
    head = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True).stdout.strip()
    print(f"Issue 27 attacks on {head[:70]} — {len(ROWS)} rows, "
          f"{sum(r['ok'].startswith('ok') for r in ROWS)} ok, "
          f"{time.monotonic() - t0:.0f} s in all\n")
    print("| case | command | exit | the line printed (stderr) | traceback | previous build intact | time | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in ROWS:
        cells = [r["case"], f"`{r['cmd']}`", r["exit"], r["line"], r["tb"], r["prev"], r["time"], r["ok"]]
        print("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")


if __name__ == "__main__":
    main()
