"""`nodes.Document` → `CompiledTemplate`: the semantic checks, and the steps in order.

Rules decided here:

* The conversation a slot sees: the `<user>`/`<assistant>` turns and the plain text since the
  previous slot (or checkpoint), in order; consecutive plain texts form one user turn. Each turn is
  stripped; a whitespace-only turn is dropped; a slot whose turns do not end on a user turn (e.g.
  nothing above it) gets `Turn("user", "")` last. A guard's text is its own prompt, as for any slot;
  the engine keeps it out of the shared conversation. Text before an `{% if %}`/`{% for %}` that
  holds slots, and text at the end of a branch or loop body, becomes a `TextStep`: it joins the
  prompt of whichever slot the run reaches next.
* `<system>`/`<header>` (`scope.py`): the blocks in force at a slot (global ones across checkpoints,
  local ones until the next; each adds to those in force unless it says `replace`), rendered at that
  slot. (Before issue 14 a plain `<system>` after a slot replaced the earlier ones; struckdown's
  documented semantics, which we follow now, append.)
* A cell with no slot gets `[[answer]]` at its end (`SlotSpec.implicit`). Text or `<system>` that no
  slot follows is a `TemplateWarning`, never silently dropped.
* A slot name is used once per segment (twice is an error naming both places); after a checkpoint
  it may be used again: the latest value wins, the earlier stays in the transcript (`x#2`). Slots in
  exclusive `{% if %}` branches may share a name. Auto-names are `_type_1`, `_type_2`, … per type.
* `<together>` holds slots (and text); none of them may read a sibling's answer. Checkpoints,
  `<system>`, `<header>`, `<together>` and Jinja blocks with slots cannot be inside one, and the
  first three cannot be inside `{% if %}`/`{% for %}` either.
* `{% set %}` lasts until the end of its text (the next slot or tag): each text is its own Jinja
  template. A Jinja block without slots must close inside its text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn, assert_never

from . import types
from .analysis import Analyzer
from .jinja import CompiledExpr, CompiledText, compile_text, make_environment
from .kinds import DEFAULT
from .nodes import (
    Checkpoint,
    Document,
    ForBlock,
    Header,
    IfBlock,
    Include,
    Message,
    Node,
    Slot,
    System,
    Text,
    Together,
)
from .program import (
    CheckpointStep,
    SlotSpec,
    SlotStep,
    Step,
    TemplateWarning,
)
from .render import SlotRenderer, TurnSource
from .scope import Blocks
from .slotcompile import SlotCompiler, SlotParts
from .source import Source
from .structure import StructureCompiler
from .template import CompiledTemplate, Need, VariableUse
from .yaml_types import DefinedType

RESERVED = frozenset({"and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None"})
"""Slot names `{{ }}` could not read back: Jinja takes them as literals or operators."""


def compile_document(
    document: Document, source: Source, *, defined: Mapping[str, DefinedType] | None = None
) -> CompiledTemplate:
    """Check `document` and build its program; raise `TemplateSyntaxError` at the first problem.

    `defined`: slot types given when compiling (`--types`); a slot of one is bound to its class now.
    """
    return _Compiler(source, defined or {}).build(document)


class _Compiler(StructureCompiler):
    def __init__(self, source: Source, defined: Mapping[str, DefinedType]) -> None:
        self.defined = defined
        self.root = source
        self.source = source
        self.env = make_environment()
        self.analyzer = Analyzer(self.env)
        self.steps: list[Step] = []
        self.specs: list[SlotSpec] = []
        self.segment_names: dict[str, SlotSpec] = {}
        self.uses_of: dict[str, tuple[int, int]] = {}
        """Name → the segment it was last used in and its use number (`x#2` after a checkpoint)."""
        self.auto_counts: dict[str, int] = {}
        self.segment = 0
        self.system = Blocks()
        self.header = Blocks()
        self.pending: list[TurnSource] = []
        self.unsent: Text | None = None
        self.uses: list[VariableUse] = []
        self.needs: list[Need] = []
        self.warnings: list[TemplateWarning] = []
        self.assigned: set[str] = set()
        self.bound: list[frozenset[str]] = []
        """Loop variables of the `{% for %}` blocks being compiled (not context variables)."""
        self.within: list[str] = []
        """The structural blocks being compiled (`if`, `for`, `together`), outermost first."""

    def build(self, document: Document) -> CompiledTemplate:
        self.walk(document.nodes)
        if not self.specs:
            line, col = self.source.position(len(self.source.text))
            spec = SlotSpec(name="answer", type=DEFAULT, line=line, col=col, implicit=True)
            self.add_step(spec, SlotParts(DEFAULT, False))
        else:
            self.warn_unsent(None)
        return CompiledTemplate(
            name=self.root.name,
            source=self.root.text,
            steps=tuple(self.steps),
            slots=tuple(self.specs),
            variables=self.free_variables(),
            warnings=tuple(self.warnings),
            sha256=hashlib.sha256(self.root.text.encode("utf-8", "surrogatepass")).hexdigest(),
            uses=tuple(self.uses),
            assigned=frozenset(self.assigned),
            environment=self.env,
            needs=tuple(self.needs),
        )

    def walk(self, nodes: tuple[Node, ...]) -> None:
        for node in nodes:
            match node:
                case Text():
                    self.add_text(TurnSource("text", self.text(node)), node)
                case Message():
                    self.add_text(TurnSource(node.role, self.text(node.body)), node.body)
                case System() | Header():
                    self.add_system(node)
                case Slot():
                    self.add_slot(node)
                case Checkpoint():
                    self.add_checkpoint(node)
                case Together():
                    self.add_together(node)
                case Include():
                    with self.included(node):
                        self.walk(node.nodes)
                case IfBlock():
                    self.add_if(node)
                case ForBlock():
                    self.add_for(node)
                case _:
                    assert_never(node)

    def fail(self, message: str, line: int, col: int) -> NoReturn:
        self.source.fail(message, line, col)

    @contextmanager
    def included(self, node: Include) -> Iterator[None]:
        outer = self.source
        self.source = Source(node.text, name=node.name)
        try:
            yield
        finally:
            self.source = outer

    def text(self, node: Text) -> CompiledText:
        compiled = compile_text(node, self.env, self.source, self.analyzer)
        self.assigned |= compiled.assigned
        return compiled

    def add_text(self, source: TurnSource, node: Text) -> None:
        self.pending.append(source)
        if self.unsent is None and source.text.has_content:
            self.unsent = node

    def free_variables(self) -> frozenset[str]:
        """Names some slot reads that no earlier slot answers: they must come from the context."""
        order: dict[str, int] = {}
        for index, spec in enumerate(self.specs):
            order.setdefault(spec.name, index)
        return frozenset(name for use in self.uses for name in use.names if order.get(name, len(order)) >= use.slot)

    # -- structure ------------------------------------------------------------------------------
    def add_system(self, node: System | Header) -> None:
        tag = "system" if isinstance(node, System) else "header"
        self.refuse_inside(f"<{tag}>", node.line, node.col)
        blocks = self.system if isinstance(node, System) else self.header
        blocks.add(self.text(node.body), node)

    def add_checkpoint(self, node: Checkpoint) -> None:
        self.refuse_inside("<checkpoint>", node.line, node.col)
        self.warn_unsent(node)
        self.segment += 1
        self.segment_names = {}
        self.steps.append(CheckpointStep(name=node.name, segment=self.segment, line=node.line))
        self.system.checkpoint()
        self.header.checkpoint()

    def warn_unsent(self, checkpoint: Checkpoint | None) -> None:
        if self.unsent is not None:
            line, col = self.first_visible(self.unsent)
            where = (
                "the last slot"
                if checkpoint is None
                else f"the last slot of this segment (the <checkpoint> at line {checkpoint.line} "
                "starts a new conversation)"
            )
            message = f"text after {where} is never sent to the model; add a slot below it or remove it"
            self.warnings.append(TemplateWarning(message=message, line=line, col=col))
        late = self.system.late or self.header.late
        if checkpoint is None and late is not None:
            tag = "system" if isinstance(late, System) else "header"
            message = f"<{tag}> after the last slot applies to no slot"
            self.warnings.append(TemplateWarning(message=message, line=late.line, col=late.col))
        self.pending, self.unsent = [], None

    def first_visible(self, node: Text) -> tuple[int, int]:
        for part in node.parts:
            if part.kind == "data" and not part.source.strip():
                continue
            if part.kind in ("block", "comment"):
                continue
            skipped = len(part.source) - len(part.source.lstrip())
            return self.source.position(part.pos + skipped)
        return node.line, node.col

    def add_slot(self, node: Slot) -> None:
        parts = SlotCompiler(self.source, self.env, self.defined).parts(node)
        bound = self.defined.get(parts.class_name or "")
        if bound is not None:
            parts.fixed = {**dict(bound.defaults), **parts.fixed}  # the type's llm_config; the slot's own win
        self.warnings.extend(parts.warnings)
        if node.name in RESERVED:
            self.fail(
                f"slot name '{node.name}' is a Jinja keyword, so {{{{ }}}} could not read it; choose another name",
                node.line,
                node.col,
            )
        name = node.name or self.auto_name(parts.action or parts.class_name or parts.slot_type)
        if parts.slot_type == "halt" and self.within and self.within[-1] != "together":
            self.fail("a [[halt:…]] guard cannot be inside {% if %} or {% for %}: put it before the block",
                      node.line, node.col)  # fmt: skip
        first = self.segment_names.get(name)
        if first is not None:
            self.fail(
                f"duplicate slot name '{name}': [[{name}]] is already at line {first.line}, column {first.col} in "
                "this segment (a name may be used again only after a <checkpoint>)",
                node.line,
                node.col,
            )
        if node.type is None and not node.action and node.name in types.KNOWN_TYPES:
            message = f"[[{name}]] is a text slot named '{name}'; for a {name} value write [[{name}:]]"
            self.warnings.append(TemplateWarning(message=message, line=node.line, col=node.col))
        segment, occurrence = self.uses_of.get(name, (self.segment, 0))
        occurrence = occurrence if segment == self.segment and occurrence else occurrence + 1
        self.uses_of[name] = (self.segment, occurrence)
        spec = SlotSpec(
            name=name,
            type=parts.slot_type,
            required=parts.required,
            auto_named=node.name is None,
            line=node.line,
            col=node.col,
            quantifier=node.quantifier,
            class_name=parts.class_name,
            action=parts.action,
            occurrence=occurrence,
            in_loop="for" in self.within,
            conditional="if" in self.within,
        )
        self.add_needs(spec)
        self.add_step(spec, parts)

    def add_needs(self, spec: SlotSpec) -> None:
        if spec.class_name is not None and spec.class_name not in self.defined:
            self.needs.append(Need(spec.class_name, "class", spec.line, spec.col, self.origin()))
        if spec.action is not None:
            self.needs.append(Need(spec.action, "action", spec.line, spec.col, self.origin()))

    def origin(self) -> tuple[str, str] | None:
        return None if self.source is self.root else (self.source.name, self.source.text)

    def auto_name(self, kind: str) -> str:
        count = self.auto_counts[kind] = self.auto_counts.get(kind, 0) + 1
        return f"_{kind}_{count}"

    def add_step(self, spec: SlotSpec, parts: SlotParts) -> None:
        position = len(self.specs)
        for source in self.pending:
            self.use_text(source.text, position)
        for block in (*self.system.take_unused(), *self.header.take_unused()):
            self.use_text(block, position)
        for expr in parts.expressions:
            self.use_expr(expr)
        if parts.references:
            self.uses.append(VariableUse(parts.references, (), spec.line, spec.col, position, self.origin()))
        renderer = SlotRenderer(
            template_name=self.source.name,
            slot=spec.key,
            system=self.system.in_force,
            header=self.header.in_force,
            turns=tuple(self.pending),
            fixed=tuple(parts.fixed.items()),
            dynamic=tuple(parts.dynamic),
            choices=tuple(parts.choices),
            arguments=tuple(parts.arguments),
            class_name=spec.class_name,
            bound_class=self.bound_class(spec),
        )
        self.steps.append(SlotStep(slot=spec, segment=self.segment, render=renderer))
        self.specs.append(spec)
        self.segment_names[spec.name] = spec
        self.pending, self.unsent = [], None
        self.system.slot_passed()
        self.header.slot_passed()

    def bound_class(self, spec: SlotSpec) -> type[Any] | None:
        defined = self.defined.get(spec.class_name or "")
        return None if defined is None else defined.for_slot(spec.required)

    def unbound(self, names: frozenset[str]) -> frozenset[str]:
        for bound in self.bound:
            names = names - bound
        return names

    def use_text(self, text: CompiledText, position: int) -> None:
        names = self.unbound(text.variables)
        if names:
            node = text.node
            regions = tuple((part.source, part.pos) for part in node.parts if part.kind in ("variable", "block"))
            self.uses.append(VariableUse(names, regions, node.line, node.col, position, self.origin()))

    def use_expr(self, expr: CompiledExpr) -> None:
        names = self.unbound(expr.variables)
        if names:
            node = expr.node
            use = VariableUse(names, ((node.source, node.pos),), node.line, node.col, len(self.specs), self.origin())
            self.uses.append(use)
