"""The Jinja environment: autoescape always, StrictUndefined, templates/ only, locale filters."""

from __future__ import annotations

import jinja2
import pytest

from certgen.errors import CertgenError, InternalError
from certgen.render.html import make_env, render_template


@pytest.mark.parametrize("lang", ["en", "ru", "pt"])
def test_autoescape_is_on_whatever_the_template_name(lang: str) -> None:
    env = make_env(lang)
    assert env.autoescape is True
    out = env.from_string("{{ x }}").render(x="<script>alert(1)</script>{{ 7*7 }}")
    assert out == "&lt;script&gt;alert(1)&lt;/script&gt;{{ 7*7 }}"


def test_undefined_is_an_error() -> None:
    with pytest.raises(jinja2.UndefinedError):
        make_env("en").from_string("{{ missing.field }}").render()


def test_loader_reads_templates_folder_only() -> None:
    env = make_env("en")
    for name in ("../pyproject.toml", "/etc/passwd", "fonts/../../pyproject.toml"):
        with pytest.raises(jinja2.TemplateNotFound):
            env.get_template(name)
    with pytest.raises(InternalError) as info:
        render_template("../pyproject.toml", {}, "en")
    assert str(info.value) == "templates/../pyproject.toml: template not found"
    assert not isinstance(info.value, CertgenError)  # certgen's own names: a bug, exit 70


def test_filters_format_for_the_environment_language() -> None:
    tpl = "{{ 1234.5|fps }} {{ 0.0412|pct }} {{ 91.55|score }} {{ none|fps }} {{ '2026-11-29'|date }}"
    assert make_env("en").from_string(tpl).render(none=None) == (
        "1,234.5 4.12% 91.55 — November 29, 2026"
    )
    assert make_env("pt").from_string(tpl).render(none=None) == (
        "1.234,5 4,12% 91,55 — 29 de novembro de 2026"
    )


def test_translated_plural_in_a_template() -> None:
    tpl = "{{ ngettext('%(num)d run', '%(num)d runs', n) }}"
    assert make_env("ru").from_string(tpl).render(n=3) == "3 прогона"
    assert make_env("en").from_string(tpl).render(n=1) == "1 run"


def test_gettext_arguments_are_escaped() -> None:
    tpl = "{{ _('Prepared for %(name)s', name=x) }}"
    assert make_env("en").from_string(tpl).render(x="<b>") == "Prepared for &lt;b&gt;"


def test_no_heading_qualifier_is_styled_as_a_note_box() -> None:
    """A heading's qualifier ("· diagnostic, not graded", "· 6 runs") is the quiet .aside, never
    .note (which the report styles as a grey box; issue 28)."""
    import re

    from certgen.support.paths import templates_dir

    for name in ("certificate.html.j2", "report.html.j2", "calibration.html.j2"):
        text = (templates_dir() / name).read_text(encoding="utf-8")
        headings = re.findall(r"<h2>.*?</h2>", text)
        assert headings, name
        assert not [h for h in headings if 'class="note"' in h], name
