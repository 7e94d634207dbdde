"""struckdown's YAML type definitions (`%%agent --types FILE`) → pydantic models for `[[name:var]]` slots.

A file holds one type per YAML document (struckdown's format: `name`, `description`, `fields`,
`extends`, `required`, `llm_config`); a directory holds `*.yaml`/`*.yml` files. A field is a type
string (`str`, `int`, `float`, `bool`, `date`, `datetime`, `time`, `duration`, `list[T]`,
`optional[T]`, or another type of the same load) or a map with `type`, `description`,
`required`/`optional`, `default`, `ge`/`gt`/`le`/`lt`, `min_length`/`max_length`, `pattern` and
`choices`. Fields are required as written; a slot without `!` (of a type without `required: true`)
gets the lenient variant, where only fields marked `required: true` must be given (struckdown's
runtime rule). The slot's value is an instance of the model.

Where struckdown warns and goes on (an unknown field type becomes `str`, a file without `name` is
skipped, unknown keys are ignored), this loader raises `TypeDefinitionError` naming the file, the
line and the problem: the cell never starts with a type other than the one written. `options:`
(slot options mapped onto fields) is refused as not supported rather than ignored.
"""

from __future__ import annotations

import datetime as dt
import difflib
import keyword
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional, TypeAlias

from pydantic import BaseModel, Field, create_model

from ..errors import TypeDefinitionError
from . import options as opts
from .program import SLOT_TYPES
from .render import is_output_class
from .types import resolve_type

PRIMITIVES: dict[str, Any] = {
    "str": str, "string": str, "int": int, "integer": int, "float": float, "number": float, "bool": bool,
    "boolean": bool, "date": dt.date, "datetime": dt.datetime, "time": dt.time, "timedelta": dt.timedelta,
    "duration": dt.timedelta,
}  # fmt: skip
TYPE_KEYS = frozenset({"name", "description", "fields", "extends", "required", "llm_config", "options"})
FIELD_KEYS = frozenset({
    "type", "description", "required", "optional", "default", "ge", "gt", "le", "lt", "min_length", "max_length",
    "pattern", "choices",
})  # fmt: skip
LLM_KEYS = frozenset({"temperature", "max_tokens", "seed", "thinking", "model"})
_WRAPPED = re.compile(r"(list|optional)\[(.+)\]", re.IGNORECASE)

TypesOption: TypeAlias = "str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, Any] | None"
"""`types=`: a YAML file or directory, several of them, or a mapping of type name → class or `DefinedType`."""


@dataclass(frozen=True, slots=True)
class DefinedType:
    """A slot type known when the cell compiles: its model as written and its lenient variant."""

    name: str
    model: type[Any]
    """Every field as written (a slot with `!`, or a type marked `required: true`)."""
    lenient: type[Any]
    """Only fields marked `required: true` must be given (a slot without `!`)."""
    required: bool = True
    """The type is always strict (`required: true` at its top level, or a class passed from Python)."""
    defaults: tuple[tuple[str, object], ...] = ()
    """Slot options the type brings (`llm_config`: `temperature`, `max_tokens`, …); the slot's own win."""

    def for_slot(self, required: bool) -> type[Any]:
        return self.model if required or self.required else self.lenient


def type_table(types: TypesOption) -> dict[str, DefinedType]:
    """`types=` as the compiler takes it; raise `TypeDefinitionError` for a bad file or class."""
    if types is None:
        return {}
    if isinstance(types, Mapping):
        return {_checked_name(name, "types="): _as_defined(name, value) for name, value in types.items()}
    paths = [types] if isinstance(types, str | os.PathLike) else list(types)
    return load_types(paths)


def _as_defined(name: str, value: object) -> DefinedType:
    if isinstance(value, DefinedType):
        return value
    if not is_output_class(value):
        raise TypeDefinitionError(f"types={{{name!r}: …}}: {value!r} is not a pydantic model, dataclass or TypedDict")
    assert isinstance(value, type)
    return DefinedType(name, value, value)


def _checked_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise TypeDefinitionError(f"{where}: type name {name!r} is not a name (letters, digits, _)")
    if resolve_type(name) is not None or name in SLOT_TYPES:
        raise TypeDefinitionError(f"{where}: type name {name!r} is a built-in slot type; choose another name")
    return name


def load_types(paths: Sequence[str | os.PathLike[str]]) -> dict[str, DefinedType]:
    """Read YAML type files (or directories of them) and build every type they define."""
    loader = _Loader()
    for path in map(Path, paths):
        if path.is_dir():
            for found in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]):
                loader.read(found)
        else:
            loader.read(path)
    return loader.build_all()


@dataclass(slots=True)
class _Definition:
    name: str
    data: dict[str, Any]
    file: str
    marks: dict[tuple[Any, ...], int]
    """Path of keys inside the document → its 1-based line."""

    def fail(self, problem: str, *path: Any) -> TypeDefinitionError:
        while path and path not in self.marks:
            path = path[:-1]
        return TypeDefinitionError(f"{self.file}, line {self.marks.get(path, 1)}: type '{self.name}': {problem}")


@dataclass(slots=True)
class _Loader:
    definitions: dict[str, _Definition] = field(default_factory=dict)
    built: dict[str, DefinedType] = field(default_factory=dict)
    building: list[str] = field(default_factory=list)

    def read(self, path: Path) -> None:
        try:
            import yaml  # optional: only --types needs it
        except ImportError:
            raise TypeDefinitionError("--types needs PyYAML: pip install 'agentcell[yaml]'") from None
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TypeDefinitionError(f"{path}: cannot read the type file: {exc}") from None
        try:
            documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
            values = list(yaml.safe_load_all(text))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "line 1"
            raise TypeDefinitionError(f"{path}, {where}: not valid YAML: {exc.problem or exc.context}") from None
        except yaml.YAMLError as exc:
            raise TypeDefinitionError(f"{path}: not valid YAML: {exc}") from None
        for node, data in zip(documents, values, strict=True):
            if data is None:
                continue
            marks: dict[tuple[Any, ...], int] = {}
            _mark(node, (), marks)
            self.add(path, data, marks)

    def add(self, path: Path, data: object, marks: dict[tuple[Any, ...], int]) -> None:
        if not isinstance(data, dict) or "name" not in data:
            raise TypeDefinitionError(f"{path}, line {marks.get((), 1)}: a type definition is a mapping with a 'name'")
        name = _checked_name(data["name"], f"{path}, line {marks.get(('name',), 1)}")
        definition = _Definition(name, data, str(path), marks)
        earlier = self.definitions.get(name)
        if earlier is not None:
            raise definition.fail(f"defined twice (also in {earlier.file})", "name")
        unknown = sorted(set(map(str, data)) - TYPE_KEYS)
        if unknown:
            raise definition.fail(f"unknown key '{unknown[0]}' (keys: {', '.join(sorted(TYPE_KEYS))})", unknown[0])
        if "options" in data:
            raise definition.fail("'options:' (slot options mapped onto fields) is not supported", "options")
        self.definitions[name] = definition

    def build_all(self) -> dict[str, DefinedType]:
        for name in self.definitions:
            self.build(name)
        return dict(self.built)

    def build(self, name: str) -> DefinedType:
        if name in self.built:
            return self.built[name]
        definition = self.definitions[name]
        if name in self.building:
            chain = " → ".join([*self.building[self.building.index(name) :], name])
            raise definition.fail(f"types refer to each other in a cycle: {chain}", "fields")
        self.building.append(name)
        try:
            return self.built.setdefault(name, self.make(definition))
        finally:
            self.building.pop()

    def make(self, d: _Definition) -> DefinedType:
        data = d.data
        parent: DefinedType | None = None
        if "extends" in data:
            parent = self.reference(d, data["extends"], ("extends",))
        fields = data.get("fields") or {}
        if not isinstance(fields, dict):
            raise d.fail("'fields' must map field names to types", "fields")
        strict: dict[str, Any] = {}
        lenient: dict[str, Any] = dict(_lenient_fields(parent)) if parent is not None else {}
        for key, spec in fields.items():
            if not isinstance(key, str) or not key.isidentifier() or key.startswith("_"):
                raise d.fail(f"field name {key!r} is not a name", "fields", key)
            annotation, info, as_written = self.field(d, key, spec)
            strict[key] = (annotation, Field(**info))
            if as_written:
                lenient[key] = (annotation, Field(**info))
            else:
                lenient[key] = (Optional[annotation], Field(**{**info, "default": None}))  # noqa: UP045
        doc = str(data["description"]) if "description" in data else None
        base = parent.model if parent is not None and issubclass(parent.model, BaseModel) else None
        model = create_model(d.name, __base__=base, __doc__=doc, **strict) if base else create_model(
            d.name, __doc__=doc, **strict)  # fmt: skip
        # A subclass of the strict model, so `isinstance(value, types["Person"].model)` holds for either.
        loose = create_model(d.name, __base__=model, __doc__=doc, **lenient)
        required = data.get("required", False)
        if not isinstance(required, bool):
            raise d.fail(f"'required' must be true or false, got {required!r}", "required")
        return DefinedType(d.name, model, loose, required, self.llm_config(d))

    def field(self, d: _Definition, key: str, spec: object) -> tuple[Any, dict[str, Any], bool]:
        """The field's annotation, its `Field()` keywords, and whether the lenient variant keeps it as written."""
        at = ("fields", key)
        if isinstance(spec, str):
            return self.resolve(d, spec, at), {"default": ...}, False
        if not isinstance(spec, dict):
            raise d.fail(f"field '{key}' must be a type name or a mapping, got {spec!r}", *at)
        unknown = sorted(set(map(str, spec)) - FIELD_KEYS)
        if unknown:
            raise d.fail(f"field '{key}': unknown key '{unknown[0]}' (keys: {', '.join(sorted(FIELD_KEYS))})",
                         *at, unknown[0])  # fmt: skip
        annotation = self.resolve(d, spec.get("type", "str"), (*at, "type"))
        if "choices" in spec:
            choices = spec["choices"]
            if not isinstance(choices, list) or not choices:
                raise d.fail(f"field '{key}': 'choices' must be a non-empty list", *at, "choices")
            annotation = Literal[tuple(choices)]
        optional = spec.get("optional", False)
        if "required" in spec:
            optional = not spec["required"]
        info = {k: spec[k] for k in ("description", "ge", "gt", "le", "lt", "min_length", "max_length", "pattern")
                if k in spec}  # fmt: skip
        if optional:
            annotation = Optional[annotation]  # noqa: UP045
        info["default"] = spec.get("default", None if optional else ...)
        try:
            Field(**info)
            create_model("_probe", probe=(annotation, Field(**info)))
        except Exception as exc:  # pydantic's own message for a constraint that does not fit the type
            raise d.fail(f"field '{key}': {str(exc).splitlines()[0]}", *at) from None
        return annotation, info, spec.get("required") is True or optional or "default" in spec

    def resolve(self, d: _Definition, written: object, at: tuple[Any, ...]) -> Any:
        if not isinstance(written, str):
            raise d.fail(f"a field type must be text, got {written!r}", *at)
        text = written.strip()
        wrapped = _WRAPPED.fullmatch(text)
        if wrapped:
            inner = self.resolve(d, wrapped.group(2), at)
            return list[inner] if wrapped.group(1).lower() == "list" else Optional[inner]  # type: ignore[valid-type]  # noqa: UP045
        if text.lower() in PRIMITIVES:
            return PRIMITIVES[text.lower()]
        return self.reference(d, text, at).model

    def reference(self, d: _Definition, written: object, at: tuple[Any, ...]) -> DefinedType:
        if isinstance(written, str) and written in self.definitions:
            return self.build(written)
        known = [*PRIMITIVES, "list[T]", "optional[T]", *self.definitions]
        close = difflib.get_close_matches(str(written), known, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        what = "parent type" if at == ("extends",) else "field type"
        raise d.fail(f"unknown {what} {written!r}{hint} (known: {', '.join(known)})", *at)

    def llm_config(self, d: _Definition) -> tuple[tuple[str, object], ...]:
        config = d.data.get("llm_config") or {}
        if not isinstance(config, dict):
            raise d.fail("'llm_config' must be a mapping", "llm_config")
        settings = []
        for key, value in config.items():
            if key not in LLM_KEYS:
                raise d.fail(f"llm_config: unknown key {key!r} (keys: {', '.join(sorted(LLM_KEYS))})",
                             "llm_config", key)  # fmt: skip
            try:
                settings.append((key, opts.check(key, value)))
            except opts.OptionValueError as exc:
                raise d.fail(f"llm_config: {exc}", "llm_config", key) from None
        return tuple(settings)


def _lenient_fields(parent: DefinedType) -> dict[str, Any]:
    model = parent.lenient
    if not issubclass(model, BaseModel):
        return {}
    return {name: (info.annotation, info) for name, info in model.model_fields.items()}


def _mark(node: Any, path: tuple[Any, ...], marks: dict[tuple[Any, ...], int]) -> None:
    """Record the line of every mapping key under `node` (PyYAML's composed nodes carry marks)."""
    marks.setdefault(path, node.start_mark.line + 1)
    if node.id == "mapping":
        for key, value in node.value:
            if key.id == "scalar":
                marks[(*path, key.value)] = key.start_mark.line + 1
                _mark(value, (*path, key.value), marks)


__all__ = ["DefinedType", "TypesOption", "load_types", "type_table"]
