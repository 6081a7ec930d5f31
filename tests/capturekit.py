"""Comparing two Captures field by field (the fast and exact readers must agree on every one)."""

from __future__ import annotations

import dataclasses

import numpy as np

from certgen.captures.model import Capture, FrameTypeCodes


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype == object or b.dtype == object:
            return bool(a.tolist() == b.tolist())
        return bool(np.array_equal(a, b, equal_nan=True))
    if isinstance(a, FrameTypeCodes) and isinstance(b, FrameTypeCodes):  # tables may differ
        return _same(a.names_of(), b.names_of())
    if isinstance(a, tuple) and isinstance(b, tuple):  # e.g. measured: (column, array) pairs
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def differing_fields(a: Capture, b: Capture) -> list[str]:
    """Names of the fields where two captures differ (arrays compared value for value, NaN
    equal to NaN; FrameType names and None compared as Python objects)."""
    return [f.name for f in dataclasses.fields(Capture)
            if f.name not in _FORMS and not _same(getattr(a, f.name), getattr(b, f.name))]


_FORMS = ("frame_type_codes",)
"""Another form of a compared field (frame_types is made from it), which one reader gives and
another does not: not compared itself."""
