"""What a reader sees on a rendered certificate: visible words, figure cells, re-derivation.

Shared by the certificate tests and the property tests over generated records.
"""

from __future__ import annotations

import re
from decimal import Decimal
from html.parser import HTMLParser
from typing import Any

from babel.numbers import parse_decimal

from certgen.metrics.figures import round_half_away


class _Text(HTMLParser):
    """The words a reader sees: text nodes and aria-label/title/alt, not styles."""

    def __init__(self) -> None:
        super().__init__()
        self.skip = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag == "style"
        self.parts.extend(v for k, v in attrs if k in ("aria-label", "title", "alt") and v)

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag == "style"

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "\n".join(parser.parts)


KEPT_IN_ENGLISH = {"FPS", "Fluidity", "Score", "SHA-256", "SOP", "GPU", "VRM", "p99", "low",
                   "record", "json", "certgen", "PLATINUM", "GOLD", "SILVER", "n", "sha256",
                   "https", "certificates", "example", "org", "verify", "ray", "tracing",
                   "upscaler", "Driver", "ms", "GB", "PDF", "index", "QR-", "GPU-001", "ILAC-G8"}
"""Latin words a ru/pt certificate may show: glossary terms kept in English (locales/glossary.yaml),
units, the verification URL and the status list (index.json), the QR code (ru QR-код), the
SOP's number (GPU-001), the decision rule's standard (ILAC-G8, cited by the how-sure box),
the file formats the navigation links (PDF, record.json)."""

ENGLISH_ONLY = {"the", "and", "of", "is", "are", "run", "runs", "stutter", "required", "needed",
                "archived", "capture", "before", "issued", "incomplete", "pass", "passed", "fail",
                "failed", "above", "below", "line", "re-run", "missing", "with", "without", "has",
                "file", "declared", "mismatch", "reached", "yes", "not", "measured"}
"""English words that would mean an untranslated sentence on a Portuguese certificate."""


def words(text: str) -> set[str]:
    """Latin words of two letters or more; hashes (hex) and formula letters (F, g, s) are not words."""
    found = set(re.findall(r"[A-Za-z][A-Za-z0-9-]*", text))
    return {w for w in found if len(w) > 1 and not re.fullmatch(r"[0-9a-f]{16,}", w)}


def bundle_words(record: dict[str, Any]) -> set[str]:
    """Words of the free text a lab or a capture wrote (shown as written, never translated),
    from the record's JSON form."""
    # A Phase 1 outcome of pass/fail is translated by the certificate; any other is lab text.
    outcomes = [v for v in record["phase1"].values()
                if str(v).lower() not in ("pass", "passed", "fail", "failed")]
    texts = [record["customer"], *record["card"].values(), *record["certificate"].values(),
             *outcomes, record["rules_version"]]
    texts += [d.get("file") for d in record["status"].get("refusal_details", [])]
    for run in record["runs"]:
        texts += [run[k] for k in ("title", "resolution", "preset", "upscaler", "upscaler_mode",
                                   "not_run_reason")]
        capture = run.get("capture") or {}
        texts += [capture.get("file"), capture.get("group"), *capture.get("groups_left_out", ()),
                  capture.get("tool"), capture.get("tool_version"),
                  (run.get("first_capture") or {}).get("file")]
        conditions = run.get("conditions") or {}
        texts += [conditions.get("game_version"), conditions.get("technician")]
        soft = run.get("soft_limit") or {}
        texts += [soft.get("justification"), soft.get("vrm_reexamination")]
        # What the captures record, and the lab's explanation of a difference.
        texts += [*(run.get("recorded") or {}).values(),
                  *((run.get("first_capture") or {}).get("recorded") or {}).values(),
                  run.get("provenance_note")]
    texts += [f["file"] for f in record["audit"]["first_captures"]]
    texts += [v for v in (record.get("test_system") or {}).values() if isinstance(v, str)]
    grade_cap = (record.get("grade") or {}).get("cap") or {}
    texts += [grade_cap.get("reason")]
    found: set[str] = set()
    for text in texts:
        found |= words(str(text or ""))
    return found


def cells(html: str, cls: str) -> list[str]:
    """The text of every `<td class="num CLS">` (a run table column)."""
    return re.findall(rf'<td class="num {cls}"[^>]*>(?:<strong>)?([^<]*)', html)


def number(text: str, lang: str) -> float:
    """A printed figure back to a number (the locale's decimal sign; '%' dropped)."""
    return float(parse_decimal(text.replace("%", "").strip(), locale=lang, strict=False))


def check_scores_rederive(html: str, lang: str, weights: dict[str, float]) -> int:
    """Every run row whose FPS triple is printed: g and s from the printed FPS give the printed
    % (4 decimals) and, unrounded, the printed score. Returns how many rows were checked."""
    rows = list(zip(cells(html, "fps-avg"), cells(html, "fps-low1"), cells(html, "fps-low01"),
                    cells(html, "gap"), cells(html, "stutter"), cells(html, "score"), strict=True))
    checked = 0
    for avg_t, low1_t, low01_t, gap_t, stutter_t, score_t in rows:
        if "—" in (avg_t + low1_t + low01_t + score_t):
            continue  # a null figure (the null rule): nothing to re-derive
        avg, low1, low01 = (number(t, lang) for t in (avg_t, low1_t, low01_t))
        gap = 1 - low1 / avg
        stutter = 1 - low01 / low1
        assert Decimal(str(number(gap_t, lang))) == Decimal(str(round_half_away(gap, 4))) * 100
        assert Decimal(str(number(stutter_t, lang))) == (
            Decimal(str(round_half_away(stutter, 4))) * 100)
        score = round_half_away(
            100 * (1 - (weights["consistency_gap"] * gap + weights["stutter"] * stutter)), 2)
        assert number(score_t, lang) == score
        checked += 1
    return checked


def structure_elements(data: bytes) -> list[dict[str, Any]]:
    """Every element of a tagged PDF's structure tree ([] when it is untagged), as pypdf
    dictionaries (/S its type, /Alt a figure's text alternative)."""
    import io

    import pypdf

    root = pypdf.PdfReader(io.BytesIO(data)).trailer["/Root"]
    if "/StructTreeRoot" not in root:
        return []
    found: list[dict[str, Any]] = []
    todo: list[Any] = [root["/StructTreeRoot"]]
    while todo:
        node = todo.pop()
        node = node.get_object() if hasattr(node, "get_object") else node
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            found.append(node)
            if "/K" in node:
                todo.append(node["/K"])
    return found


def pdf_structure(data: bytes) -> dict[str, int]:
    """How many structure elements of each type a tagged PDF holds ({} when it is untagged):
    the reading structure a screen reader gets (headings, tables, figures)."""
    from collections import Counter

    return dict(Counter(str(node["/S"]).lstrip("/") for node in structure_elements(data)
                        if "/S" in node))


def render_naming_another_stack(record_bytes: bytes, verify_base: str) -> bytes:
    """The English certificate of `record_bytes`, rendered by this certgen from the record
    edited to name another software stack (Pango 1.0.0), unsigned: what verify compares as
    drawn, not bytes (issue 40)."""
    import hashlib

    from certgen.record import dump_record, load_record
    from certgen.render.certificate import certificate_print_html, render_certificate_pdf

    record = load_record(record_bytes)
    assert record.software is not None
    record = record.model_copy(update={"software": record.software.model_copy(
        update={"pango": "1.0.0"})})
    edited = dump_record(record)
    html = certificate_print_html(record, "en", record_sha256=hashlib.sha256(edited).hexdigest(),
                                  verify_base=verify_base, signed=True)
    return render_certificate_pdf(html, record, edited, "en")
