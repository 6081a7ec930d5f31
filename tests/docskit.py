"""The documentation's shell recipes, read from the Markdown and run as written (issue 39).

Every fenced block of README.md and docs/**/*.md says what it is by its info string:

- ```` ```sh ````: a recipe. Run as written, with bash (`set -eo pipefail`).
- ```` ```console ````: commands after a `$ ` prompt (a line ending in `\\` continues one), each
  followed by the output the reader should see. The commands are run; every output line shown
  must appear in what they print, in that order (an `…` stands for any text, with the hex digits
  it abbreviates: `3f0c…91ab`); blank lines are not compared.
- `text` (output, a tree, a usage line), or a data language (`yaml`, `json`, `jsonc`, `python`,
  `toml`): not a shell recipe, never run here (tests/test_api_doc.py runs the Python one).

A block with no info string fails the suite: a new recipe cannot escape by being left bare.
An HTML comment on the line before a block tells the harness more:

- `<!-- recipe: not run: REASON -->`: a shell block that cannot run as written (a real lab's
  key or server, the network). The reason is required and the test lists it.
- `<!-- recipe: exit N -->`: a console block whose last command exits N (a verdict with its
  own status); any other status fails.
- `<!-- recipe: file NAME -->`: the block (any language) is written to NAME in the folder
  before the recipes run, as a reader would save the example shown.

The recipes of one document run in order, in one temporary folder laid out as a checkout (the
folder holds `examples` and `.venv` of this repository, and `../shared` is the shared folder of
real captures). Each block starts in that folder (a `cd` lasts for its block), and the
variables a block sets stay set for the next ones, as in one terminal (every variable a block
sets is exported: `set -a`). The project's venv is first on PATH. Every
block reads the same line on its standard input (PASSPHRASE: a recipe that asks for a
passphrase gets it). HOME is a folder of its own; the lab's and fleet's environment variables
are cleared.

`publication_server(folder, files)` is the loopback web server the recipes publish to: it serves
the recipe folder's own files at the addresses the environment gives them (the CA's CRL the
recipe made), and fixed bytes (a timestamp authority's root certificate) by path.
"""

from __future__ import annotations

import http.server
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
SHELL = ("sh", "console")
NOT_SHELL = ("text", "yaml", "json", "jsonc", "python", "toml")
PASSPHRASE = "docs recipe passphrase"
STEP_TIMEOUT_S = 600

_FENCE = re.compile(r"^(```+)\s*(\S*)\s*$")
_MARK = re.compile(r"^<!--\s*recipe:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its info string, its text and the harness's note."""

    document: Path
    line: int
    """The line of its opening fence (1-based)."""
    info: str
    text: str
    mark: str | None
    """The `recipe:` comment just above it, without the prefix, if any."""

    @property
    def where(self) -> str:
        name = (self.document.relative_to(ROOT) if self.document.is_relative_to(ROOT)
                else self.document)
        return f"{name}:{self.line}"

    @property
    def not_run(self) -> str | None:
        """The reason this shell block is not run, or None."""
        if self.mark is None or not self.mark.startswith("not run"):
            return None
        return self.mark.removeprefix("not run").lstrip(":").strip()

    @property
    def expected_exit(self) -> int:
        """The exit status a console block's last command shows (`exit N`; default 0)."""
        if self.mark is None or not re.fullmatch(r"exit \d+", self.mark):
            return 0
        return int(self.mark.split()[1])

    @property
    def saved_as(self) -> str | None:
        """The file name this block is saved as before the recipes run, or None."""
        if self.mark is None or not self.mark.startswith("file "):
            return None
        return self.mark.removeprefix("file ").strip()


def blocks(document: Path) -> list[Block]:
    """Every fenced block of `document`, in order."""
    lines = document.read_text("utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, info = opening.groups()
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        before = lines[i - 1] if i > 0 else ""
        mark = _MARK.match(before)
        found.append(Block(document, i + 1, info, "\n".join(lines[i + 1:end]) + "\n",
                           mark.group(1) if mark else None))
        i = end + 1
    return found


def commands_and_output(block: Block) -> tuple[list[str], list[str]]:
    """A console block's commands (continuations joined) and the output lines it shows."""
    commands: list[str] = []
    output: list[str] = []
    continuing = False
    for line in block.text.splitlines():
        if continuing:
            commands[-1] += "\n" + line
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            commands.append(line[2:])
            continuing = line.endswith("\\")
        elif line.strip():
            output.append(line)
    return commands, output


def _pattern(line: str) -> re.Pattern[str]:
    """A shown output line as a pattern: `…` (with the hex digits around it) is any text."""
    parts = re.split(r"[0-9a-f]*…[0-9a-f]*", line.rstrip())
    return re.compile(".*".join(re.escape(part) for part in parts))


def missing_output(shown: list[str], printed: str) -> str | None:
    """The first shown line not printed (in order), or None when every one was."""
    lines = [line.rstrip() for line in printed.splitlines() if line.strip()]
    at = 0
    for want in shown:
        pattern = _pattern(want)
        while at < len(lines) and not pattern.fullmatch(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def layout(root: Path, shared: Path) -> Path:
    """A checkout-like folder under `root` (examples, .venv; ../shared); returns it."""
    checkout = root / "checkout"
    checkout.mkdir(parents=True)
    (checkout / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    (checkout / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    (root / "shared").symlink_to(shared, target_is_directory=True)
    (root / "home").mkdir()
    return checkout


@dataclass(frozen=True)
class Step:
    """What running one block gave."""

    block: Block
    returncode: int
    stdout: str
    stderr: str

    def report(self) -> str:
        tail = "\n".join((self.stdout + self.stderr).splitlines()[-25:])
        return f"{self.block.where} ({self.block.info}) exited {self.returncode}:\n{tail}"


def run_document(document: Path, folder: Path, env: dict[str, str]) -> Iterator[Step]:
    """Run the shell recipes of `document` in `folder`, in order, one bash process each, the
    exported variables carried from one to the next; yields each
    block's result (the caller stops at the first failure)."""
    state = folder.parent / f".state-{document.stem}"
    doc_blocks = blocks(document)
    for block in doc_blocks:
        if block.saved_as is not None:
            (folder / block.saved_as).write_text(block.text, "utf-8")
    for block in doc_blocks:
        if block.info not in SHELL or block.not_run is not None:
            continue
        if block.info == "sh":
            body = block.text
        else:
            commands = commands_and_output(block)[0]
            status = block.expected_exit
            if status:  # the last command's status is the one shown; any other fails the block
                commands[-1] = (f"__status=0; {commands[-1]} || __status=$?\n"
                                f"[ \"$__status\" = {status} ] || {{ echo \"exit $__status, "
                                f"expected {status}\" >&2; exit 1; }}")
            body = "\n".join(commands) + "\n"
        saved = shlex.quote(str(state))
        script = (f"set -eo pipefail\n[ -f {saved} ] && . {saved}\ncd {shlex.quote(str(folder))}\n"
                  f"set -a\n{body}\nset +a\nexport -p | grep -v '^declare -x \\(OLD\\)\\?PWD=' "
                  f"> {saved}\n")
        done = subprocess.run(["bash", "-c", script], env=env, input=PASSPHRASE + "\n",
                              capture_output=True, text=True, timeout=STEP_TIMEOUT_S,
                              check=False)
        yield Step(block, done.returncode, done.stdout, done.stderr)


def environment(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """The recipes' environment: this venv first on PATH, a HOME of their own, none of the
    lab's or fleet's variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CERTGEN_", "PYTEST", "COV_")) and k != "SOURCE_DATE_EPOCH"}
    env["PATH"] = f"{Path(sys.prefix) / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["HOME"] = str(home)
    env.pop("VIRTUAL_ENV", None)
    env.update(extra)
    return env


@contextmanager
def publication_server(files: dict[str, Callable[[], bytes]]) -> Iterator[str]:
    """A loopback HTTP server answering GET /<name> with `files[name]()` (read at each request,
    so a file the recipe writes later is served as it is then); yields its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            read = files.get(self.path.lstrip("/"))
            try:
                body = read() if read is not None else None
            except OSError:
                body = None
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
