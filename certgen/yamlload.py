"""YAML with duplicate keys caught: the one loader for card.yaml, series files and lab files.

PyYAML keeps the last of two equal keys silently; a typo'd duplicate in a certificate's input
must be an error instead. `load_yaml` parses with SafeLoader semantics (no Python objects) and
returns every duplicate with its line, so each caller can word the refusal its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml


@dataclass(frozen=True)
class DuplicateKey:
    """A mapping key seen twice: the key, the line of the repeat and of the first (1-based)."""

    key: str
    line: int
    first_line: int


class _Loader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys instead of keeping the last silently."""

    duplicates: list[DuplicateKey]


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    first_line: dict[Any, int] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found an unhashable key", key_node.start_mark
            ) from None
        line = key_node.start_mark.line + 1
        if key in mapping:
            loader.duplicates.append(DuplicateKey(str(key), line, first_line[key]))
            continue  # the first value stays; the caller refuses the file anyway
        first_line[key] = line
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str) -> tuple[Any, list[DuplicateKey]]:
    """YAML text -> (data, every duplicate key). A syntax error raises yaml.YAMLError as is."""
    loader = _Loader(text)
    loader.duplicates = []
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    return data, list(loader.duplicates)
