"""The Jinja2 environment every document is rendered with.

Safety is not optional here (DESIGN rules 6 and 7):
- `autoescape=True` for every template, whatever its file name;
- `StrictUndefined`: a missing field is an error, never an empty string;
- the loader reads `templates/` only (Jinja's FileSystemLoader refuses `..` segments), and
  templates are only ever loaded by name: nothing from a bundle becomes a template;
- the i18n extension is installed with the merged, strict translations of the language
  (certgen/render/i18n.py), new-style gettext so `_()` arguments are escaped too.

Filters take their language from the environment, so templates write `{{ run.avg_fps|fps }}`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from certgen.errors import InternalError
from certgen.render import i18n
from certgen.support.paths import templates_dir

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

# The filters every template may use: name -> formatting function of (value, lang, *args).
_FILTERS: dict[str, Callable[..., str]] = {
    "fps": i18n.fmt_fps,
    "fmt_fps": i18n.fmt_fps,
    "score": i18n.fmt_score,
    "fmt_score": i18n.fmt_score,
    "pct": i18n.fmt_pct,
    "fmt_pct": i18n.fmt_pct,
    "number": i18n.fmt_number,
    "fmt_number": i18n.fmt_number,
    "int": i18n.fmt_int,
    "fmt_int": i18n.fmt_int,
    "ms": i18n.fmt_ms,
    "fmt_ms": i18n.fmt_ms,
    "percentile": i18n.fmt_percentile,
    "fmt_percentile": i18n.fmt_percentile,
    "date": i18n.fmt_date,
    "fmt_date": i18n.fmt_date,
    "moment": i18n.fmt_moment,
}


def keep_together(value: object) -> Markup:
    """Markup with the spaces around " = " made non-breaking ("n = 23" never splits a line)."""
    from markupsafe import Markup, escape

    text = value if isinstance(value, Markup) else escape(value)
    return Markup(str(text).replace(" = ", "\u00a0=\u00a0"))


def link_word(text: object, word: str, href: str) -> Markup:
    """Markup of `text` with the first `word` in it linked to `href` on screen only.

    Print shows the plain word: in the PDF "the attached record.json" is the embedded file, not
    a file beside it (and an <a> always becomes a PDF link, whatever its CSS). The stylesheet
    hides `.print-only` on screen and `.screen-only` in print. Text without the word is kept
    as it is.
    """
    from markupsafe import Markup, escape

    shown = text if isinstance(text, Markup) else escape(text)
    target = str(escape(word))
    linked = Markup('<a class="screen-only" href="{0}">{1}</a><span class="print-only">{1}</span>'
                    ).format(href, word)
    return Markup(str(shown).replace(target, str(linked), 1))


def _bind(func: Callable[..., str], lang: str) -> Callable[..., str]:
    """`func(value, lang, *args)` as a filter of (value, *args) in `lang`."""

    def bound(value: object, *args: object) -> str:
        return func(value, lang, *args)

    bound.__name__ = func.__name__
    bound.__doc__ = func.__doc__
    return bound


def make_env(lang: str, *, strict: bool | None = None) -> jinja2.Environment:
    """A fresh Jinja2 Environment for one language (see the module docstring)."""
    return _make_env(i18n.check_language(lang), strict, i18n._fingerprint(lang))


@lru_cache(maxsize=16)
def _make_env(lang: str, strict: bool | None, _fingerprint: object) -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.install_gettext_translations(  # type: ignore[attr-defined]
        i18n.translations(lang, strict=strict), newstyle=True
    )
    for name, func in _FILTERS.items():
        env.filters[name] = _bind(func, lang)
    env.filters["term"] = lambda key: i18n.term(key, lang)
    env.filters["keep_together"] = keep_together
    env.filters["link_word"] = link_word
    env.globals["lang"] = lang
    env.globals["DASH"] = i18n.DASH
    return env


def render_template(name: str, context: Mapping[str, object], lang: str) -> str:
    """Render templates/<name> in `lang` with `context` (autoescaped, strict)."""
    import jinja2

    env = make_env(lang)
    try:
        template = env.get_template(name)
        return str(template.render(**context))
    # The templates are certgen's own and every name is certgen's: a template that cannot be
    # found or rendered is a bug in certgen, never the user's input (exit 70, not 1).
    except jinja2.TemplateNotFound as exc:
        raise InternalError(f"templates/{name}: template not found") from exc
    except jinja2.TemplateError as exc:
        raise InternalError(f"templates/{name}: {exc.message}") from exc
