"""The built wheel carries templates/ and locales/ and works from a fresh virtual environment.

Builds the wheel from a copy of the source (the tree is never written to), installs it with
--no-deps into a fresh venv that sees the project's dependencies through a .pth line (no
download), then runs `certgen metrics` on a real capture and `certgen build` on an example
bundle from a folder outside the checkout.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from realdata import REAL

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("certgen", "templates", "locales", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_data"))
        elif path.exists():
            shutil.copy2(path, src / name)
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist),
                    str(src)], check=True, capture_output=True, cwd=work)
    wheel = next(dist.glob("certgen-*.whl"))
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site_dir = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    # The project's dependencies, without its editable certgen (a plain path line does not run
    # the .pth hooks of that folder).
    (site_dir / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                    "--target", str(site_dir), str(wheel)], check=True, capture_output=True)
    return env_dir


def _run(env_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(env_dir / "bin" / "python"), "-m", "certgen", *args],
                          capture_output=True, text=True, cwd=cwd)


def test_the_wheel_carries_templates_and_locales(installed: Path, tmp_path: Path) -> None:
    probe = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "import certgen, certgen.paths as p; print(certgen.__file__); "
         "print(p.templates_dir()); print(p.locales_dir())"],
        capture_output=True, text=True, cwd=tmp_path, check=True).stdout.split()
    assert not probe[0].startswith(str(ROOT / "certgen"))
    assert probe[1].endswith("certgen/_data/templates") and probe[2].endswith("certgen/_data/locales")
    assert (Path(probe[1]) / "certificate.html.j2").is_file()
    assert (Path(probe[1]) / "fonts" / "DejaVuSans.ttf").is_file()
    assert (Path(probe[2]) / "ru" / "LC_MESSAGES" / "certgen.po").is_file()


def test_metrics_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    capture = shutil.copy2(REAL / "PresentMonTestOutputFilename.csv", tmp_path)
    done = _run(installed, "metrics", str(capture), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [figures] = json.loads(done.stdout)
    assert figures["avg_fps"] is not None


def test_certificate_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    examples = sorted(p for p in (ROOT / "examples").iterdir() if (p / "card.yaml").is_file())
    bundle = shutil.copytree(examples[0], tmp_path / "bundle")
    done = _run(installed, "build", str(bundle), "--out", str(tmp_path / "out"), "--lang", "ru",
                "--jobs", "1", "--draft", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [folder] = list((tmp_path / "out").iterdir())
    html = (folder / "certificate.ru.html").read_text(encoding="utf-8")
    assert "Сертификат равномерности кадров" in html
    assert (folder / "certificate.ru.pdf").read_bytes().startswith(b"%PDF-1.7")
