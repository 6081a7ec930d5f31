"""The software stack that built a record (certgen.support.software; docs/reproducibility.md).
"""

from __future__ import annotations

from pydantic import Field

from certgen.model.base import Frozen


class DataDigests(Frozen):
    """`software.digests`: SHA-256 over the data files documents are made from (sorted relative
    paths and contents; hidden files and caches left out)."""

    templates: str = Field(description="templates/ without fonts/: Jinja templates, CSS, fonts.conf.")
    locales: str = Field(description="locales/: message catalogs, explainers, glossary.")
    fonts: str = Field(description="templates/fonts/: the bundled fonts.")
    rules: str = Field(description="The packaged SOP rules files (certgen/sop/*.yaml).")


class Software(Frozen):
    """`software`: the software that built the record and renders its documents
    (certgen.support.software; docs/reproducibility.md)."""

    certgen: str = Field(description="certgen's version.")
    commit: str | None = Field(
        description="certgen's git commit when the environment states it (CERTGEN_COMMIT), "
                    "else null.")
    python: str = Field(description="The Python version, e.g. 3.11.7.")
    weasyprint: str = Field(description="The WeasyPrint version (HTML to PDF).")
    pydyf: str = Field(description="The pydyf version (WeasyPrint's PDF writer).")
    pango: str = Field(description="The Pango library version (text layout).")
    harfbuzz: str = Field(description="The HarfBuzz library version (shaping, font subsets).")
    digests: DataDigests = Field(description="Digests of the templates, locales, fonts and rules.")
