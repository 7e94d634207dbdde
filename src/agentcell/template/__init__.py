"""The `%%agent` template language: `compile_template(source) -> Template`.

Pipeline, one module per stage: `lexer` (characters → tokens) → `parser` (tokens → `nodes`) →
`compiler` (nodes → `Template` of steps, with the semantic checks) → `render` (a step + the
context → `RenderedSlot`). The cell is parsed before any Jinja runs; Jinja renders only inside
text and option values, one slot at a time, so a substituted value is never parsed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import TemplateRenderError, TemplateSyntaxError, TypeDefinitionError, UndefinedVariableError
from .compiler import compile_document
from .includes import Includes
from .nodes import (
    Checkpoint,
    Const,
    Document,
    Dynamic,
    Message,
    Node,
    Option,
    Slot,
    System,
    Text,
    TextPart,
)
from .parser import parse as _parse
from .program import (
    SLOT_TYPES,
    CheckpointStep,
    ForStep,
    IfBranch,
    IfStep,
    RenderedSlot,
    SlotOptions,
    SlotSpec,
    SlotStep,
    SlotType,
    Step,
    Template,
    TemplateWarning,
    TextStep,
    TogetherStep,
    Turn,
)
from .source import Source
from .template import CompiledTemplate
from .yaml_types import DefinedType, TypesOption, load_types, type_table

__all__ = [
    "SLOT_TYPES",
    "Checkpoint",
    "CheckpointStep",
    "CompiledTemplate",
    "Const",
    "DefinedType",
    "Document",
    "Dynamic",
    "ForStep",
    "IfBranch",
    "IfStep",
    "Message",
    "Node",
    "Option",
    "RenderedSlot",
    "Slot",
    "SlotOptions",
    "SlotSpec",
    "SlotStep",
    "SlotType",
    "Step",
    "System",
    "Template",
    "TemplateRenderError",
    "TemplateSyntaxError",
    "TemplateWarning",
    "Text",
    "TextPart",
    "TextStep",
    "TogetherStep",
    "Turn",
    "TypeDefinitionError",
    "UndefinedVariableError",
    "compile_template",
    "load_types",
    "parse",
]


def parse(
    source: str, *, name: str = "<cell>", base_dir: str | Path | None = None, include_paths: Sequence[str | Path] = ()
) -> Document:
    """The syntax tree of `source` (no semantic checks); raise `TemplateSyntaxError`."""
    return _parse(Source(source, name=name), includes=Includes.create(base_dir, include_paths))


def compile_template(
    source: str,
    *,
    name: str = "<cell>",
    base_dir: str | Path | None = None,
    include_paths: Sequence[str | Path] = (),
    types: TypesOption = None,
) -> CompiledTemplate:
    """Compile a cell's template text.

    Args:
        source: the cell, as written.
        name: how errors name it (`<cell>`, a file name).
        base_dir: the directory the cell's includes are relative to (default: the working
            directory, which in a notebook is the notebook's).
        include_paths: more directories an include is looked for in, in order (`--include-path`).
        types: slot types known now (`--types`): a struckdown YAML type file or directory, several
            of them, or a mapping of name → pydantic model / dataclass / TypedDict. `[[name:var]]`
            (any case) then gives an instance of that class; the notebook is not consulted for it.

    Returns:
        The compiled `Template`: its steps, slots, free variables and warnings.

    Raises:
        TemplateSyntaxError: the template can never run; the error carries line and column (an
            error inside an included file names that file and points into it).
        TypeDefinitionError: a type file (or a `types=` entry) is malformed: names file, line, problem.
    """
    defined = type_table(types)  # first: a bad type file is reported before the template's own errors
    text = Source(source, name=name)
    return compile_document(_parse(text, includes=Includes.create(base_dir, include_paths)), text, defined=defined)
