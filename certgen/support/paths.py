"""Where the templates and locales live: the source checkout or the installed wheel.

In a source checkout (and an editable install) they are the top-level `templates/` and
`locales/` folders of the repository. A wheel carries them as `certgen/_data/templates` and
`certgen/_data/locales` (copied there by setup.py's build hook), because top-level folders
are not part of an installed package. The packaged copy wins when it exists.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # certgen/, this file being certgen/support/paths.py


def _data_dir(name: str) -> Path:
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parent / name


@cache
def templates_dir() -> Path:
    """The folder of Jinja templates, CSS, fonts.conf and bundled fonts (resolved, absolute)."""
    return _data_dir("templates")


@cache
def locales_dir() -> Path:
    """The folder of `<lang>/LC_MESSAGES/*.po` catalogs, explainers and the glossary."""
    return _data_dir("locales")


def fonts_dir() -> Path:
    """The bundled fonts (DejaVu: Latin, Portuguese accents, Cyrillic)."""
    return templates_dir() / "fonts"
