"""certgen.verify.derivation: a record's scores, tier means and grade follow from its figures under
its rules file; a changed figure is named; a bundle whose capture differs from the cited one fails
captures (without rendering or signing anything)."""

from __future__ import annotations

import shutil
from pathlib import Path

from certgen.inputs.bundle import load_bundle
from certgen.pipeline import record_from_bundle
from certgen.record import Record
from certgen.verify.derivation import bundle_checks, derivation_problems

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "examples" / "gold-rx7800xt"


def _record() -> Record:
    return record_from_bundle(load_bundle(GOLD), draft=True)


def test_a_genuine_record_derives_and_a_changed_score_or_grade_does_not() -> None:
    record = _record()
    assert derivation_problems(record) == []
    run = record.runs[0]
    assert run.metrics is not None
    changed = record.model_copy(update={"runs": (run.model_copy(update={
        "metrics": run.metrics.model_copy(update={"fluidity_score": 99.9})}),
        *record.runs[1:])})
    problems = derivation_problems(changed)
    assert any("fluidity_score 99.9 does not follow from its FPS figures" in p for p in problems)
    graded = record.model_copy(update={"grade": record.grade.model_copy(update={
        "value": "PLATINUM" if record.grade.value != "PLATINUM" else "GOLD"})})
    assert any("does not follow from the tiers" in p for p in derivation_problems(graded))


def test_the_bundle_checks_pass_on_its_own_bundle_and_name_a_changed_capture(
        tmp_path: Path) -> None:
    record = _record()
    assert [c.verdict for c in bundle_checks(record, str(GOLD))] == ["pass", "pass"]
    copy = tmp_path / "bundle"
    shutil.copytree(GOLD, copy)
    cited = record.audit.captures[0].file
    with (copy / cited).open("ab") as capture:
        capture.write(b"\n")
    captures, _ = bundle_checks(record, str(copy))
    assert captures.verdict == "fail" and f"{cited} has SHA-256" in captures.detail
