"""The command line: the only place that prints, shows progress and picks exit codes.

Commands live in certgen/commands/<name>.py and are imported only when called, so
`certgen metrics` never pays for WeasyPrint or scipy (see bench/).

Exit codes:
- 0 success;
- 1 refused input or failed gate (a CertgenError: one line on stderr, no traceback), or a
  prompt aborted;
- 2 bad usage (click's own handling);
- 70 internal error (EX_SOFTWARE from sysexits.h): any other exception is a bug in certgen, not
  in the input; its full traceback is printed, then one line asking to report it;
- 130 interrupted (Ctrl-C; 128 + SIGINT): one line, no traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from typing import NoReturn

import click

from certgen import __version__
from certgen.errors import CertgenError
from certgen.support.software import current_software, version_lines

# name -> (module, short help). Order is the order `certgen --help` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "metrics": ("certgen.commands.metrics", "SOP v1.1 figures and diagnostics per capture."),
    "check": ("certgen.commands.check", "Validate a bundle and print its grade with reasons."),
    "build": ("certgen.commands.build", "Render certificates (record.json, HTML, PDF)."),
    "compare": ("certgen.commands.compare", "Before/after report with a noise floor."),
    "fleet": ("certgen.commands.fleet", "The fleet store: add, import, export, cohorts."),
    "schema": ("certgen.commands.schema", "Print the JSON Schema of card.yaml (--record: of record.json)."),
    "verify": ("certgen.commands.verify", "Check a certificate PDF: signature, record, figures."),
    "registry": ("certgen.commands.registry",
                 "Publish the verification registry of built certificates."),
    "calibrate": ("certgen.commands.calibrate",
                  "The fleet calibration review of the SOP's thresholds."),
    "site": ("certgen.commands.site", "Build the publishable static site."),
    "demo": ("certgen.commands.demo", "Build the examples into a folder (used by make demo)."),
    "errata": ("certgen.commands.errata", "List the known defects of the capture tools."),
}


class LazyGroup(click.Group):
    """A group whose sub-commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name, (mod, _) in COMMANDS.items() if _available(mod)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not _available(entry[0]):
            return None
        module = importlib.import_module(entry[0])
        command: click.Command = module.command
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `--version --verbose` in either order: --version is eager and handled while parsing,
        # so whether --verbose is among the group's own options is noted first.
        leading = []
        for arg in args:
            if not arg.startswith("-"):
                break
            leading.append(arg)
        ctx.meta[_VERBOSE_KEY] = "--verbose" in leading
        return super().parse_args(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


_VERBOSE_KEY = "certgen.version_verbose"


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    if ctx.meta.get(_VERBOSE_KEY):
        for line in version_lines(current_software()):
            click.echo(line)
    else:
        click.echo(f"certgen, version {__version__}")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version,
              help="Show the version and exit (with --verbose: the whole software stack, as "
                   "record.json's `software` names it).")
@click.option("--verbose", is_flag=True, expose_value=False, is_eager=True,
              help="With --version: also print the commit, Python, WeasyPrint, pydyf, Pango, "
                   "HarfBuzz and the data digests.")
def cli() -> None:
    """certgen: frame-pacing certificates and reports (SOP-GPU-001 v1.1)."""


EXIT_REFUSED = 1
"""A CertgenError: the input is refused or a gate failed (one line on stderr)."""
EXIT_INTERNAL_ERROR = 70
"""Any other exception: a bug in certgen (EX_SOFTWARE from sysexits.h), traceback kept."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: 128 + SIGINT, as shells report a process killed by it."""


def main(argv: list[str] | None = None) -> int | None:
    """Run the CLI and pick the exit code (see the module docstring).

    A CertgenError is the user's to fix: one stderr line, exit 1. Any other exception is a bug:
    its traceback, then one line saying so, exit 70.
    """

    # Set but blank means unset (certgen.support.builddate reads it so); removed before any library
    # reads it: numpy.f2py, imported on the way to the PDFs, calls int() on it at import time.
    if "SOURCE_DATE_EPOCH" in os.environ and not os.environ["SOURCE_DATE_EPOCH"].strip():
        del os.environ["SOURCE_DATE_EPOCH"]
    try:
        # Outside standalone mode click returns the command's value (None), or the exit code
        # of a click.exceptions.Exit the command raised (metrics, check).
        code: int | None = cli.main(args=argv, prog_name="certgen", standalone_mode=False)
        return code
    except click.exceptions.Abort as exc:
        # click turns Ctrl-C (and EOF at a prompt) into Abort; the cause tells them apart.
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            _interrupted()
        click.echo("certgen: aborted", err=True)
        sys.exit(EXIT_REFUSED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except CertgenError as exc:
        click.echo(f"certgen: {exc}", err=True)
        sys.exit(EXIT_REFUSED)
    except BrokenPipeError:
        sys.exit(EXIT_REFUSED)
    except KeyboardInterrupt:
        _interrupted()
    except Exception as exc:
        traceback.print_exception(exc, file=sys.stderr)
        click.echo(
            f"certgen: internal error (a bug in certgen, not in your input): "
            f"{type(exc).__name__}: {exc}; please report it with the traceback above",
            err=True,
        )
        sys.exit(EXIT_INTERNAL_ERROR)


def _interrupted() -> NoReturn:
    click.echo("certgen: interrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)
