"""Every documentation reference in certgen/ and docs/ resolves: the file exists and, where a
reference names a section (`file.md#anchor`, `file.md, "Section"` or `file.md, section)`), the
file has that heading. Docstrings cite the spec as docs/spec/*.md; a bare `spec/x.md` (kept
where it is data, e.g. the card.yaml JSON Schema's $comment) means docs/spec/x.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

REF = re.compile(
    r"(?<![\w/.])(?P<path>(?:docs/)?spec/[\w-]+\.md|docs/[\w/-]+\.md)"
    r"(?:#(?P<anchor>[\w-]+)|,\s*\"(?P<quoted>[^\"]+)\"|,\s*(?P<bare>[A-Za-z][A-Za-z ]*?)\))?"
)
LINK = re.compile(r"\]\((?P<path>[^)#:\s]+\.md)(?:#(?P<anchor>[\w-]+))?\)")


def _sources() -> list[Path]:
    return sorted([*(ROOT / "certgen").rglob("*.py"), *(ROOT / "docs").rglob("*.md")])


def _headings(path: Path) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", path.read_text("utf-8"), re.M)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _references() -> list[tuple[str, Path, str | None, str | None]]:
    """(where, target file, anchor, section name) of every reference."""
    found = []
    for source in _sources():
        text = source.read_text("utf-8")
        where = source.relative_to(ROOT).as_posix()
        for m in REF.finditer(text):
            path = m["path"]
            target = ROOT / (path if path.startswith("docs/") else "docs/" + path)
            section = m["quoted"] or m["bare"]
            found.append((f"{where}: {m.group(0)}", target, m["anchor"], section))
        if source.suffix == ".md":
            for m in LINK.finditer(text):
                found.append((f"{where}: {m.group(0)}", (source.parent / m["path"]).resolve(),
                              m["anchor"], None))
    return found


REFERENCES = _references()


def test_references_are_found() -> None:
    """The scan sees the docstrings' spec references and the spec pages' links (a regex that
    matched nothing would let every reference rot)."""
    wheres = [r[0] for r in REFERENCES]
    assert any(w.startswith("certgen/metrics/figures.py: docs/spec/metrics.md") for w in wheres)
    assert any(r[3] == "Cohorts and ranking" for r in REFERENCES)
    assert any(w.startswith("docs/spec/") and "](" in w for w in wheres)


@pytest.mark.parametrize(("where", "target", "anchor", "section"), REFERENCES,
                         ids=[r[0] for r in REFERENCES])
def test_reference_resolves(where: str, target: Path, anchor: str | None, section: str | None) -> None:
    assert target.is_file(), f"{where}: no such file {target.relative_to(ROOT)}"
    headings = _headings(target)
    if anchor is not None:
        assert anchor in [_slug(h) for h in headings], f"{where}: no heading for #{anchor}"
    if section is not None:
        # A heading may go on after the name: "Refusals (`status.refusals`, …)" is "Refusals".
        named = [h.lower() for h in headings if h.lower() == section.lower()
                 or h.lower().startswith(section.lower() + " (")]
        assert named, f"{where}: no section {section!r} in {target.relative_to(ROOT)}"
