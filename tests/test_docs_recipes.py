"""Docs are tests (issue 39): every shell recipe in README.md and docs/ runs here as written
(tests/docskit.py reads the blocks and says how a block is marked).

The recipes run in a temporary checkout-like folder with this venv first on PATH. The servers a
recipe needs are started here on loopback and handed to it through the variables the recipe
itself names with a default (`CRL_URL=${CRL_URL:-…}`): a real RFC 3161 timestamp authority
(tests/tsakit.py, OpenSSL's `ts`), and a web server that publishes the CA's CRL the recipe makes
(and the authority's root certificate), as the lab's and the authority's sites would. So
docs/verify.md's path from keys to a timestamped certificate that a customer's folder verifies
cannot drift from what certgen does.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest
from docskit import (
    DOCUMENTS,
    NOT_SHELL,
    ROOT,
    SHELL,
    Block,
    blocks,
    commands_and_output,
    environment,
    layout,
    missing_output,
    publication_server,
    run_document,
)
from tsakit import running_authority

ALL_BLOCKS = [block for document in DOCUMENTS for block in blocks(document)]
RUN = [document for document in DOCUMENTS
       if any(b.info in SHELL and b.not_run is None for b in blocks(document))]


def test_the_harness_finds_the_recipes_it_must_run() -> None:
    # A parser that found nothing would let every test below pass while running nothing.
    names = {str(d.relative_to(ROOT)) for d in RUN}
    assert {"README.md", "docs/verify.md", "docs/lab.md"} <= names
    verify = [b for b in blocks(ROOT / "docs" / "verify.md") if b.info in SHELL and not b.not_run]
    assert len(verify) >= 5


def test_every_block_says_what_it_is() -> None:
    """No bare block: a shell recipe is `sh` or `console`, everything else says its language or
    `text`; a block not run says why; a saved file has a plain name."""
    problems = []
    for block in ALL_BLOCKS:
        if block.info not in SHELL + NOT_SHELL:
            problems.append(f"{block.where}: info string {block.info!r}: expected one of "
                            f"{', '.join(SHELL + NOT_SHELL)}")
        if block.mark is not None and block.not_run is None and block.saved_as is None \
                and not re.fullmatch(r"exit \d+", block.mark):
            problems.append(f"{block.where}: unknown recipe mark {block.mark!r}")
        if block.not_run is not None and (block.info not in SHELL or len(block.not_run) < 10):
            problems.append(f"{block.where}: 'not run' needs a shell block and its reason")
        if block.saved_as is not None and not re.fullmatch(r"[\w.-]+", block.saved_as):
            problems.append(f"{block.where}: file {block.saved_as!r}: expected a plain name")
    assert not problems, "\n".join(problems)


def test_the_output_comparison_catches_a_wrong_line() -> None:
    printed = "PASS signature: by its certificate (SHA-256 3f0c00aa91ab)\nVERIFIED: a.pdf (X)\n"
    assert missing_output(["PASS signature: by its certificate (SHA-256 3f0c…91ab)",
                           "VERIFIED: a.pdf (X)"], printed) is None
    assert missing_output(["VERIFIED: a.pdf (X)", "PASS signature: …"], printed) is not None
    assert missing_output(["NOT VERIFIED: a.pdf (X)"], printed) == "NOT VERIFIED: a.pdf (X)"
    block = Block(ROOT / "README.md", 1, "console", "$ a \\\n  b\nout\n\n$ c\n", None)
    assert commands_and_output(block) == (["a \\\n  b", "c"], ["out"])


def test_a_failing_recipe_and_a_wrong_exit_status_are_caught(tmp_path: Path) -> None:
    """The harness itself: state carries from block to block, a block that fails is reported
    with its status, and `exit N` holds a console block to that status."""
    doc = tmp_path / "doc.md"
    doc.write_text("```sh\nGREETING=hello\nread -r LINE\n```\n\n"
                   "```console\n$ echo \"$GREETING $LINE\"\nhello docs recipe passphrase\n```\n\n"
                   "<!-- recipe: exit 3 -->\n```console\n$ (exit 3)\n```\n\n"
                   "<!-- recipe: exit 3 -->\n```console\n$ true\n```\n\n"
                   "```sh\nfalse\necho never\n```\n", "utf-8")
    folder = tmp_path / "work"
    folder.mkdir()
    steps = list(run_document(doc, folder, environment(tmp_path, {})))
    assert [s.returncode for s in steps] == [0, 0, 0, 1, 1]
    shown = commands_and_output(steps[1].block)[1]
    assert missing_output(shown, steps[1].stdout) is None
    assert "exit 0, expected 3" in steps[3].stderr
    assert "never" not in steps[4].stdout


def _not_run() -> list[str]:
    return [f"{b.where}: {b.not_run}" for b in ALL_BLOCKS if b.not_run is not None]


def test_the_blocks_not_run_are_few_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    # Printed so that a reader of the test log sees what is not run and why.
    with capsys.disabled():
        print("\nrecipes not run:\n  " + "\n  ".join(_not_run()))
    assert len(_not_run()) <= 6


@pytest.mark.parametrize("document", RUN, ids=lambda d: str(d.relative_to(ROOT)))
def test_the_recipes_run_as_written(document: Path, tmp_path: Path) -> None:
    if shutil.which("openssl") is None or shutil.which("curl") is None:
        pytest.fail("the recipes need openssl and curl")
    from realdata import REAL

    folder = layout(tmp_path, REAL.parent.parent)
    with running_authority(lab_valid_for=dt.timedelta(days=30), signatory="unused") as tsa, \
            publication_server({"ca.crl": lambda: (folder / "ca.crl").read_bytes(),
                                "tsa-root.pem": lambda: tsa.ca_pem}) as site:
        env = environment(tmp_path / "home", {
            "CRL_URL": f"{site}/ca.crl", "TSA_URL": tsa.tsa_url,
            "TSA_ROOT_URL": f"{site}/tsa-root.pem"})
        ran = 0
        for step in run_document(document, folder, env):
            assert step.returncode == 0, step.report()
            if step.block.info == "console":
                missing = missing_output(commands_and_output(step.block)[1], step.stdout)
                assert missing is None, (f"{step.block.where}: the block shows {missing!r}, "
                                         f"not printed:\n{step.stdout}")
            ran += 1
        if document.name == "verify.md":
            _the_customer_folder_verifies(folder, tsa.requests)
    assert ran == sum(b.info in SHELL and b.not_run is None for b in blocks(document))


def _the_customer_folder_verifies(folder: Path, requests: list[str]) -> None:
    """What docs/verify.md promises (issue 40): the recipe's certificate is timestamped by the
    authority, and the customer's folder held only the PDF, the CA and the authority's root
    when it verified (then the lab's signed status list)."""
    assert any(r.startswith("POST") for r in requests), requests
    customer = folder / "customer"
    assert sorted(p.name for p in customer.iterdir()) == [
        "ca.pem", "certificate.en.pdf", "index.json", "index.json.p7s", "tsa-root.pem"]
    pdf = (customer / "certificate.en.pdf").read_bytes()
    assert b"/DSS" in pdf and pdf.count(b"/ETSI.RFC3161") >= 1
