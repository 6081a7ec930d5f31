"""What `check` calls issuable builds (issue 39, item 1): the regressions, the internal-error exit
of a template that does not render, and `check` issuable ⇔ `build` exit 0 on every example and
every real capture in ../shared/captures/real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from bundlekit import run_cli
from issuablekit import SAMPLE_LAB, check_and_build, html_only, real_card, recorded_of
from realdata import REAL

import certgen.render.certificate
from certgen.render.html import render_template

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("gold-rx7800xt", "platinum-rtx4070s", "silver-gtx1660s")

FIXED_144 = {"refresh_hz": 144, "vrr": "none"}
VRR_48_165 = {"refresh_hz": 165, "vrr": {"min_hz": 48, "max_hz": 165}, "presentation": "fullscreen"}


def _real_bundle(root: Path, names: list[str], **card: object) -> Path:
    (root / "captures").mkdir(parents=True)
    for name in names:
        shutil.copyfile(REAL / name, root / "captures" / name)
    recorded = recorded_of(REAL / names[0])
    data = real_card(names, recorded=recorded, **card)  # type: ignore[arg-type]
    (root / "card.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                                    encoding="utf-8")
    return root


@pytest.mark.parametrize("timing", [FIXED_144, VRR_48_165], ids=["fixed", "vrr"])
@pytest.mark.parametrize("name", [
    "OCAT-MetroExodus.exe-2019-02-20T101522.csv",
    "CapFrameXFileWithHeader.csv",
    "PresentMon-1.5_trivflip.csv",
])
def test_display_timing_over_captures_without_busy_columns_builds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    name: str, timing: dict[str, object],
) -> None:
    """The reported bug: display_timing declared over OCAT / CapFrameX CSV / PresentMon 1.x
    captures (none has CPU or GPU busy columns) made every build exit 1 with
    `templates/certificate.html.j2: No first item, sequence was empty.`, issuable or not."""
    html_only(monkeypatch)
    bundle = _real_bundle(tmp_path / "b", [name], display_timing=timing)
    code, _out, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--draft",
                               "--lab", str(SAMPLE_LAB)], capsys)
    assert code == 0, err
    html = (tmp_path / "out" / "LAB-2026-0001" / "certificate.en.html").read_text("utf-8")
    assert "Refresh cadence and hitch causes" in html
    # The hitch-causes sentence needs a ledger; with no capture holding one it is left out.
    assert "Each stutter event is set against" not in html


def test_a_template_that_does_not_render_is_an_internal_error_exit_70(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A template error is certgen's bug, never the input's: traceback, the internal-error line,
    exit 70 (it was exit 1 and one line naming a template the lab cannot change)."""
    html_only(monkeypatch)

    def broken(name: str, context: dict[str, object], lang: str) -> str:
        # The real template, given a context without `runs`: StrictUndefined stops it.
        return render_template(name, {k: v for k, v in context.items() if k != "runs"}, lang)

    monkeypatch.setattr(certgen.render.certificate, "render_template", broken)
    bundle = _real_bundle(tmp_path / "b", ["OCAT-MetroExodus.exe-2019-02-20T101522.csv"])
    code, _out, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--draft",
                               "--lab", str(SAMPLE_LAB)], capsys)
    assert code == 70, err
    assert "Traceback (most recent call last):" in err
    assert err.splitlines()[-1] == (
        "certgen: internal error (a bug in certgen, not in your input): InternalError: "
        "templates/certificate.html.j2: 'runs' is undefined; please report it with the "
        "traceback above")
    assert not (tmp_path / "out" / "LAB-2026-0001").exists()


@pytest.mark.parametrize("example", EXAMPLES)
def test_check_issuable_iff_build_exits_0_on_every_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    example: str,
) -> None:
    html_only(monkeypatch)
    (checked, _, check_err), (built, _, build_err) = check_and_build(
        ROOT / "examples" / example, tmp_path / "out", capsys)
    assert checked in (0, 1), check_err
    assert built in (0, 1), build_err
    assert (checked == 0) == (built == 0), (check_err, build_err)
    assert checked == 0, check_err  # the samples are issuable under the sample lab


REAL_FILES = sorted(p.name for p in REAL.iterdir() if p.suffix in (".csv", ".json", ".jsonl",
                                                                   ".txt", ".log")
                    and p.name not in ("LICENSES.md", "SOURCES.md"))


@pytest.mark.parametrize("name", REAL_FILES)
@pytest.mark.parametrize("timing", [None, FIXED_144], ids=["no-timing", "fixed"])
def test_check_issuable_iff_build_exits_0_on_every_real_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    name: str, timing: dict[str, object] | None,
) -> None:
    """Every real capture in ../shared, as a new lab's one-run bundle: `check` issuable exactly
    when `build` exits 0; a refusal is exit 1 with the same reasons, never a traceback."""
    html_only(monkeypatch)
    bundle = _real_bundle(tmp_path / "b", [name], display_timing=timing)
    (checked, _, check_err), (built, _, build_err) = check_and_build(
        bundle, tmp_path / "out", capsys)
    assert "Traceback" not in check_err + build_err, (check_err, build_err)
    assert checked in (0, 1) and built in (0, 1), (check_err, build_err)
    assert (checked == 0) == (built == 0), (check_err, build_err)
    if checked:
        # The build refuses for the reasons check printed.
        reasons = [line for line in check_err.splitlines() if line.startswith("certgen: ")]
        assert reasons and all(r.removeprefix("certgen: ") in build_err for r in reasons), (
            check_err, build_err)
