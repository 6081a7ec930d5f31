"""Issue 39, item 6: a before/after compares one configuration, and no document of any command
prints a path of the machine it ran on.

`compare` refuses captures that record two games (the real OCAT MetroExodus.exe capture against
the real CapFrameX re2.exe one) unless `--changed game` states it. Every example is then built
from a deep temporary folder, given by absolute paths (a lab's worst case): certificates,
registry, before/after reports (two files, one file with both sides, a series), the calibration
review and the whole site; every file written (HTML, JSON, CSV, SVG, the PDFs' text by
pdftotext and their raw bytes) is searched for that folder and for the source checkout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from bundlekit import run_cli
from realdata import REAL

OCAT = REAL / "OCAT-MetroExodus.exe-2019-02-20T101522.csv"
CAPFRAMEX = REAL / "CapFrameXFileWithHeader.csv"
REPO = Path(__file__).resolve().parent.parent
MARK = "deep-b39-folder"
"""A folder name found nowhere else: any output naming it names the machine's path."""


def test_two_games_are_refused_unless_the_change_is_stated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_cli(["compare", str(OCAT), str(CAPFRAMEX), "--out", str(out)],
                                capsys)
    assert (code, stdout) == (1, "")
    assert err == (
        "certgen: the captures record different games: before MetroExodus.exe "
        f"({OCAT.name}), after re2.exe ({CAPFRAMEX.name}); a before/after compares one "
        "configuration: if that is the change, state it with --changed game (and say why with "
        "--description)\n")
    assert not out.exists()
    code, _, err = run_cli(["compare", str(OCAT), str(CAPFRAMEX), "--out", str(out), "--lang",
                            "ru", "--changed", "game", "--description", "Two games, on purpose"],
                           capsys)
    assert (code, err) == (0, "")
    html = (out / "report.ru.html").read_text(encoding="utf-8")
    assert '<dt>Заявленное изменение</dt><dd class="changed">игра</dd>' in html
    assert str(REAL) not in html  # named relative to their common folder
    assert f"До: {OCAT.name}; После: {CAPFRAMEX.name}" in html


def test_each_side_is_one_configuration_and_the_same_game_passes(tmp_path: Path) -> None:
    from certgen.builders.report import report_record
    from certgen.errors import CompareError

    same = report_record([REAL / "test_case_5_v1.csv", REAL / "test_case_5_v2.csv"])
    assert same.compared.changed == () and same.compared.games == ("PresentBench.exe",)
    with pytest.raises(CompareError) as info:
        report_record([REAL / "PresentMon-2.5_test_case_1.csv", REAL / "test_case_5.csv"])
    assert "record different games: before Presenter.exe" in str(info.value)
    stated = report_record([REAL / "PresentMon-2.5_test_case_1.csv", REAL / "test_case_5.csv"],
                           changed=["game", "resolution"])
    assert stated.compared.changed == ("game",)  # only what the captures bear out


def _text_of(path: Path) -> str:
    if path.suffix == ".pdf":
        tool = shutil.which("pdftotext")
        if tool is None:
            pytest.fail("pdftotext (Debian poppler-utils) is missing: `make test` installs it")
        text = subprocess.run([tool, "-q", str(path), "-"], check=True, capture_output=True,
                              text=True).stdout
        # A path broken across lines still shows its folder name; the raw bytes hold the
        # metadata and attachments pdftotext does not print.
        return text + path.read_bytes().decode("latin-1")
    return path.read_bytes().decode("utf-8", errors="replace")


def _leaks(folder: Path, *paths: Path) -> list[str]:
    """Every file under `folder` that names one of `paths` (or MARK), with what it names."""
    found = []
    files = [p for p in sorted(folder.rglob("*")) if p.is_file()]
    assert files, folder
    for path in files:
        text = _text_of(path)
        for named in (MARK, *map(str, paths)):
            if named in text:
                found.append(f"{path.relative_to(folder)}: {named}")
    return found


@pytest.mark.slow
def test_no_document_prints_a_path_of_the_machine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "lab-machine" / "users" / "operator" / "projects" / "2026" / MARK / "runs"
    shutil.copytree(REPO / "examples", deep / "examples")
    ex = deep / "examples"
    out = deep / "out"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # every path below is given absolute
    # Undated, as the session's sample site is built: its renders are then the render cache's
    # (tests/rendercache.py keys on the HTML and every argument, so a path that reached a
    # document would still make a render of its own, and be found below).
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)

    def cli(*args: object) -> None:
        code, _, err = run_cli([str(a) for a in args], capsys)
        assert code == 0, err

    fleet = deep / "fleet.sqlite"
    cli("fleet", "import", "--fleet", fleet, ex / "fleet.jsonl")
    cli("build", ex / "gold-rx7800xt", ex / "silver-gtx1660s", ex / "platinum-rtx4070s",
        "--out", out / "certificates", "--lab", ex / "lab.yaml", "--fleet", fleet,
        "--jobs", "1", "--lang", "en")
    cli("registry", out / "certificates", "--out", out / "registry", "--revocations",
        ex / "revocations.yaml", "--as-of", "2026-12-01")
    cli("compare", ex / "compare/change/before.json", ex / "compare/change/after.json",
        "--out", out / "pair", "--lang", "en,ru,pt", "--description", "Driver update")
    cli("compare", ex / "compare/inside-floor/both.csv", "--out", out / "one-file")
    cli("compare", "--series", ex / "compare/series/series.yaml", "--out", out / "series")
    calibration_fleet = deep / "calibration.sqlite"
    cli("fleet", "import", "--fleet", calibration_fleet, ex / "calibration/fleet.jsonl")
    cli("calibrate", "--fleet", calibration_fleet, "--out", out / "calibration", "--rules",
        ex / "calibration/sop-gpu-001-v1.2-draft.yaml")
    cli("site", "--out", out / "site", "--examples", ex)
    assert (out / "pair/report.pt.pdf").is_file() and (out / "site/index.html").is_file()
    assert _leaks(out, deep, tmp_path, REPO) == []
