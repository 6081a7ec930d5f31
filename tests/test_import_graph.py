"""The import graph holds the architecture map (docs/architecture.toml; issues 9 and 22).

Every `import` and `from … import` in certgen/ counts, the ones inside functions too (a lazy
import is still a dependency). An arrow the map does not allow, a forbidden one, or an import
cycle between modules fails here; so does a chain of imports, however long, that breaks one of
the map's `never_reaches` promises (render never reaches a capture reader, say, even through
modules each allowed to import the next). The map itself must list its parts bottom-up. An import inside
a function is allowed only for the heavy libraries the map's `[lazy]` table names: certgen's own
modules are imported at the top of a file, so a hidden dependency cannot hide a cycle.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "certgen"
MAP_FILE = ROOT / "docs" / "architecture.toml"


@dataclass(frozen=True)
class Part:
    name: str
    paths: tuple[str, ...]
    may_import: frozenset[str]


@dataclass(frozen=True)
class Forbidden:
    source: str
    targets: tuple[str, ...]
    exempt: frozenset[str]
    why: str


@dataclass(frozen=True)
class NeverReaches:
    """No chain of imports leads from a module of `source` to one of a part in `targets`."""

    source: str
    targets: tuple[str, ...]
    why: str

    def covers(self, target: str) -> bool:
        return target != self.source and ("*" in self.targets or target in self.targets)


@dataclass(frozen=True)
class ArchitectureMap:
    parts: tuple[Part, ...]
    forbidden: tuple[Forbidden, ...]
    lazy: frozenset[str]
    never_reaches: tuple[NeverReaches, ...] = ()

    def part_of(self, relative: str) -> Part | None:
        """The part whose longest path holds `relative` (a path under the repository root)."""
        best: tuple[int, Part] | None = None
        for part in self.parts:
            for path in part.paths:
                if relative == path or relative.startswith(path.rstrip("/") + "/"):
                    if best is None or len(path) > best[0]:
                        best = (len(path), part)
        return None if best is None else best[1]

    def forbids(self, source: str, target: str) -> Forbidden | None:
        for rule in self.forbidden:
            if rule.source not in ("*", source) or source in rule.exempt:
                continue
            if "*" in rule.targets or target in rule.targets:
                return rule
        return None


def load_map(path: Path = MAP_FILE) -> ArchitectureMap:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    parts = tuple(Part(p["name"], tuple(p["paths"]), frozenset(p["may_import"]))
                  for p in data["part"])
    forbidden = tuple(Forbidden(f["from"], tuple(f["to"]), frozenset(f.get("except", ())),
                                f["why"]) for f in data["forbidden"])
    lazy = frozenset(entry["name"] for entry in data["lazy"]["modules"])
    never = tuple(NeverReaches(n["from"], tuple(n["to"]), n["why"])
                  for n in data.get("never_reaches", ()))
    return ArchitectureMap(parts, forbidden, lazy, never)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> set[str]:
    """Every certgen name `path` imports, at any depth of the file."""
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


def imports_in_functions(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, module) of every import inside a function of `path`, relative ones made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                found.extend((node.lineno, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                found.append((node.lineno, base))
    return sorted(set(found))


def late_imports(root: Path, arch: ArchitectureMap | None = None) -> list[str]:
    """Imports inside functions of modules the map's `[lazy]` table does not name."""
    arch = arch or load_map()
    out = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        for line, name in imports_in_functions(path, module):
            if name.partition(".")[0] not in arch.lazy:
                out.append(f"{path.relative_to(root.parent)}:{line}: imports {name} inside a "
                           "function; import it at the top of the file (only the map's [lazy] "
                           "libraries may wait)")
    return out


@cache
def module_graph(root: Path) -> tuple[dict[str, Path], dict[str, set[str]]]:
    """The package's modules (name -> file) and, for each, the modules it imports (read once
    per root: the map test and the cycle test read the same package)."""
    modules = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for target in imports_of(path, name):
            while target and target not in modules:  # certgen.x.y.Name -> certgen.x.y
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        graph[name] = targets
    return modules, graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles (strongly connected components of more than one module), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w == "certgen":  # the root package holds the version only
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _mapped_graph(root: Path, arch: ArchitectureMap
                  ) -> tuple[dict[str, Path], dict[str, set[str]], Callable[[str], Part | None]]:
    """The package's modules, its import graph, and the part of the map each module is in."""
    modules, graph = module_graph(root)

    def part(name: str) -> Part | None:
        return arch.part_of(modules[name].relative_to(root.parent).as_posix())

    return modules, graph, part


def violations(root: Path, arch: ArchitectureMap | None = None) -> list[str]:
    """Every import of the package at `root` the map does not allow, as 'a -> b (why)'."""
    arch = arch or load_map()
    _, graph, part = _mapped_graph(root, arch)
    out: list[str] = []
    for name in sorted(graph):
        source = part(name)
        if source is None:
            out.append(f"{name} is in no part of the map")
            continue
        for target_name in sorted(graph[name]):
            target = part(target_name)
            if target is None or target.name == source.name:
                continue
            rule = arch.forbids(source.name, target.name)
            if rule is not None:
                out.append(f"{name} -> {target_name} ({rule.why})")
            elif target.name not in source.may_import:
                out.append(f"{name} -> {target_name} (the map does not let {source.name} "
                           f"import {target.name})")
    out += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    out += broken_promises(root, arch)
    return out


def _packages_of(name: str, modules: dict[str, Path]) -> list[str]:
    """The packages Python runs before `name` (certgen.a.b.c: certgen.a, certgen.a.b), when
    they are modules of the package; the root's `certgen/__init__.py` holds the version only."""
    pieces = name.split(".")
    return [p for p in (".".join(pieces[:i]) for i in range(2, len(pieces))) if p in modules]


def chains(graph: dict[str, set[str]], modules: dict[str, Path], start: str) -> dict[str, list[str]]:
    """Every module importing `start` loads, each with the shortest chain of imports that leads
    there (breadth first, in name order: the same chain every run). Python runs a module's
    packages' `__init__.py` first: they are reached by the same import, one step as it is."""
    paths = {start: [start]}
    queue = [start]
    loaded = set(_packages_of(start, modules))  # run before `start`, not reached from it
    for current in queue:
        for target in sorted(graph.get(current, ())):
            for step in [target, *_packages_of(target, modules)]:
                if step not in paths and step not in loaded:
                    paths[step] = [*paths[current], step]
                    queue.append(step)
    return paths


def broken_promises(root: Path, arch: ArchitectureMap | None = None) -> list[str]:
    """Every chain of imports that breaks a `never_reaches` promise, as 'source never reaches
    target: a -> b -> c (why)', the shortest chain per module and part reached."""
    arch = arch or load_map()
    modules, graph, part = _mapped_graph(root, arch)
    out: list[str] = []
    for name in sorted(graph):
        source = part(name)
        rules = [r for r in arch.never_reaches if source is not None and r.source == source.name]
        if not rules:
            continue
        reached: dict[str, list[str]] = {}
        # the shortest chain to each part, to a module named in an import before a package
        # run on the way (certgen.fleet.store rather than certgen/fleet/__init__.py)
        for module, chain in sorted(chains(graph, modules, name).items(),
                                    key=lambda item: (len(item[1]),
                                                      modules[item[0]].name == "__init__.py",
                                                      item[0])):
            target = part(module)
            if target is not None and target.name != "package":
                reached.setdefault(target.name, chain)
        for rule in rules:
            for target_name, chain in sorted(reached.items()):
                if rule.covers(target_name):
                    out.append(f"{rule.source} never reaches {target_name}: "
                               f"{' -> '.join(chain)} ({rule.why})")
    return out


# --------------------------------------------------------------------------- the package


def test_the_package_follows_the_map() -> None:
    assert violations(PACKAGE) == []


def test_only_heavy_libraries_are_imported_inside_functions() -> None:
    assert late_imports(PACKAGE) == []


def test_the_checker_sees_a_planted_late_import(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"builders/a.py": "import os\n\ndef f():\n    import weasyprint\n"
                                               "    from certgen.writer import write\n"
                                               "    import json\n"})
    assert late_imports(root) == [
        "certgen/builders/a.py:5: imports certgen.writer inside a function; import it at the "
        "top of the file (only the map's [lazy] libraries may wait)",
        "certgen/builders/a.py:6: imports json inside a function; import it at the top of the "
        "file (only the map's [lazy] libraries may wait)",
    ]


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(module_graph(PACKAGE)[1]) == []


def test_the_map_lists_its_parts_bottom_up_and_allows_nothing_it_forbids() -> None:
    arch = load_map()
    order = [p.name for p in arch.parts]
    assert len(order) == len(set(order))
    for position, part in enumerate(arch.parts):
        below = set(order[:position])
        assert part.may_import <= below, (part.name, sorted(part.may_import - below))
        for target in part.may_import:
            assert arch.forbids(part.name, target) is None, (part.name, target)
    for rule in arch.forbidden:
        assert rule.source == "*" or rule.source in order
        assert all(t == "*" or t in order for t in rule.targets)
    # A promise names parts of the map, and no part is allowed the direct arrow it rules out.
    assert arch.never_reaches
    for promise in arch.never_reaches:
        assert promise.source in order
        assert all(t == "*" or t in order for t in promise.targets)
        source = next(p for p in arch.parts if p.name == promise.source)
        assert not [t for t in source.may_import if t != "package" and promise.covers(t)], \
            promise


def test_every_path_of_the_map_exists() -> None:
    for part in load_map().parts:
        for path in part.paths:
            assert (ROOT / path).exists(), (part.name, path)


# --------------------------------------------------------------------------- the checker


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    """A copy of the package layout (empty modules where the map names files) with `files`."""
    root = tmp_path / "certgen"
    for part in load_map().parts:
        for path in part.paths:
            target = tmp_path / path
            if target.suffix == ".py":
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            else:
                target.mkdir(parents=True, exist_ok=True)
                (target / "__init__.py").touch()
    for name, source in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(source)
    return root


def _a_file_of(part: Part) -> tuple[str, str]:
    """A module path (under certgen/) in `part`, and its dotted name."""
    path = part.paths[0].removeprefix("certgen/").removeprefix("certgen")
    if not path.endswith(".py"):
        path = (path + "/" if path else "") + "planted.py"
    return path, "certgen." + path.removesuffix(".py").replace("/", ".")


def _forbidden_arrows() -> list[tuple[str, str]]:
    arch = load_map()
    names = [p.name for p in arch.parts]
    arrows = []
    for rule in arch.forbidden:
        sources = [rule.source] if rule.source != "*" else [
            n for n in names if n not in rule.exempt and n != "package"]
        targets = names if "*" in rule.targets else list(rule.targets)
        for source in sources:
            for target in targets:
                if target not in (source, "package"):
                    arrows.append((source, target))
    return sorted(set(arrows))


@pytest.mark.parametrize(("source", "target"), _forbidden_arrows())
def test_the_checker_sees_a_planted_violation_of_each_forbidden_arrow(
        tmp_path: Path, source: str, target: str) -> None:
    """A lazy import (inside a function) along each forbidden arrow is reported, with its
    reason, so the real test cannot pass by seeing nothing."""
    arch = load_map()
    parts = {p.name: p for p in arch.parts}
    path, _ = _a_file_of(parts[source])
    first = parts[target].paths[0]  # a module the planted tree has: a file, or a package
    target_module = first.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    root = _plant(tmp_path, {path: f"def f():\n    import {target_module}\n"})
    rule = arch.forbids(source, target)
    assert rule is not None
    assert any(v.endswith(f"({rule.why})") and target_module in v for v in violations(root)), \
        violations(root)


@pytest.mark.parametrize(("path", "source", "expected"), [
    ("render/x.py", "from ..pipeline import make_record\n", "certgen.render.x -> certgen.pipeline"),
    ("render/x.py", "from certgen import writer\n", "certgen.render.x -> certgen.writer"),
    ("metrics/figures.py", "import certgen.record\n", "certgen.metrics.figures -> certgen.record"),
    ("rules/verdict.py", "from certgen.pipeline import make_record\n", "certgen.rules.verdict -> certgen.pipeline"),
])
def test_the_checker_reads_relative_and_package_imports(
        tmp_path: Path, path: str, source: str, expected: str) -> None:
    root = _plant(tmp_path, {path: source})
    assert any(v.startswith(expected + " ") for v in violations(root)), violations(root)


def test_the_checker_sees_a_planted_cycle(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"builders/a.py": "from certgen.builders import b\n",
                             "builders/b.py": "def f():\n    from certgen.builders.a import g\n"})
    assert "import cycle: certgen.builders.a -> certgen.builders.b" in violations(root)


def test_the_checker_names_a_module_outside_every_part(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"stray.py": ""})
    assert "certgen.stray is in no part of the map" in violations(root)


# --------------------------------------------------------------------------- the promises


def _promised_arrows() -> list[tuple[str, str]]:
    """(source, target) for every part a `never_reaches` promise keeps `source` from."""
    arch = load_map()
    return sorted({(rule.source, part.name) for rule in arch.never_reaches for part in arch.parts
                   if part.name != "package" and rule.covers(part.name)})


def _middle(arch: ArchitectureMap, source: str, target: str) -> Part:
    """Where the planted chain passes: a part `source` may import that may itself import
    `target` (a chain of allowed arrows, the case the one-step rules cannot see), else
    another module of `source`'s own folder, else any part `source` may import."""
    parts = {p.name: p for p in arch.parts}
    allowed = [parts[n] for n in sorted(parts[source].may_import) if n != "package"]
    for part in allowed:
        if target in part.may_import:
            return part
    if not parts[source].paths[0].endswith(".py"):
        return parts[source]
    return allowed[0]


def _reached_module(part: Part) -> tuple[str, str]:
    """A module of `part` to plant as the end of a chain: (path under certgen/, dotted name)."""
    path = part.paths[0].removeprefix("certgen/")
    if not path.endswith(".py"):
        path += "/reached.py"
    return path, "certgen." + path.removesuffix(".py").replace("/", ".")


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(("source", "target"), _promised_arrows())
def test_the_checker_sees_a_planted_chain_breaking_each_promise(
        tmp_path: Path, source: str, target: str, depth: int) -> None:
    """Each promise, broken by a direct import and by a chain two steps deep (source -> middle
    -> target), is reported with the chain and the promise's reason."""
    arch = load_map()
    parts = {p.name: p for p in arch.parts}
    start, start_module = _a_file_of(parts[source])
    end, end_module = _reached_module(parts[target])
    files = {end: "", start: f"import {end_module}\n"}
    chain = [start_module, end_module]
    if depth == 2:
        middle = _middle(arch, source, target)
        via, via_module = _a_file_of(middle)
        if via == start:  # source's own folder: a second module beside the first
            via = via.replace("planted.py", "between.py")
            via_module = via_module.replace(".planted", ".between")
        package, _, name = via_module.rpartition(".")
        files[start] = f"from {package} import {name}\n"
        files[via] = f"def f():\n    import {end_module}\n"
        chain = [start_module, via_module, end_module]
    root = _plant(tmp_path, files)
    rule = next(r for r in arch.never_reaches if r.source == source and r.covers(target))
    expected = f"{source} never reaches {target}: {' -> '.join(chain)} ({rule.why})"
    # (a middle module in source's own folder breaks the promise too, one step from the end)
    assert expected in broken_promises(root)
    assert expected in violations(root)


def test_a_chain_of_allowed_arrows_breaking_a_promise_is_the_only_violation(
        tmp_path: Path) -> None:
    """The issue's case: render may import metrics and metrics may import captures, so the
    one-step rules pass `render -> metrics.validity -> captures`; the promise does not."""
    root = _plant(tmp_path, {
        "render/page.py": "from certgen.metrics import validity\n",
        "metrics/validity.py": "from certgen.captures.model import Capture\n",
        "captures/model.py": "",
    })
    assert violations(root) == [
        "render never reaches captures: certgen.render.page -> certgen.metrics.validity -> "
        "certgen.captures.model (a document is rendered from its record: no "
        "chain of imports reaches a capture reader)"]


def test_a_package_init_on_the_way_counts(tmp_path: Path) -> None:
    """Importing certgen.metrics.figures runs certgen/metrics/__init__.py first: an import
    hidden there is on the chain."""
    root = _plant(tmp_path, {
        "record.py": "from certgen.metrics.figures import weights_of\n",
        "metrics/__init__.py": "from certgen.fleet import store\n",
        "metrics/figures.py": "",
        "fleet/store.py": "",
    })
    assert ("record never reaches fleet: certgen.record -> certgen.metrics -> "
            "certgen.fleet.store (the record is data the fleet ranks against, never the reverse, "
            "through any chain)") in broken_promises(root)


def test_the_package_keeps_every_promise() -> None:
    assert broken_promises(PACKAGE) == []


# --------------------------------------------------------------------------- private names


def private_imports(root: Path, arch: ArchitectureMap | None = None) -> list[str]:
    """Every private name (`_name`, not `__dunder__`) of a certgen module used by a module of
    another part of the map: `from certgen.x import _name`, or `module._name` on an imported
    module. Inside its part (its folder) a private name may be shared; outside, it is public
    or it is not used."""
    arch = arch or load_map()
    modules, _ = module_graph(root)

    def part(name: str) -> str | None:
        found = arch.part_of(modules[name].relative_to(root.parent).as_posix())
        return None if found is None else found.name

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    out: list[str] = []
    for name, path in sorted(modules.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        bound: dict[str, str] = {}  # a local name -> the certgen module it stands for
        used: list[tuple[int, str, str]] = []  # (line, module, private name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("certgen.") and alias.name in modules:
                        bound[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                    elif base in modules and private(alias.name):
                        used.append((node.lineno, base, alias.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and private(node.attr):
                dotted = ast.unparse(node.value)
                if dotted in bound:
                    used.append((node.lineno, bound[dotted], node.attr))
        for line, module, attr in sorted(set(used)):
            if part(module) != part(name):
                out.append(f"{path.relative_to(root.parent).as_posix()}:{line}: {name} uses "
                           f"{module}.{attr}, private to {part(module)}")
    return out


def test_no_private_name_is_used_outside_its_part() -> None:
    assert private_imports(PACKAGE) == []


def test_the_private_check_sees_planted_uses_across_parts_only(tmp_path: Path) -> None:
    root = _plant(tmp_path, {
        "metrics/figures.py": "def _ms(): ...\n",
        "metrics/diagnostics.py": "from certgen.metrics.figures import _ms\n",  # same part
        "render/charts.py": "from certgen.metrics.figures import _ms, __doc__\n",
        "render/html.py": "from ..metrics import figures as f\nx = f._ms()\n",
        "rules/verdict.py": "import certgen.metrics.figures\ny = certgen.metrics.figures._ms\n",
        "builders/site.py": "from certgen.render import html\nz = html.__name__\n",
    })
    assert private_imports(root) == [
        "certgen/render/charts.py:1: certgen.render.charts uses certgen.metrics.figures._ms, "
        "private to metrics",
        "certgen/render/html.py:2: certgen.render.html uses certgen.metrics.figures._ms, "
        "private to metrics",
        "certgen/rules/verdict.py:2: certgen.rules.verdict uses certgen.metrics.figures._ms, "
        "private to metrics",
    ]
