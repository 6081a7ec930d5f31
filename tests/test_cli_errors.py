"""Exit codes: a CertgenError is one line and exit 1; any other exception is a bug (traceback,
one line saying so, exit 70); Ctrl-C is one line and exit 130."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bundlekit import run_cli

import certgen.commands.schema
from certgen.errors import BundleError

ROOT = Path(__file__).resolve().parent.parent
BUG_LINE = ("certgen: internal error (a bug in certgen, not in your input): RuntimeError: "
            "schema exploded; please report it with the traceback above")


def _schema_raises(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """`certgen schema` raises `error` from inside the library call it makes."""
    def card_json_schema() -> object:
        raise error

    monkeypatch.setattr(certgen.commands.schema, "card_json_schema", card_json_schema)


def test_a_bug_exits_70_after_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _schema_raises(monkeypatch, RuntimeError("schema exploded"))
    code, stdout, stderr = run_cli(["schema"], capsys)
    assert (code, stdout) == (70, "")
    lines = stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "in card_json_schema" in stderr
    assert lines[-2:] == ["RuntimeError: schema exploded", BUG_LINE]


def test_a_certgen_error_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _schema_raises(monkeypatch, BundleError("expected a list", file="card.yaml", field="runs"))
    assert run_cli(["schema"], capsys) == (1, "", "certgen: card.yaml: runs: expected a list\n")


def test_ctrl_c_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _schema_raises(monkeypatch, KeyboardInterrupt())
    code, stdout, stderr = run_cli(["schema"], capsys)
    # click writes a newline first, so the line does not follow the terminal's "^C".
    assert (code, stdout, stderr.strip()) == (130, "", "certgen: interrupted")
    assert "Traceback" not in stderr


def test_a_bug_in_a_real_process_exits_70(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        import certgen.commands.schema

        def card_json_schema():
            raise RuntimeError("schema exploded")

        certgen.commands.schema.card_json_schema = card_json_schema
        from certgen.cli import main
        sys.exit(main(["schema"]))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, cwd=tmp_path, check=False)
    assert (result.returncode, result.stdout) == (70, "")
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert result.stderr.splitlines()[-1] == BUG_LINE
