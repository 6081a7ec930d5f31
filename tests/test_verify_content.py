"""verify's content check renders a record once per process (certgen.verify.content._rendered): the
same HTML, record bytes, language and software stack give the PDF rendered before; any one of
them changed renders afresh, and only the last few renders are kept (issue 22). What a reader
sees of a render (the expected side of a text-and-images comparison) is read once too."""

from __future__ import annotations

import pypdf
import pytest

import certgen.support.software
from certgen.verify import content as verify


def test_the_same_inputs_render_once_and_any_changed_input_renders_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, bytes, str]] = []

    def render(html: str, record: object, record_bytes: bytes, lang: str) -> bytes:
        calls.append((html, record_bytes, lang))
        return f"{len(calls)}:{html}:{lang}".encode() + record_bytes

    monkeypatch.setattr(verify, "render_certificate_pdf", render)
    monkeypatch.setattr(verify, "_RENDERS", {})
    first = verify._rendered("<p>a</p>", None, b"{}", "en")
    assert verify._rendered("<p>a</p>", None, b"{}", "en") == first
    assert len(calls) == 1
    for html, data, lang in (("<p>b</p>", b"{}", "en"), ("<p>a</p>", b"{ }", "en"),
                             ("<p>a</p>", b"{}", "ru")):
        assert verify._rendered(html, None, data, lang) != first
    assert len(calls) == 4
    # Another software stack (as after an upgrade of WeasyPrint) renders again too.
    stack = certgen.support.software.current_software()
    monkeypatch.setattr(verify, "current_software", lambda: (stack, "weasyprint 0.0"))
    assert verify._rendered("<p>a</p>", None, b"{}", "en") != first
    assert len(calls) == 5


def test_only_the_last_renders_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def render(html: str, record: object, record_bytes: bytes, lang: str) -> bytes:
        calls.append(html)
        return html.encode()

    monkeypatch.setattr(verify, "render_certificate_pdf", render)
    monkeypatch.setattr(verify, "_RENDERS", {})
    for n in range(verify._RENDERS_KEPT + 3):
        verify._rendered(f"<p>{n}</p>", None, b"{}", "en")
    assert len(verify._RENDERS) == verify._RENDERS_KEPT
    verify._rendered("<p>0</p>", None, b"{}", "en")  # the oldest was let go: rendered again
    assert len(calls) == verify._RENDERS_KEPT + 4


def test_what_a_reader_sees_of_a_render_is_read_once_per_render(
        monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[bytes] = []

    def seen(reader: object) -> object:
        read.append(b"")
        return object()

    monkeypatch.setattr(verify, "seen_of", seen)
    monkeypatch.setattr(verify, "_EXPECTED", {})
    monkeypatch.setattr(pypdf, "PdfReader", lambda stream: stream)
    first = verify._expected_seen(b"%PDF-1 a")
    assert verify._expected_seen(b"%PDF-1 a") is first and len(read) == 1
    assert verify._expected_seen(b"%PDF-1 b") is not first and len(read) == 2


def test_the_printed_verification_base_is_read_before_the_address_s_tail() -> None:
    from certgen.verify.content import printed_base

    sha = "ab" * 32
    text = f"Verify at https://lab.example/c/\nID-1/?sha256={sha[:30]}\n{sha[30:]} more"
    assert printed_base(text, "ID-1", sha) == "https://lab.example/c"
    assert printed_base(text, "ID-2", sha) is None
