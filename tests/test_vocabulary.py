"""One vocabulary (issue 22): one class per concept, no JSON-text joins between stages, and the
bugs the vocabulary work found kept fixed."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "certgen"


def class_definitions(root: Path) -> dict[str, list[str]]:
    """Every class name defined in the package at `root`, with the files that define it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(path.relative_to(root).as_posix())
    return found


def duplicates(root: Path) -> dict[str, list[str]]:
    return {name: files for name, files in class_definitions(root).items() if len(files) > 1}


def test_no_class_name_is_defined_twice_in_certgen() -> None:
    assert duplicates(PACKAGE) == {}


def test_the_duplicate_check_sees_a_planted_twin(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("class Tier:\n    pass\n")
    (tmp_path / "b.py").write_text("def f():\n    class Tier:\n        pass\n")
    assert duplicates(tmp_path) == {"Tier": ["a.py", "b.py"]}


def test_no_stage_joins_another_through_json_text() -> None:
    """A stage hands the next its typed models; none round-trips through json.dumps."""
    joins = [f"{path.relative_to(PACKAGE)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if "model_validate_json(json.dumps(" in line]
    assert joins == []


def test_the_model_package_imports_nothing_else_of_certgen() -> None:
    for path in sorted((PACKAGE / "model").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("certgen"):
                assert (node.module or "").startswith("certgen.model"), (path.name, node.module)
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("certgen") and not
                               a.name.startswith("certgen.model") for a in node.names)


def test_star_import_of_the_api_works() -> None:
    """`BuildResult` is in `__all__`; it is imported when asked for, so `import *` finds it."""
    code = ("from certgen.api import *\n"
            "import sys\n"
            "assert BuildResult.__name__ == 'BuildResult'\n"
            "assert render_certificate and build_certificates\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_record_error_is_the_one_of_the_error_tree() -> None:
    import certgen.errors
    from certgen.record import load_record

    with pytest.raises(certgen.errors.RecordError, match="not a JSON record"):
        load_record(b"not json")


def test_the_computed_figures_are_the_records_models() -> None:
    """metrics, framegen and rules return the record's own types: nothing to convert."""
    import numpy as np

    from certgen import model
    from certgen.metrics.diagnostics import compute_metrics
    from certgen.metrics.framegen import figures_of
    from certgen.rules.verdict import RunFacts, decide
    from certgen.sop import load_rules

    weights = model.Weights(consistency_gap=0.7, stutter=0.3)
    frames = np.full(600, 10.0)
    metrics = compute_metrics(frames, weights)
    assert type(metrics) is model.RunMetrics
    assert type(figures_of(frames, weights)) is model.DiagnosticFigures
    verdict = decide([RunFacts(index=0, title="T", resolution="1920x1080", recorded=True,
                               fluidity_score=metrics.fluidity_score, stutter=metrics.stutter)],
                     None, load_rules())
    assert type(verdict.grade) is model.Grade
    assert all(type(t) is model.Tier for t in verdict.tiers)


@pytest.mark.parametrize("name", ["gold-rx7800xt", "platinum-rtx4070s", "silver-gtx1660s"])
def test_verify_reads_back_every_fact_the_pipeline_gave_the_rules(name: str) -> None:
    """One derivation (rules.run_facts) for both: what verify reads from the record is what the
    pipeline derived from the bundle, field for field (lab text compared as given or not)."""
    import dataclasses

    from certgen.inputs.bundle import load_bundle
    from certgen.pipeline import _read_run, record_from_bundle
    from certgen.sop import load_rules
    from certgen.verify.derivation import record_facts

    bundle = load_bundle(PACKAGE.parent / "examples" / name)
    rules = load_rules(bundle.card.certificate.sop)
    piped = [_read_run(bundle, i, run, rules)[1] for i, run in enumerate(bundle.card.runs)]
    read = record_facts(record_from_bundle(bundle, draft=True))

    def plain(facts: object) -> object:
        return dataclasses.replace(facts, justification=bool(facts.justification),  # type: ignore[type-var]
                                   vrm_reexamination=bool(facts.vrm_reexamination))
    assert [plain(f) for f in read] == [plain(f) for f in piped]
    assert any(f.first_capture_file for f in piped) or name != "gold-rx7800xt"


def any_in_signatures(path: Path) -> list[str]:
    """Each function of `path` whose parameters or return are annotated with Any."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            annotations = [a.annotation for a in (*args.posonlyargs, *args.args,
                                                  *args.kwonlyargs, args.vararg, args.kwarg)
                           if a is not None and a.annotation is not None]
            if node.returns is not None:
                annotations.append(node.returns)
            if any(isinstance(n, ast.Name) and n.id == "Any"
                   for a in annotations for n in ast.walk(a)):
                out.append(f"{path.name}:{node.lineno} {node.name}")
    return out


@pytest.mark.parametrize("name", ["record.py", "compare/report.py", "rules/verdict.py",
                                  "inputs/bundle.py",
                                  "render/report.py"])
def test_the_records_rules_and_bundle_are_typed_without_any(name: str) -> None:
    assert any_in_signatures(PACKAGE / name) == []


def test_the_any_check_sees_a_planted_any(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text("from typing import Any\ndef f(a: dict[str, Any]) -> None: ...\n")
    assert any_in_signatures(planted) == ["x.py:2 f"]


ANY_LIMIT = 60
"""Fewer `Any` than this in certgen's signatures (issue 22: 172 before the typing work)."""
ANY_FREE = ("record.py", "compare/report.py", "rules/verdict.py", "inputs/bundle.py")
"""Modules whose signatures carry no `Any` at all."""


def any_count(path: Path) -> int:
    """How many `Any` the parameter and return annotations of `path`'s functions hold: the name
    `Any`, an attribute `typing.Any`, and each `Any` inside a string annotation."""
    def count(annotation: ast.expr | None) -> int:
        n = 0
        for sub in ast.walk(annotation) if annotation is not None else ():
            if isinstance(sub, ast.Name) and sub.id == "Any":
                n += 1
            elif isinstance(sub, ast.Attribute) and sub.attr == "Any":
                n += 1
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                n += sub.value.count("Any")
        return n

    total = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            total += sum(count(a.annotation) for a in (*args.posonlyargs, *args.args,
                                                       *args.kwonlyargs))
            total += sum(count(a.annotation) for a in (args.vararg, args.kwarg) if a is not None)
            total += count(node.returns)
    return total


def any_counts(root: Path) -> dict[str, int]:
    """any_count of every module under `root` that has one, by path relative to `root`."""
    return {path.relative_to(root).as_posix(): n for path in sorted(root.rglob("*.py"))
            if (n := any_count(path))}


def test_certgen_signatures_hold_few_any_and_the_typed_modules_none() -> None:
    counts = any_counts(PACKAGE)
    total = sum(counts.values())
    shown = ", ".join(f"{name} {n}" for name, n in sorted(counts.items(),
                                                          key=lambda item: (-item[1], item[0])))
    assert total < ANY_LIMIT, (f"{total} Any in certgen's signatures, the limit is fewer than "
                               f"{ANY_LIMIT}: {shown}")
    typed = {name: counts[name] for name in ANY_FREE if name in counts}
    assert typed == {}, f"Any in the signatures of {', '.join(typed)} (none allowed): {shown}"


def test_the_any_count_sees_names_attributes_and_strings(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text("import typing\nfrom typing import Any\n"
                       "def f(a: dict[str, Any], *b: typing.Any, **c: 'list[Any]') -> Any: ...\n"
                       "class C:\n    async def g(self, /, d: int, *, e: 'Any | Any') -> None: ...\n"
                       "x: Any = 1\n")
    assert any_count(planted) == 6
    assert any_counts(tmp_path) == {"x.py": 6}


def test_the_report_record_is_typed_and_carries_no_frames() -> None:
    """The renderer gets the chart series and the CSV the builder computed, never frames."""
    import dataclasses

    from certgen.builders.report import report_record
    from certgen.compare.report import PairReport

    base = PACKAGE.parent / "examples" / "compare"
    record = report_record([base / "change" / "before.json", base / "change" / "after.json"],
                           base=base)
    assert isinstance(record, PairReport)
    assert len(record.charts) == 2 and record.csv.startswith("side,kind,name,value")
    for f in dataclasses.fields(record):
        assert not f.name.startswith("_")
