"""The import graph holds DESIGN.md's arrows (issue 9): a forbidden import fails here.

Every `import` and `from … import` in certgen/ counts, the ones inside functions too (the
project imports heavy modules lazily, and a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "certgen"

# (who, may not import any of, why)
RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("certgen.render", ("certgen.captures", "certgen.pipeline", "certgen.writer", "certgen.builders",
                        "certgen.bundle", "certgen.fleet", "certgen.commands", "certgen.cli"),
     "render/ reads records and renders in memory: no capture, no bundle, no disk"),
    ("certgen.metrics", ("certgen.record", "certgen.render", "certgen.builders", "certgen.pipeline",
                         "certgen.bundle", "certgen.fleet", "certgen.writer", "certgen.commands",
                         "certgen.cli", "certgen.captures"),
     "the SOP arithmetic knows frame times only"),
    ("certgen.diagnostics", ("certgen.record", "certgen.render", "certgen.builders",
                             "certgen.pipeline", "certgen.bundle", "certgen.fleet",
                             "certgen.writer", "certgen.commands", "certgen.cli",
                             "certgen.captures"),
     "diagnostics know frame times only"),
    ("certgen.captures", ("certgen.record", "certgen.render", "certgen.builders", "certgen.pipeline",
                          "certgen.bundle", "certgen.fleet", "certgen.writer", "certgen.commands",
                          "certgen.cli"),
     "readers turn bytes into Captures and know nothing later in the pipeline"),
)
ENTRY_POINTS = ("certgen.commands", "certgen.cli", "certgen.__main__")
"""Only these may import the CLI: no library module depends on commands/."""
WRITER_USERS = ("certgen.builders", "certgen.commands.fleet")
"""Only builders write outputs (and `fleet export -o`, one file through atomic_write)."""


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> set[str]:
    """Every certgen module `path` imports, at any depth of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # `from certgen import writer` imports the module certgen.writer
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "certgen" or name.startswith("certgen.")}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path) -> list[str]:
    """Every forbidden arrow in the package at `root`, as 'a -> b (why)'."""
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        for target in sorted(imports_of(path, module)):
            for who, banned, why in RULES:
                if _within(module, who) and any(_within(target, b) for b in banned):
                    out.append(f"{module} -> {target} ({why})")
            if not any(_within(module, e) for e in ENTRY_POINTS) and any(
                _within(target, e) for e in ("certgen.commands", "certgen.cli")
            ):
                out.append(f"{module} -> {target} (a library module imports the CLI)")
            if _within(target, "certgen.writer") and not any(
                _within(module, w) for w in WRITER_USERS
            ) and module != "certgen.writer":
                out.append(f"{module} -> {target} (only builders call the writer)")
    return out


def test_the_package_has_no_forbidden_import() -> None:
    assert violations(PACKAGE) == []


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("render/x.py", "def f():\n    from certgen.captures.detect import read_capture\n",
         "certgen.render.x -> certgen.captures.detect"),
        ("render/x.py", "from ..pipeline import make_record\n",
         "certgen.render.x -> certgen.pipeline"),
        ("render/x.py", "from certgen import writer\n", "certgen.render.x -> certgen.writer"),
        ("metrics.py", "import certgen.record\n", "certgen.metrics -> certgen.record"),
        ("diagnostics.py", "from certgen.render.html import render_template\n",
         "certgen.diagnostics -> certgen.render.html"),
        ("fleet.py", "from certgen.commands.fleet import command\n",
         "certgen.fleet -> certgen.commands.fleet"),
        ("docs.py", "from certgen.writer import Writer\n", "certgen.docs -> certgen.writer"),
    ],
)
def test_the_checker_sees_each_kind_of_forbidden_arrow(
    tmp_path: Path, path: str, source: str, expected: str
) -> None:
    """The checker itself: a planted forbidden import (lazy, relative or `from certgen import
    x`) is reported, so the real test cannot pass by seeing nothing."""
    root = tmp_path / "certgen"
    (root / "render").mkdir(parents=True)
    for init in (root / "__init__.py", root / "render" / "__init__.py"):
        init.write_text("")
    (root / path).write_text(source)
    found = violations(root)
    assert any(v.startswith(expected + " ") for v in found), found
