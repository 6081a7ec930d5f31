"""One document's date must not leak into the next PDF a process renders."""

from __future__ import annotations

import datetime as dt
import os

from certgen.render.pdf import html_to_pdf

HTML = "<html lang='en'><body><p>Frame pacing — Кадры — Quadros</p></body></html>"


def _pdf(day: int) -> bytes:
    return html_to_pdf(HTML, lang="en", title="t", author="a",
                       created=dt.datetime(2026, 11, day, tzinfo=dt.UTC))


def test_pdf_date_does_not_leak_between_documents(monkeypatch):
    """B rendered after A (another date) is byte-identical to B rendered on its own."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    _pdf(1)
    assert "SOURCE_DATE_EPOCH" not in os.environ
    after_other = _pdf(29)
    alone = _pdf(29)
    assert after_other == alone


def test_a_user_source_date_epoch_is_kept(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764374400")
    _pdf(1)
    assert os.environ["SOURCE_DATE_EPOCH"] == "1764374400"
