"""Renderers: record → HTML string (html.py), HTML → PDF bytes (pdf.py), SVG charts, i18n.

Kept empty on purpose so that importing `certgen.render.i18n` does not pull in WeasyPrint.
"""
