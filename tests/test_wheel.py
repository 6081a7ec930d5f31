"""The built wheel carries every data file and works from a fresh virtual environment.

Builds the sdist and, from it, the wheel (as `make dist` does) from a copy of the source (the
tree is never written to), checks both carry the templates, locales, fonts and rules files,
installs the wheel with --no-deps into a fresh venv that sees the project's dependencies
through a .pth line (no download), then runs `certgen metrics` on a real capture and `certgen
build` on an example bundle from a folder outside the checkout: the certificate it builds is
byte-identical to the checkout's (same SOURCE_DATE_EPOCH). Every process is started without
PYTHONPATH, so a PYTHONPATH pointing at a checkout cannot stand in for the installed wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from realdata import REAL

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("certgen", "templates", "locales", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md",
           "requirements.lock", "CHANGELOG.md")
EPOCH = "1764374400"  # 2025-11-29: any fixed value; both builds get the same one


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without PYTHONPATH (it would shadow the wheel with a checkout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env


def _data_files() -> list[str]:
    """Every data file a wheel must carry, as paths inside certgen/: templates (with fonts),
    locales, the SOP rules files and py.typed."""
    out = []
    for folder in ("templates", "locales"):
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT)
            if path.is_file() and "__pycache__" not in rel.parts and not path.name.startswith("."):
                out.append(f"_data/{rel.as_posix()}")
    out += [f"sop/{p.name}" for p in sorted((ROOT / "certgen" / "sop").glob("*.yaml"))]
    return out + ["py.typed"]


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
    # As `make dist`: the sdist, then the wheel built from the sdist.
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
                   check=True, capture_output=True, cwd=work, env=_clean_env())
    wheel = next(dist.glob("certgen-*.whl"))
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site_dir = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, env=_clean_env()).stdout.strip())
    # The project's dependencies, without its editable certgen (a plain path line does not run
    # the .pth hooks of that folder).
    (site_dir / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                    "--target", str(site_dir), str(wheel)], check=True, capture_output=True,
                   env=_clean_env())
    return env_dir


def _run(env_dir: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(env_dir / "bin" / "python"), "-m", "certgen", *args],
                          capture_output=True, text=True, cwd=cwd, env=_clean_env(**env))


def test_the_sdist_and_the_wheel_carry_every_data_file(installed: Path) -> None:
    dist = installed.parent / "dist"
    [wheel] = dist.glob("certgen-*.whl")
    [sdist] = dist.glob("certgen-*.tar.gz")
    assert wheel.name == "certgen-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = {name.removeprefix("certgen/") for name in zf.namelist()}
    missing = [name for name in _data_files() if name not in in_wheel]
    assert not missing, f"the wheel lacks {missing}"
    with tarfile.open(sdist) as tf:
        in_sdist = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    wanted = [name.removeprefix("_data/") if name.startswith("_data/") else f"certgen/{name}"
              for name in _data_files()] + ["requirements.lock", "CHANGELOG.md", "setup.py"]
    missing = [name for name in wanted if name not in in_sdist]
    assert not missing, f"the sdist lacks {missing}"


def test_the_wheel_carries_templates_and_locales(installed: Path, tmp_path: Path) -> None:
    probe = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "import certgen, certgen.support.paths as p; print(certgen.__file__); "
         "print(p.templates_dir()); print(p.locales_dir())"],
        capture_output=True, text=True, cwd=tmp_path, check=True, env=_clean_env()).stdout.split()
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


def test_the_wheel_builds_the_checkouts_certificate_byte_for_byte(installed: Path,
                                                                   tmp_path: Path) -> None:
    """Same bundle, same SOURCE_DATE_EPOCH: the installed wheel and the source checkout write
    the same record.json, HTML and PDF bytes in every language of the card (so the data the
    wheel carries, and the digests of it in record.json, are the checkout's)."""
    example = ROOT / "examples" / "gold-rx7800xt"
    outputs = {}
    for name in ("wheel", "checkout"):
        bundle = shutil.copytree(example, tmp_path / name / "bundle")
        out = tmp_path / name / "out"
        args = ("build", str(bundle), "--out", str(out), "--jobs", "1",
                "--lab", str(ROOT / "examples" / "lab.yaml"))
        if name == "wheel":
            done = _run(installed, *args, cwd=tmp_path / name, SOURCE_DATE_EPOCH=EPOCH)
        else:
            done = subprocess.run([sys.executable, "-m", "certgen", *args], capture_output=True,
                                  text=True, cwd=tmp_path / name,
                                  env=_clean_env(SOURCE_DATE_EPOCH=EPOCH, PYTHONPATH=str(ROOT)))
        assert done.returncode == 0, done.stderr
        [folder] = list(out.iterdir())
        outputs[name] = {p.relative_to(folder).as_posix(): p.read_bytes()
                         for p in sorted(folder.rglob("*")) if p.is_file()}
    wheel, checkout = outputs["wheel"], outputs["checkout"]
    assert sorted(wheel) == sorted(checkout)
    assert {"record.json", "certificate.en.pdf", "certificate.en.html"} <= set(wheel)
    assert [name for name in wheel if wheel[name] != checkout[name]] == []
    software = json.loads(wheel["record.json"])["software"]
    assert software["certgen"] == "0.2.0" and software["commit"] is None


def test_the_registry_publishes_this_certgen_s_own_wheel(installed: Path, tmp_path: Path) -> None:
    """`certgen registry --wheel` takes the wheel `make dist` built (it is this certgen, file for
    file), publishes it under software/ with SHA256SUMS, and every page tells the customer how to
    check and install it; a wheel with one file changed is refused naming the file, and so is
    the same wheel once the running certgen's own files differ from it."""
    import hashlib

    from certgen.builders.certificate import build_bundle
    from certgen.builders.registry import build_registry
    from certgen.distribution import check_wheel, load_wheel
    from certgen.errors import CertgenError
    from certgen.inputs.lab import load_lab

    [wheel] = (installed.parent / "dist").glob("certgen-*.whl")
    published = load_wheel(str(wheel))
    assert published.sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()
    records = tmp_path / "out"
    build_bundle(ROOT / "examples" / "gold-rx7800xt", records, languages=["en"],
                 lab=load_lab(ROOT / "examples" / "lab.yaml"))
    import datetime as dt

    registry = tmp_path / "verify"
    written = build_registry(records, registry, as_of=dt.date(2026, 12, 1), software=published)
    assert f"software/{wheel.name}" in written and "software/SHA256SUMS" in written
    assert (registry / "software" / wheel.name).read_bytes() == wheel.read_bytes()
    sums = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=registry / "software",
                          capture_output=True, text=True)
    assert sums.returncode == 0 and f"{wheel.name}: OK" in sums.stdout
    page = (registry / "SAMPLE-GOLD-0002" / "en" / "index.html").read_text("utf-8")
    assert f'<a href="../../software/{wheel.name}">{wheel.name}</a>' in page
    assert published.sha256 in page and f'pip install "./{wheel.name}[sign]"' in page

    import base64

    for fix_record, reason in ((False, "does not match its RECORD"),
                               (True, "differs from this certgen's")):
        changed = tmp_path / str(fix_record) / wheel.name
        changed.parent.mkdir()
        with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(changed, "w") as dst:
            # The module holding verify's verdict words (certgen/verify/outcome.py since verify
            # was split); the patch must change it, or nothing would be tested.
            original = src.read("certgen/verify/outcome.py")
            patched = original.replace(b"VERIFIED", b"VERIFIED!", 1)
            assert patched != original
            digest = base64.urlsafe_b64encode(hashlib.sha256(patched).digest()).rstrip(b"=")
            for item in src.infolist():
                data = src.read(item)
                if item.filename == "certgen/verify/outcome.py":
                    data = patched
                elif item.filename.endswith(".dist-info/RECORD") and fix_record:
                    data = b"\n".join(
                        b"certgen/verify/outcome.py,sha256=" + digest + b"," + str(len(patched)).encode()
                        if line.startswith(b"certgen/verify/outcome.py,") else line
                        for line in data.split(b"\n"))
                dst.writestr(item, data)
        with pytest.raises(CertgenError) as refused:
            load_wheel(str(changed))
        assert str(refused.value) == f"{changed}: the wheel's certgen/verify/outcome.py {reason}"
    with pytest.raises(CertgenError) as other:
        check_wheel(wheel.read_bytes(), name="certgen-9.9.9-py3-none-any.whl", source="x.whl")
    assert "a wheel of certgen 9.9.9; this is certgen 0.2.0" in str(other.value)


def test_the_registry_s_software_folder_is_the_distribution_s() -> None:
    from certgen.registry import SOFTWARE_FOLDER
    from certgen.render import registry

    assert registry.SOFTWARE_FOLDER == SOFTWARE_FOLDER
