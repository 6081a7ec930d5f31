"""JSON with hostile shapes refused as a JSONDecodeError: the one parser of every JSON input.

The standard parser raises a RecursionError for deep nesting and a plain ValueError for an
integer of more than 4300 digits; callers that catch JSONDecodeError (and turn it into one line
naming the file and line) would let both through as tracebacks. `loads` refuses them first, at
their position, with the limits docs/limits.md lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias

JSONValue: TypeAlias = "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
"""What json.loads returns (and json.dumps takes): the one recursive type of parsed JSON in
certgen. Code that reads one narrows it with isinstance before use. (Parsed YAML is `object`:
it holds dates and keys that are not text.)"""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects any certgen JSON input may have."""

MAX_INT_DIGITS = 100
"""Most digits an integer may have (frame counts and ticks need 20)."""


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (one linear scan; strings skipped)."""
    depth = 0
    in_string = False
    escaped = False
    for pos, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise json.JSONDecodeError(
                    f"nested deeper than {MAX_DEPTH} levels", text, pos
                )
        elif char in "]}":
            depth -= 1


def loads(text: str, *, parse_constant: Callable[[str], object] | None = None) -> JSONValue:
    """json.loads, with nesting over MAX_DEPTH and integers over MAX_INT_DIGITS refused as a
    json.JSONDecodeError (so its line and column name where); `parse_constant` as json's (a
    caller that refuses NaN and Infinity)."""
    _check_depth(text)

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise json.JSONDecodeError(
                f"an integer of more than {MAX_INT_DIGITS} digits", text, max(text.find(digits), 0)
            )
        return int(digits)

    value: JSONValue = json.loads(text, parse_int=parse_int, parse_constant=parse_constant)
    return value
