"""YAML with duplicate keys caught: the one loader for card.yaml, series files and lab files.

PyYAML keeps the last of two equal keys silently; a typo'd duplicate in a certificate's input
must be an error instead. `load_yaml` parses with SafeLoader semantics (no Python objects) and
returns every duplicate with its line, so each caller can word the refusal its own way.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from datetime import date

import yaml

from certgen.support.untrusted import shorten


@dataclass(frozen=True)
class DuplicateKey:
    """A mapping key seen twice: the key, the line of the repeat and of the first (1-based)."""

    key: str
    line: int
    first_line: int


MAX_DEPTH = 64
"""Deepest nesting of mappings and lists a YAML input may have (docs/limits.md)."""

MAX_INT_DIGITS = 100
"""Most digits a YAML integer may have (Python refuses more than 4300 with a ValueError)."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys instead of keeping the last silently,
    and refuses deep nesting, huge integers and impossible dates as a MarkedYAMLError."""

    duplicates: list[DuplicateKey]
    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        """Compose one node, refusing nesting deeper than MAX_DEPTH (a RecursionError else)."""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isdigit() for ch in str(node.value))
    if digits > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of more than {MAX_INT_DIGITS} digits", node.start_mark
        )
    return yaml.SafeLoader.construct_yaml_int(loader, node)


def _construct_timestamp(loader: _Loader, node: yaml.ScalarNode) -> date:
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError) as exc:
        # 2026-02-30 matches YAML's date pattern; the calendar refuses it (ValueError).
        raise yaml.constructor.ConstructorError(
            None, None, f"not a calendar date: {node.value!r} ({exc})", node.start_mark
        ) from None


def _construct_mapping(loader: _Loader, node: yaml.MappingNode,
                       deep: bool = False) -> dict[Hashable, object]:
    loader.flatten_mapping(node)
    mapping: dict[Hashable, object] = {}
    first_line: dict[Hashable, int] = {}
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
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


def load_yaml(text: str) -> tuple[object, list[DuplicateKey]]:
    """YAML text -> (data, every duplicate key). A syntax error raises yaml.YAMLError as is."""
    try:
        loader = _Loader(text)  # the reader checks every character here
    except yaml.reader.ReaderError as exc:
        # A raw NUL or other control character: its str() spans lines; give it a Mark instead.
        line = text.count("\n", 0, exc.position)
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1)
        mark = yaml.Mark("<input>", exc.position, line, column, None, None)  # type: ignore[arg-type]
        character = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise yaml.MarkedYAMLError(
            None, None, f"unacceptable character #x{character:04x}: {exc.reason}", mark
        ) from None
    loader.duplicates = []
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    return data, list(loader.duplicates)


class YamlDocumentError(ValueError):
    """A YAML input that cannot be read: the message names the source (and line when known);
    the caller raises it as its own error class (LabError, RevocationsError, ...)."""


def load_yaml_document(data: bytes, source: str) -> tuple[object, list[DuplicateKey]]:
    """UTF-8 bytes (a BOM allowed) -> load_yaml's (data, duplicates); an undecodable text or a
    YAML error is a YamlDocumentError worded "<source>[:<line>]: invalid YAML: <problem>"."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise YamlDocumentError(f"{source}: expected UTF-8 text") from None
    try:
        return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        line, problem = yaml_problem(text, exc)
        where = f"{source}:{line}" if line is not None else source
        raise YamlDocumentError(f"{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise YamlDocumentError(f"{source}: invalid YAML: {exc}") from None


def yaml_problem(text: str, exc: yaml.MarkedYAMLError) -> tuple[int | None, str]:
    """(1-based line, what) of a YAML error as messages word it: a value this loader refuses
    (an impossible date, a huge integer) names its field, as a schema error does
    (`certificate.issued: not a calendar date: '2026-02-30' (…)`); a syntax error is
    `invalid YAML: <problem>`."""
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = exc.problem or exc.context or "invalid YAML"
    if isinstance(exc, yaml.constructor.ConstructorError) and exc.problem_mark is not None:
        path = _value_path(text, exc.problem_mark.index)
        if path:
            return line, f"{field_path(path)}: {problem}"
    return line, f"invalid YAML: {problem}"


def _value_path(text: str, index: int) -> tuple[object, ...] | None:
    """The keys and list indexes leading to the value that starts at character `index` of a
    YAML text, or None (the text is composed only: no value is constructed, so a value that
    cannot be, such as 2026-02-30, is still found)."""
    loader = _Loader(text)
    loader.duplicates = []
    try:
        root = loader.get_single_node()

        def walk(node: yaml.Node, path: tuple[object, ...]) -> tuple[object, ...] | None:
            if node.start_mark.index == index and not isinstance(
                    node, yaml.MappingNode | yaml.SequenceNode):
                return path
            children: list[tuple[object, yaml.Node]] = []
            if isinstance(node, yaml.MappingNode):
                children = [(loader.construct_object(k, deep=True), v) for k, v in node.value]
            elif isinstance(node, yaml.SequenceNode):
                children = list(enumerate(node.value))
            for key, child in children:
                found = walk(child, (*path, key))
                if found is not None:
                    return found
            return None

        return None if root is None else walk(root, ())
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def key_lines(text: str) -> list[tuple[tuple[object, ...], int]]:
    """Every mapping key and list item of a YAML text, in document order: (its path, its
    1-based line). A path is the keys and list indexes from the top (`("grade_lines", "gold")`,
    `("grades", 1)`); a duplicate key appears once per occurrence, so a caller can name where a
    validation error points and where each repeat is. The text must load (call load_yaml first).
    """
    loader = _Loader(text)
    loader.duplicates = []
    out: list[tuple[tuple[object, ...], int]] = []
    try:
        root = loader.get_single_node()

        def walk(node: yaml.Node, path: tuple[object, ...]) -> None:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    key = loader.construct_object(key_node, deep=True)
                    out.append(((*path, key), key_node.start_mark.line + 1))
                    walk(value_node, (*path, key))
            elif isinstance(node, yaml.SequenceNode):
                for index, item in enumerate(node.value):
                    out.append(((*path, index), item.start_mark.line + 1))
                    walk(item, (*path, index))

        if root is not None:
            walk(root, ())
    finally:
        loader.dispose()
    return out


def shown_value(value: object) -> str:
    """A YAML value as a message shows it: scalars quoted as written, containers by kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "'true'" if value else "'false'"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, date):
        return repr(value.isoformat())
    # Shortened: a 20 MB customer name must not become a 20 MB message.
    return shorten(repr(str(value)) if not isinstance(value, str) else repr(value), 200)


def field_path(loc: tuple[object, ...]) -> str:
    """A field's place in a file as messages name it: `runs[2].soft_limit.justification`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + shorten(str(part))  # a key may be 100 KB long
    return out
