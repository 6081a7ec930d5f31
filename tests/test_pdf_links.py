"""A PDF's links are what its page wrote: a relative link stays relative (resolved by the viewer
against where the PDF is opened, as the page's is), never a file:// address of the folder that
built it, which made every explainer PDF differ from one checkout to the next."""

from __future__ import annotations

import io

import pypdf

from certgen.render.pdf import html_to_pdf
from certgen.support.paths import templates_dir

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>
<p><a href="reading-your-certificate.html">sibling</a> <a href="../index.html#samples">index</a>
<a href="https://lab.example.org/x?y=1">absolute</a> <a href="#top">here</a></p>
<h1 id="top">Top</h1></body></html>"""


def _uris(pdf: bytes) -> list[str]:
    out = []
    for page in pypdf.PdfReader(io.BytesIO(pdf)).pages:
        for annot in page.get("/Annots") or ():
            action = annot.get_object().get("/A")
            if action is not None and action.get("/S") == "/URI":
                out.append(str(action["/URI"]))
    return out


def test_relative_links_stay_as_the_page_wrote_them() -> None:
    pdf = html_to_pdf(PAGE, lang="en", title="t", author="a", created=None)
    assert _uris(pdf) == ["reading-your-certificate.html", "../index.html#samples",
                          "https://lab.example.org/x?y=1"]
    root = str(templates_dir().parent).encode()
    assert root not in pdf and b"file:" not in pdf
