"""record.json, the PDF metadata and `certgen --version --verbose` name the software (issue 16).

The stack: certgen's version and (when CERTGEN_COMMIT states it) commit, Python, WeasyPrint,
pydyf, Pango, HarfBuzz, and digests of the templates, locales, fonts and packaged rules.
"""

from __future__ import annotations

import io
import json
import platform
import re
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from bundlekit import run_cli
from pypdf import PdfReader

from certgen import __version__
from certgen.pipeline import make_record
from certgen.record import dump_record, load_record
from certgen.support.paths import locales_dir, templates_dir
from certgen.support.software import (
    COMMIT_ENV,
    creator_line,
    current_software,
    stack_line,
    tree_digest,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "gold-rx7800xt"
SAMPLE = ROOT / "tests" / "data" / "records" / "sample.json"
VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


@pytest.fixture
def fresh_stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """current_software() is read once a process; these tests change its environment."""
    current_software.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    current_software.cache_clear()


def test_the_stack_is_this_environments() -> None:
    s = current_software()
    assert s.certgen == __version__ == "0.2.0"
    assert s.python == platform.python_version()
    assert s.weasyprint == metadata.version("weasyprint")
    assert s.pydyf == metadata.version("pydyf")
    # Asked of the shared libraries themselves: a version, never "unknown" on a working install.
    assert VERSION.match(s.pango), s.pango
    assert VERSION.match(s.harfbuzz), s.harfbuzz
    assert s.digests.templates == tree_digest(templates_dir(), skip=("fonts",))
    assert s.digests.fonts == tree_digest(templates_dir() / "fonts")
    assert s.digests.locales == tree_digest(locales_dir())
    assert len({s.digests.templates, s.digests.fonts, s.digests.locales, s.digests.rules}) == 4


def test_the_example_record_names_the_stack() -> None:
    """Must show: the renderer stack in record.json of the samples."""
    record = make_record(EXAMPLE)
    assert record.software == current_software()
    data = json.loads(dump_record(record))
    assert list(data)[:7] == ["schema_version", "certificate", "issuer", "rules_version",
                              "certgen_version", "software", "rules"]
    assert list(data["software"]) == ["certgen", "commit", "python", "weasyprint", "pydyf",
                                      "pango", "harfbuzz", "digests"]
    assert data["software"]["commit"] is None
    assert list(data["software"]["digests"]) == ["templates", "locales", "fonts", "rules"]
    assert data["rules"]["file"] == "sop-gpu-001-v1.1.yaml"
    assert re.fullmatch(r"[0-9a-f]{64}", data["rules"]["sha256"])
    # Same environment, same bytes.
    assert dump_record(make_record(EXAMPLE)) == dump_record(record)


def test_the_commit_is_recorded_only_when_stated(fresh_stack: pytest.MonkeyPatch) -> None:
    fresh_stack.delenv(COMMIT_ENV, raising=False)
    assert make_record(EXAMPLE).software is not None
    assert make_record(EXAMPLE).software.commit is None  # type: ignore[union-attr]
    current_software.cache_clear()
    fresh_stack.setenv(COMMIT_ENV, "0123456789abcdef0123456789abcdef01234567")
    software = make_record(EXAMPLE).software
    assert software is not None and software.commit == "0123456789abcdef0123456789abcdef01234567"
    assert ", commit 0123456789abcdef0123456789abcdef01234567 (Python" in creator_line(current_software())


def test_version_verbose_prints_the_same_stack(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["--version"], capsys)
    assert (code, out) == (0, f"certgen, version {__version__}\n")
    for args in (["--version", "--verbose"], ["--verbose", "--version"]):
        code, out, _ = run_cli(args, capsys)
        assert code == 0
        s = current_software()
        assert out.splitlines() == [
            f"certgen {s.certgen}", f"commit (not stated; set {COMMIT_ENV})",
            f"python {s.python}", f"weasyprint {s.weasyprint}", f"pydyf {s.pydyf}",
            f"pango {s.pango}", f"harfbuzz {s.harfbuzz}",
            f"templates sha256:{s.digests.templates}", f"locales sha256:{s.digests.locales}",
            f"fonts sha256:{s.digests.fonts}", f"rules sha256:{s.digests.rules}",
        ]


def test_the_pdf_creator_names_the_records_stack(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"
    code, _, err = run_cli(["build", str(EXAMPLE), "--out", str(tmp_path), "--jobs", "1",
                            "--lang", "en", "--lab", str(lab)], capsys)
    assert code == 0, err
    [folder] = list(tmp_path.iterdir())
    record = load_record((folder / "record.json").read_bytes())
    assert record.software is not None
    info = PdfReader(io.BytesIO((folder / "certificate.en.pdf").read_bytes())).metadata
    assert info is not None
    s = record.software
    assert info["/Creator"] == stack_line(
        certgen=s.certgen, commit=s.commit, python=s.python, weasyprint=s.weasyprint,
        pydyf=s.pydyf, pango=s.pango, harfbuzz=s.harfbuzz) == creator_line(current_software())
    assert info["/Creator"].startswith(f"certgen {__version__} (Python {platform.python_version()}, "
                                       f"WeasyPrint {metadata.version('weasyprint')}, pydyf ")


def test_a_record_of_an_older_certgen_reads_and_writes_back_unchanged() -> None:
    """The software block and rules.file / rules.sha256 are additive: schema_version stays 1
    and a 0.1.0 record (none of these keys) round-trips byte for byte."""
    data = json.loads(SAMPLE.read_bytes())
    del data["software"]
    del data["rules"]["file"], data["rules"]["sha256"]
    data["certgen_version"] = data["audit"]["certgen_version"] = "0.1.0"
    old = (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    record = load_record(old)
    assert record.schema_version == 1 and record.software is None and record.rules.sha256 is None
    assert dump_record(record) == old


def test_tree_digest_follows_names_and_contents_not_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "a.css").write_text("x")
    (tmp_path / "fonts").mkdir()
    (tmp_path / "fonts" / "f.ttf").write_bytes(b"\0")
    first = tree_digest(tmp_path)
    (tmp_path / ".hidden").write_text("editor state")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"\1")
    assert tree_digest(tmp_path) == first
    assert tree_digest(tmp_path, skip=("fonts",)) != first
    (tmp_path / "a.css").write_text("y")
    assert tree_digest(tmp_path) != first
    (tmp_path / "a.css").write_text("x")
    (tmp_path / "a.css").rename(tmp_path / "b.css")
    assert tree_digest(tmp_path) != first


def test_stack_line_reads_as_one_line() -> None:
    assert stack_line(certgen="0.2.0", commit=None, python="3.11.7", weasyprint="70.0",
                      pydyf="0.13.0", pango="1.50.12", harfbuzz="6.0.0") == (
        "certgen 0.2.0 (Python 3.11.7, WeasyPrint 70.0, pydyf 0.13.0, Pango 1.50.12, "
        "HarfBuzz 6.0.0)")


def test_one_version_in_pyproject_the_package_and_the_changelog() -> None:
    """Semantic versions: pyproject.toml and certgen.__version__ agree, and CHANGELOG.md has
    a section for the version (docs/reproducibility.md, Releases)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {__version__} — " in changelog
