"""html_to_pdf: confined fetcher, project fonts, PDF/A-3b metadata and attachments."""

from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

import pypdf
import pytest

from certgen.errors import RenderError
from certgen.render.pdf import ConfinedURLFetcher, fonts_conf, html_to_pdf
from certgen.support.paths import templates_dir

WHEN = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)


def _pdf(html: str, fetcher: ConfinedURLFetcher | None = None, **kw: object) -> bytes:
    args: dict[str, object] = dict(
        lang="ru", title="Сертификат", author="Лаборатория", created=WHEN,
        attachments=[("record.json", b'{"a": 1}\n', "the record")],
    )
    args.update(kw)
    return html_to_pdf(html, fetcher=fetcher, **args)  # type: ignore[arg-type]


def test_fontconfig_points_at_the_project_file() -> None:
    assert os.environ["FONTCONFIG_FILE"] == str(fonts_conf())
    text = fonts_conf().read_text()
    assert "<dir prefix=\"relative\">fonts</dir>" in text
    assert "/usr/share/fonts" not in text


def test_metadata_attachment_and_pdfa() -> None:
    data = _pdf('<html lang="ru"><body><p>Проверка ação</p></body></html>')
    reader = pypdf.PdfReader(io.BytesIO(data))
    meta = reader.metadata
    assert meta is not None
    assert meta["/Title"] == "Сертификат"
    assert meta["/Author"] == "Лаборатория"
    assert meta["/CreationDate"] == "D:20261129000000Z"
    assert meta["/ModDate"] == "D:20261129000000Z"
    assert dict(reader.attachments) == {"record.json": [b'{"a": 1}\n']}
    root = reader.trailer["/Root"]
    assert root["/Lang"] == "ru"
    assert root["/AF"][0].get_object()["/AFRelationship"] == "/Data"
    spec = root["/AF"][0].get_object()["/EF"]["/F"].get_object()["/Params"]
    assert spec["/CreationDate"] == "D:20261129000000Z"
    xmp = root["/Metadata"].get_object().get_data()
    assert b'pdfaid:part="3" pdfaid:conformance="A"' in xmp
    width, height = reader.pages[0].mediabox.width, reader.pages[0].mediabox.height
    assert (round(float(width)), round(float(height))) == (595, 842)  # A4 by default


def test_only_bundled_dejavu_fonts_are_embedded() -> None:
    data = _pdf('<html><body style="font-family: Arial, sans-serif"><p>Кириллица, ação</p>'
                "<p style='font-family: monospace'>mono</p></body></html>")
    reader = pypdf.PdfReader(io.BytesIO(data))
    fonts = set()
    for page in reader.pages:
        for font in page["/Resources"]["/Font"].values():
            fonts.add(str(font.get_object()["/BaseFont"]).split("+", 1)[1])
    assert fonts and all(name.startswith("DejaVu") for name in fonts)


def test_same_input_same_bytes() -> None:
    html = '<html lang="en"><body><h1>Same</h1></body></html>'
    assert _pdf(html) == _pdf(html)


def test_fetcher_serves_templates_and_data_only(tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG")
    link = templates_dir() / "fonts" / "DejaVuSans.ttf"
    html = (
        "<html><body>"
        f'<img src="{secret.as_uri()}">'
        '<img src="file:///etc/passwd">'
        '<img src="https://example.com/x.png">'
        '<img src="fonts/%2e%2e/%2e%2e/etc/passwd">'
        '<img src="data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E">'
        f'<img src="{link.as_uri()}">'
        "</body></html>"
    )
    fetcher = ConfinedURLFetcher()
    _pdf(html, fetcher)
    refused = fetcher.refused()
    assert secret.as_uri() in refused
    assert "file:///etc/passwd" in refused
    assert "https://example.com/x.png" in refused
    assert any("%2e%2e" in url for url in refused)
    assert fetcher.served()[0].startswith("data:image/svg+xml")
    assert link.as_uri() in fetcher.served()


def test_fetcher_refuses_a_symlink_leading_out(tmp_path: Path) -> None:
    target = tmp_path / "outside.css"
    target.write_text("body{}")
    root = tmp_path / "templates"
    root.mkdir()
    (root / "in.css").symlink_to(target)
    fetcher = ConfinedURLFetcher(root)
    with pytest.raises(ValueError):
        fetcher.fetch((root / "in.css").as_uri())
    assert fetcher.log[0].verdict == "refused"
    assert fetcher.log[0].reason == "outside templates/ (or a symlink leading out)"


def test_html_cannot_add_attachments_of_its_own(tmp_path: Path) -> None:
    other = tmp_path / "other.txt"
    other.write_text("secret")
    html = (f'<html><head><link rel="attachment" href="{other.as_uri()}"></head>'
            f'<body><a rel="attachment" href="{other.as_uri()}">x</a></body></html>')
    reader = pypdf.PdfReader(io.BytesIO(_pdf(html)))
    assert list(reader.attachments) == ["record.json"]


def test_a_refused_fetch_that_stops_the_document_is_a_render_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WeasyPrint does not swallow a failed @color-profile fetch: the document is at fault."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    secret = tmp_path / "secret.icc"
    secret.write_bytes(b"not a profile")
    fetcher = ConfinedURLFetcher()
    html = f"<style>@color-profile --x {{ src: url({secret.as_uri()}) }}</style><p>x</p>"
    with pytest.raises(RenderError) as info:
        _pdf(html, fetcher)
    assert str(info.value) == (
        f"PDF rendering failed: ValueError: certgen refused to fetch {secret.as_uri()[:80]!r}: "
        "outside templates/ (or a symlink leading out)")
    assert fetcher.refused() == [secret.as_uri()]
    assert "SOURCE_DATE_EPOCH" not in os.environ


def test_an_internal_failure_inside_weasyprint_is_a_bug_not_a_render_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A layout crash says nothing about the user's input: it keeps its type and traceback."""
    import weasyprint.document

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("layout exploded")

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.setattr(weasyprint.document, "layout_document", crash)
    with pytest.raises(RuntimeError, match=r"^layout exploded$") as info:
        _pdf("<p>x</p>")
    assert not isinstance(info.value, RenderError)
    assert info.traceback[-1].name == "crash"
    assert "SOURCE_DATE_EPOCH" not in os.environ
