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

A type file is untrusted input: `yaml_read` reads and parses it with bounds (size, nesting, alias
expansion), and here types may refer to types only `MAX_TYPE_DEPTH` deep and wrap `list[…]` only
`MAX_WRAPPERS` deep; whatever pydantic refuses (a field named `model_config`, a pattern that does not
compile, unhashable `choices`) is a `TypeDefinitionError` too, never its own exception.
"""

from __future__ import annotations

import datetime as dt
import difflib
import keyword
import os
import re
import reprlib
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
from .yaml_read import MAX_TYPES_BYTES, parse_documents, read_bounded

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
MAX_TYPE_DEPTH = 24
"""Types refer to types (a field's type, `extends`) at most this deep: pydantic builds a model by recursion."""
MAX_WRAPPERS = 8
"""`list[…]`/`optional[…]` nest at most this deep in one field type (`list[list[str]]` is two)."""
KNOWN_SHOWN = 40
"""An unknown type's error lists this many known names at most."""
RESERVED = frozenset(name for name in dir(BaseModel) if not name.startswith("_"))
"""Field names a pydantic model keeps for itself (`model_config`, `json`, `copy`, …), and `model_*`."""

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
        raise TypeDefinitionError(f"{where}: type name {_brief(name)} is not a name (letters, digits, _)")
    if resolve_type(name) is not None or name in SLOT_TYPES:
        raise TypeDefinitionError(f"{where}: type name {name!r} is a built-in slot type; choose another name")
    return name


def load_types(paths: Sequence[str | os.PathLike[str]]) -> dict[str, DefinedType]:
    """Read YAML type files (or directories of them) and build every type they define."""
    loader = _Loader()
    for path in map(Path, paths):
        if _is_dir(path):
            for found in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]):
                loader.read(found)
        else:
            loader.read(path)
    return loader.build_all()


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long, say: reading it says so in one line
        return False


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
        return TypeDefinitionError(_cut(f"{self.file}, line {self.marks.get(path, 1)}: type '{self.name}': {problem}"))


@dataclass(slots=True)
class _Loader:
    definitions: dict[str, _Definition] = field(default_factory=dict)
    built: dict[str, DefinedType] = field(default_factory=dict)
    building: list[str] = field(default_factory=list)
    reach: list[int] = field(default_factory=list)
    """Beside `building`: how deep the types each one refers to go so far (1: no type of this load)."""
    depth: dict[str, int] = field(default_factory=dict)
    bytes_left: int = MAX_TYPES_BYTES

    def read(self, path: Path) -> None:
        try:
            import yaml  # noqa: F401  # optional: only --types needs it
        except ImportError:
            raise TypeDefinitionError("--types needs PyYAML: pip install 'agentcell[yaml]'") from None
        raw = read_bounded(path, self.bytes_left)
        self.bytes_left -= len(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TypeDefinitionError(f"{path}: cannot read the type file: not UTF-8 text ({exc.reason} at byte "
                                      f"{exc.start:,})") from None  # fmt: skip
        for document in parse_documents(text, path):
            self.add(path, document.data, document.marks)

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
        if len(self.building) >= MAX_TYPE_DEPTH:
            chain = " → ".join([*self.building[:2], "…", *self.building[-2:], name])
            raise definition.fail(f"types refer to types more than {MAX_TYPE_DEPTH} deep ({chain}); "
                                  "nest fewer types", "name")  # fmt: skip
        self.building.append(name)
        self.reach.append(1)
        try:
            made = self.built.setdefault(name, self.make(definition))
            self.depth[name] = self.reach[-1]
            return made
        finally:
            self.building.pop()
            self.reach.pop()

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
                raise d.fail(f"field name {_brief(key)} is not a name", "fields", key)
            if key in RESERVED or key.startswith("model_"):
                raise d.fail(f"field name '{key}' is taken by pydantic's models; choose another name", "fields", key)
            annotation, info, as_written = self.field(d, key, spec)
            strict[key] = (annotation, Field(**info))
            if as_written:
                lenient[key] = (annotation, Field(**info))
            else:
                lenient[key] = (Optional[annotation], Field(**{**info, "default": None}))  # noqa: UP045
        doc = str(data["description"]) if "description" in data else None
        base = parent.model if parent is not None and issubclass(parent.model, BaseModel) else None
        model = _model(d, base, doc, strict)
        # A subclass of the strict model, so `isinstance(value, types["Person"].model)` holds for either.
        # Its validator is built when first used: the strict model's build has checked every field already,
        # and most types of a file are never given to a slot without `!` (a file of 1,000 types: half the time).
        loose = _model(d, model, doc, lenient, defer=True)
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
            raise d.fail(f"field '{key}' must be a type name or a mapping, got {_brief(spec)}", *at)
        unknown = sorted(set(map(str, spec)) - FIELD_KEYS)
        if unknown:
            raise d.fail(f"field '{key}': unknown key '{unknown[0]}' (keys: {', '.join(sorted(FIELD_KEYS))})",
                         *at, unknown[0])  # fmt: skip
        annotation = self.resolve(d, spec.get("type", "str"), (*at, "type"))
        if "choices" in spec:
            choices = spec["choices"]
            if not isinstance(choices, list) or not choices:
                raise d.fail(f"field '{key}': 'choices' must be a non-empty list", *at, "choices")
            for choice in choices:
                try:
                    hash(choice)
                except TypeError:
                    raise d.fail(f"field '{key}': a choice is text, a number or true/false, got {_brief(choice)}",
                                 *at, "choices") from None  # fmt: skip
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
        except Exception as exc:  # pydantic's own message for a keyword that does not fit
            raise d.fail(f"field '{key}': {_pydantic_problem(exc)}", *at) from None
        return annotation, info, spec.get("required") is True or optional or "default" in spec

    def resolve(self, d: _Definition, written: object, at: tuple[Any, ...]) -> Any:
        if not isinstance(written, str):
            raise d.fail(f"a field type must be text, got {_brief(written)}", *at)
        text, wrappers = written.strip(), list[str]()
        while wrapped := _WRAPPED.fullmatch(text):  # a loop, not recursion: `list[` ×2000 is one error
            if len(wrappers) == MAX_WRAPPERS:
                raise d.fail(f"field type {_brief(written)} nests list[…]/optional[…] more than {MAX_WRAPPERS} deep",
                             *at)  # fmt: skip
            wrappers.append(wrapped.group(1).lower())
            text = wrapped.group(2).strip()
        inner = PRIMITIVES[text.lower()] if text.lower() in PRIMITIVES else self.reference(d, text, at).model
        for kind in reversed(wrappers):
            inner = list[inner] if kind == "list" else Optional[inner]  # type: ignore[valid-type]  # noqa: UP045
        return inner

    def reference(self, d: _Definition, written: object, at: tuple[Any, ...]) -> DefinedType:
        if isinstance(written, str) and written in self.definitions:
            found = self.build(written)
            # Built earlier, a long chain does not show on the stack: its depth is kept for each type.
            if self.depth[written] + 1 > MAX_TYPE_DEPTH:
                raise d.fail(f"types refer to types more than {MAX_TYPE_DEPTH} deep (through '{written}'); "
                             "nest fewer types", *at)  # fmt: skip
            self.reach[-1] = max(self.reach[-1], self.depth[written] + 1)
            return found
        known = [*PRIMITIVES, "list[T]", "optional[T]", *self.definitions]
        close = difflib.get_close_matches(str(written)[:200], known, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        what = "parent type" if at == ("extends",) else "field type"
        shown = ", ".join(known[:KNOWN_SHOWN]) + (f", … ({len(known):,} in all)" if len(known) > KNOWN_SHOWN else "")
        raise d.fail(f"unknown {what} {_brief(written)}{hint} (known: {shown})", *at)

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


def _model(d: _Definition, base: type[Any] | None, doc: str | None, fields: dict[str, Any], *,
           defer: bool = False) -> type[Any]:  # fmt: skip
    """`create_model`, with pydantic's refusal (a pattern that does not compile, `ge` on text, …) in one
    line naming the field: only on failure is each field built alone to find which one it was."""
    kwargs: dict[str, Any] = {"defer_build": True} if defer else {}
    try:
        return create_model(d.name, __base__=base, __doc__=doc, __cls_kwargs__=kwargs, **fields) if base else (
            create_model(d.name, __doc__=doc, __cls_kwargs__=kwargs, **fields))  # fmt: skip
    except Exception as exc:  # every refusal becomes one line naming the field or the type
        problem = _pydantic_problem(exc)
    for key, spec in fields.items():
        try:
            create_model("_probe", probe=spec)
        except Exception as exc:
            raise d.fail(f"field '{key}': {_pydantic_problem(exc)}", "fields", key) from None
    raise d.fail(f"cannot build the type: {problem}", "fields")


def _pydantic_problem(exc: Exception) -> str:
    """pydantic's message without its nesting (`Error building "model" validator:` …) on one line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    kept = [line.removeprefix("SchemaError: ") for line in lines
            if not re.match(r"(SchemaError: )?(Error building \"[\w-]+\" validator|Field \")", line)]  # fmt: skip
    text = " ".join(kept or lines[:1]) or type(exc).__name__
    return text if len(text) <= 300 else f"{text[:300]}…"


def _cut(message: str, limit: int = 600) -> str:
    """A message cut in the middle past `limit` characters (a name or key in a hostile file may be huge)."""
    return message if len(message) <= limit else f"{message[: limit * 2 // 3]}…{message[-limit // 4 :]}"


def _brief(value: object) -> str:
    """`repr(value)` cut to a readable length (a hostile file's value may be a megabyte long)."""
    return _SHORT.repr(value)


_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxlevel = 80, 80, 6, 6, 3


def _lenient_fields(parent: DefinedType) -> dict[str, Any]:
    model = parent.lenient
    if not issubclass(model, BaseModel):
        return {}
    return {name: (info.annotation, info) for name, info in model.model_fields.items()}


__all__ = ["DefinedType", "TypesOption", "load_types", "type_table"]
