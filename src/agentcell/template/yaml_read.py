"""Reading `--types` YAML without trusting it: the work is bounded by the file, never by what it says.

A type file is user input like any other, and YAML lets a few hundred bytes describe far more:
aliases that refer to aliases make a graph whose every path is a different value (nine levels of
six-way aliases is ten million paths from 600 bytes), an alias can point into the value that holds
it, and brackets nest until the composer's recursion runs out. So, before anything walks or builds
from a document:

* the file is a regular file (a FIFO would block the kernel, `/dev/zero` never ends) of at most
  `MAX_TYPES_BYTES` (all files of one load together), read with that bound (`files.read_regular`);
* values nest at most `MAX_NESTING` deep (checked on the parser's event stream, which is flat);
* the composed node graph is walked once per node: a value that contains itself is refused, and
  aliases may repeat at most `MAX_ALIAS_VALUES` values beyond those written (the count is exact:
  the size the document would have with every alias copied out, computed without copying);
* text with a lone surrogate (`"\\ud800"`) is refused: no model can be built from it.

Each failure is a `TypeDefinitionError` naming the file and, where there is one, the line. libyaml
parses when PyYAML has it (fast); its composer recurses in C, which the nesting check keeps shallow.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TypeDefinitionError
from .files import NotAFile, TooLarge, read_regular, shown

MAX_TYPES_BYTES = 256 * 1024
"""Most bytes of type files one load reads, all files together: about a thousand types (a type is a
few hundred bytes, and building one takes pydantic a millisecond or two)."""
MAX_NESTING = 32
"""Deepest nesting of YAML values (a type file needs about five levels)."""
MAX_ALIAS_VALUES = 10_000
"""Most values aliases may add to a document beyond those written in it."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_BRACKET = re.compile(r"[\[\]{}]")
_PYTHON_BRACKETS = 1_000
"""Without libyaml, a bound checked on the text itself (see `_check_brackets`)."""
_REPARSE_CHARS = 64 * 1024
"""A libyaml syntax error is re-read by PyYAML (for its clearer words) only this far into the file."""


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """One non-empty document of a type file: its value, and the line of every mapping key in it."""

    data: object
    marks: dict[tuple[Any, ...], int]
    """Path of keys inside the document → its 1-based line."""


def read_bounded(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `path` (`files.read_regular`); `TypeDefinitionError` else."""
    try:
        return read_regular(path, limit)
    except NotAFile as exc:
        raise TypeDefinitionError(f"{path}: is {exc}, not a file; --types reads YAML files") from None
    except TooLarge:
        raise TypeDefinitionError(
            f"{path}: too large: --types reads at most {MAX_TYPES_BYTES:,} bytes of type files (all together)"
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TypeDefinitionError(f"{shown(str(path))}: cannot read the type file: {reason}") from None


def parse_documents(text: str, path: Path) -> list[YamlDocument]:
    """Every non-empty document of `text`, checked as the module docstring says; raise `TypeDefinitionError`."""
    import yaml  # optional: only --types needs it (the caller checked it is there)

    loader_class = _loader_class()
    if not issubclass(loader_class, yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else ()):
        _check_brackets(text, path)
    try:
        _check_nesting(yaml.parse(text, Loader=loader_class), path)
        loader = loader_class(text)
        try:
            documents = []
            while loader.check_node():
                node = loader.get_node()
                _check_graph(node, path)
                marks: dict[tuple[Any, ...], int] = {}
                _mark(node, (), marks)
                data = loader.construct_document(node)
                if data is not None:
                    documents.append(YamlDocument(data, marks))
            return documents
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        exc = _in_python_words(text, exc)
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "line 1"
        raise TypeDefinitionError(f"{path}, {where}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise TypeDefinitionError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None


def _in_python_words(text: str, exc: Any) -> Any:
    """libyaml's syntax errors say less than PyYAML's (`found character that cannot start any token`
    against `found character '\\t' that …`): parse the text up to the error again with PyYAML's own
    (flat, event-level) parser and take its error if it is at the same line."""
    import yaml

    mark = exc.problem_mark or exc.context_mark
    if mark is None or not isinstance(exc, yaml.scanner.ScannerError | yaml.parser.ParserError):
        return exc
    prefix = "".join(text.splitlines(keepends=True)[: mark.line + 2])
    if len(prefix) > _REPARSE_CHARS or _past_brackets(prefix, MAX_NESTING) is not None:
        return exc  # PyYAML's scanner is slow, and quadratic in nested brackets
    try:
        for _ in yaml.parse(prefix, Loader=yaml.SafeLoader):
            pass
    except yaml.MarkedYAMLError as again:
        again_mark = again.problem_mark or again.context_mark
        if again_mark is not None and again_mark.line == mark.line:
            return again
    return exc


@functools.cache
def _loader_class() -> Any:
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class BoundedLoader(base):  # type: ignore[misc]
        """The safe loader, with numbers past Python's digit limit a YAML error (with its line)."""

        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a number of {len(str(node.value)):,} digits is too long", node.start_mark
                ) from None

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader


def _check_brackets(text: str, path: Path) -> None:
    """Without libyaml: refuse brackets nested past `_PYTHON_BRACKETS` before PyYAML's scanner sees them
    (it looks back over every open bracket at each token: 100,000 `[` would take hours). Counting
    brackets in quotes and comments too only over-counts, and only by the unclosed ones."""
    past = _past_brackets(text, _PYTHON_BRACKETS)
    if past is not None:
        line = text.count("\n", 0, past) + 1
        raise TypeDefinitionError(f"{path}, line {line}: brackets are nested more than {_PYTHON_BRACKETS} deep")


def _past_brackets(text: str, limit: int) -> int | None:
    """Where `[`/`{` first stand more than `limit` deep in `text` (quotes not told apart), or `None`."""
    depth = 0
    for match in _BRACKET.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        if depth > limit:
            return match.start()
    return None


def _check_nesting(events: Any, path: Path) -> None:
    import yaml

    depth = 0
    for event in events:
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise TypeDefinitionError(
                    f"{path}, line {event.start_mark.line + 1}: values are nested more than {MAX_NESTING} deep"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _children(node: Any) -> list[Any]:
    if node.id == "mapping":
        return [part for pair in node.value for part in pair]
    return list(node.value) if node.id == "sequence" else []


def _check_graph(root: Any, path: Path) -> None:
    """Walk each node once: refuse a value inside itself, aliases adding too much, and lone surrogates.

    `size[node]` is the node's size with every alias copied out (1 + its children's sizes); each
    edge to a node already complete is a repeat through an alias and adds that node's whole size.
    """
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    repeated = 0
    stack: list[tuple[Any, list[Any]]] = [(root, _children(root))]
    open_nodes.add(id(root))
    while stack:
        node, todo = stack[-1]
        if not todo:
            stack.pop()
            open_nodes.discard(id(node))
            size[id(node)] = 1 + sum(size[id(child)] for child in _children(node))
            continue
        child = todo.pop()
        if id(child) in open_nodes:
            raise TypeDefinitionError(f"{path}, line {child.start_mark.line + 1}: an alias refers to the value "
                                      "that contains it (a recursive alias); YAML types are trees")  # fmt: skip
        if id(child) in size:
            repeated += size[id(child)]
            if repeated > MAX_ALIAS_VALUES:
                raise TypeDefinitionError(
                    f"{path}, line {child.start_mark.line + 1}: aliases repeat more than {MAX_ALIAS_VALUES:,} "
                    "values (each alias copies the value it names; an alias of aliases multiplies them)"
                )
            continue
        if child.id == "scalar" and _SURROGATE.search(child.value):
            raise TypeDefinitionError(
                f"{path}, line {child.start_mark.line + 1}: text with a lone surrogate (\\ud800–\\udfff) is not text"
            )
        open_nodes.add(id(child))
        stack.append((child, _children(child)))


def _mark(node: Any, path: tuple[Any, ...], marks: dict[tuple[Any, ...], int]) -> None:
    """Record the line of every mapping key under `node` (composed nodes carry marks); bounded by
    `_check_graph` (at most `MAX_ALIAS_VALUES` repeats) and `MAX_NESTING` (the recursion's depth)."""
    marks.setdefault(path, node.start_mark.line + 1)
    if node.id == "mapping":
        for key, value in node.value:
            if key.id == "scalar":
                marks[(*path, key.value)] = key.start_mark.line + 1
                _mark(value, (*path, key.value), marks)


__all__ = ["MAX_ALIAS_VALUES", "MAX_NESTING", "MAX_TYPES_BYTES", "YamlDocument", "parse_documents", "read_bounded"]
