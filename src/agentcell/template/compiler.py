"""`nodes.Document` → `CompiledTemplate`: the semantic checks, and the order of steps.

Rules decided here (SPEC §2 where it speaks, our choice where it is silent):

* The conversation a slot sees: the `<user>`/`<assistant>` turns and the plain text since the
  previous slot (or checkpoint), in order; consecutive plain texts form one user turn. Each turn is
  stripped; a whitespace-only turn is dropped; a slot whose turns do not end on a user turn (e.g.
  nothing above it) gets `Turn("user", "")` last. A guard's text is its own prompt, as for any slot;
  the engine keeps it out of the shared conversation.
* `<system>`: the blocks in force at a slot are the latest *group*: blocks written with no slot or
  checkpoint between them are joined (blank line); a `<system>` after a slot or checkpoint
  replaces them. They stay in force across checkpoints and render at each slot (so `{{ earlier }}`
  works inside them).
* A cell with no slot gets `[[answer]]` at its end (`SlotSpec.implicit`). Text or `<system>` that no
  slot follows is a `TemplateWarning`, never silently dropped.
* `required=true` (or bare `required`) is `!`; `!` with `required=false` is an error; `required`
  cannot be a `{{ }}` value. `tools=a+b` implies `use_tools=true`. `when` is for `halt` only;
  values without a key are `pick` choices (kept as written: `1`, `true` stay strings).
* `{% set %}` lasts until the end of its text (the next slot or tag): each text is its own Jinja
  template. A Jinja block (`{% if %}`, `{% for %}`, …) must close inside its text.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import NoReturn, assert_never

from . import options as opts
from .analysis import Analyzer
from .jinja import CompiledExpr, CompiledText, compile_expr, compile_text, make_environment
from .nodes import Checkpoint, Const, Document, Dynamic, Message, Option, Slot, System, Text
from .program import CheckpointStep, SlotSpec, SlotStep, SlotType, Step, TemplateWarning
from .render import Choice, DynamicOption, SlotRenderer, TurnSource
from .source import Source
from .template import CompiledTemplate, VariableUse


def compile_document(document: Document, source: Source) -> CompiledTemplate:
    """Check `document` and build its program; raise `TemplateSyntaxError` at the first problem."""
    return _Compiler(source).build(document)


class _Compiler:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.env = make_environment()
        self.analyzer = Analyzer(self.env)
        self.steps: list[Step] = []
        self.slots: dict[str, SlotSpec] = {}
        self.auto_counts: Counter[str] = Counter()
        self.segment = 0
        self.system: list[CompiledText] = []
        self.system_replaced_next = False
        self.system_used: set[int] = set()
        self.late_system: System | None = None
        self.pending: list[TurnSource] = []
        self.uses: list[VariableUse] = []
        self.warnings: list[TemplateWarning] = []
        self.assigned: set[str] = set()

    def build(self, document: Document) -> CompiledTemplate:
        for node in document.nodes:
            match node:
                case Text():
                    self.pending.append(TurnSource("text", self.text(node)))
                case Message():
                    self.pending.append(TurnSource(node.role, self.text(node.body)))
                case System():
                    self.add_system(node)
                case Slot():
                    self.add_slot(node)
                case Checkpoint():
                    self.add_checkpoint(node)
                case _:
                    assert_never(node)
        if not self.slots:
            line, col = self.source.position(len(self.source.text))
            spec = SlotSpec(name="answer", type="text", line=line, col=col, implicit=True)
            self.add_step(spec, fixed={}, dynamic=[], choices=[])
        else:
            self.warn_unsent(None)
        return CompiledTemplate(
            name=self.source.name,
            source=self.source.text,
            steps=tuple(self.steps),
            slots=tuple(self.slots.values()),
            variables=self.free_variables(),
            warnings=tuple(self.warnings),
            sha256=hashlib.sha256(self.source.text.encode("utf-8", "surrogatepass")).hexdigest(),
            uses=tuple(self.uses),
            assigned=frozenset(self.assigned),
            environment=self.env,
        )

    def text(self, node: Text) -> CompiledText:
        compiled = compile_text(node, self.env, self.source, self.analyzer)
        self.assigned |= compiled.assigned
        return compiled

    def free_variables(self) -> frozenset[str]:
        """Names some slot reads that no earlier slot answers: they must come from the context."""
        order = {name: index for index, name in enumerate(self.slots)}
        return frozenset(name for use in self.uses for name in use.names if order.get(name, len(order)) >= use.slot)

    def fail(self, message: str, line: int, col: int) -> NoReturn:
        self.source.fail(message, line, col)

    # -- structure ------------------------------------------------------------------------------
    def add_system(self, node: System) -> None:
        if self.system_replaced_next:
            self.system, self.system_replaced_next = [], False
        self.system.append(self.text(node.body))
        self.late_system = self.late_system or node

    def add_checkpoint(self, node: Checkpoint) -> None:
        self.warn_unsent(node)
        self.segment += 1
        self.steps.append(CheckpointStep(name=node.name, segment=self.segment, line=node.line))
        self.system_replaced_next = True

    def warn_unsent(self, checkpoint: Checkpoint | None) -> None:
        content = next((source.text for source in self.pending if source.text.has_content), None)
        if content is not None:
            line, col = self.first_visible(content.node)
            where = (
                "the last slot"
                if checkpoint is None
                else f"the last slot of this segment (the <checkpoint> at line {checkpoint.line} "
                "starts a new conversation)"
            )
            message = f"text after {where} is never sent to the model; add a slot below it or remove it"
            self.warnings.append(TemplateWarning(message=message, line=line, col=col))
        if checkpoint is None and self.late_system is not None:
            message = "<system> after the last slot applies to no slot"
            self.warnings.append(TemplateWarning(message=message, line=self.late_system.line, col=self.late_system.col))
        self.pending = []

    def first_visible(self, node: Text) -> tuple[int, int]:
        for part in node.parts:
            if part.kind == "data" and not part.source.strip():
                continue
            if part.kind in ("block", "comment"):
                continue
            skipped = len(part.source) - len(part.source.lstrip())
            return self.source.position(part.pos + skipped)
        return node.line, node.col

    # -- slots ----------------------------------------------------------------------------------
    def add_slot(self, node: Slot) -> None:
        slot_type = opts.resolve_type(node.type or "text")
        if slot_type is None:
            self.fail(opts.unknown_type_message(node.type or ""), node.type_line, node.type_col)
        if node.name in opts.RESERVED_NAMES:
            self.fail(
                f"slot name '{node.name}' is a Jinja keyword, so {{{{ }}}} could not read it; choose another name",
                node.line,
                node.col,
            )
        name = node.name or self.auto_name(slot_type)
        if name in self.slots:
            first = self.slots[name]
            self.fail(
                f"duplicate slot name '{name}': [[{name}]] is already at line {first.line}, column {first.col}",
                node.line,
                node.col,
            )
        fixed, dynamic, choices = self.options(node, slot_type)
        required = bool(fixed.pop("required", False)) or node.required
        spec = SlotSpec(
            name=name,
            type=slot_type,
            required=required,
            auto_named=node.name is None,
            line=node.line,
            col=node.col,
        )
        if node.type is None and node.name in opts.KNOWN_TYPES:
            word = node.name
            message = f"[[{word}]] is a text slot named '{word}'; for a {word} value write [[{word}:]]"
            self.warnings.append(TemplateWarning(message=message, line=node.line, col=node.col))
        self.add_step(spec, fixed=fixed, dynamic=dynamic, choices=choices)

    def auto_name(self, slot_type: SlotType) -> str:
        self.auto_counts[slot_type] += 1
        return f"_{slot_type}_{self.auto_counts[slot_type]}"

    def add_step(
        self, spec: SlotSpec, *, fixed: dict[str, object], dynamic: list[DynamicOption], choices: list[Choice]
    ) -> None:
        position = len(self.slots)
        for source in self.pending:
            self.use_text(source.text, position)
        for block in self.system:
            if id(block) not in self.system_used:
                self.system_used.add(id(block))
                self.use_text(block, position)
        for expr in [option.expr for option in dynamic] + [c for c in choices if isinstance(c, CompiledExpr)]:
            node = expr.node
            self.uses.append(VariableUse(expr.variables, ((node.source, node.pos),), node.line, node.col, position))
        renderer = SlotRenderer(
            template_name=self.source.name,
            slot=spec.name,
            system=tuple(self.system),
            turns=tuple(self.pending),
            fixed=tuple(fixed.items()),
            dynamic=tuple(dynamic),
            choices=tuple(choices),
        )
        self.steps.append(SlotStep(slot=spec, segment=self.segment, render=renderer))
        self.slots[spec.name] = spec
        self.pending = []
        self.late_system = None
        self.system_replaced_next = True

    def use_text(self, text: CompiledText, position: int) -> None:
        if text.variables:
            node = text.node
            regions = tuple((part.source, part.pos) for part in node.parts if part.kind in ("variable", "block"))
            self.uses.append(VariableUse(text.variables, regions, node.line, node.col, position))

    # -- options --------------------------------------------------------------------------------
    def options(self, node: Slot, slot_type: SlotType) -> tuple[dict[str, object], list[DynamicOption], list[Choice]]:
        fixed: dict[str, object] = {}
        dynamic: list[DynamicOption] = []
        choices: list[Choice] = []
        seen: set[str] = set()
        for option in node.options:
            key = self.option_key(option, slot_type)
            if key is None:
                choices.append(option.value.text if isinstance(option.value, Const) else self.expr(option.value))
                continue
            if key in seen:
                self.fail(f"option '{key}' is given twice", option.line, option.col)
            seen.add(key)
            value = option.value if option.key is not None else Const("true")
            if isinstance(value, Const):
                fixed[key] = self.checked(key, value, option)
            elif key == "required":
                self.fail(
                    "'required' cannot be a {{ }} value: it is fixed when the cell compiles",
                    option.line,
                    option.col,
                )
            else:
                dynamic.append(DynamicOption(key, self.expr(value)))
        self.check_slot_options(node, slot_type, fixed, seen, choices)
        return fixed, dynamic, choices

    def option_key(self, option: Option, slot_type: SlotType) -> str | None:
        """The option's key (a bare flag gives its own); `None` for a pick choice."""
        value = option.value
        if option.key is not None:
            if option.key not in opts.OPTION_KEYS:
                self.fail(opts.unknown_option_message(option.key), option.line, option.col)
            if option.key == "when" and slot_type != "halt":
                self.fail("option 'when' only applies to [[halt:…]] guards", option.line, option.col)
            return option.key
        bare = value.text if isinstance(value, Const) and not value.quoted else None
        if bare in opts.FLAGS:
            return bare
        if slot_type == "pick":
            return None
        if bare in opts.OPTION_KEYS:
            self.fail(f"option '{bare}' needs a value, e.g. {opts.EXAMPLES[bare]}", option.line, option.col)
        if bare is not None:
            self.fail(opts.unknown_option_message(bare), option.line, option.col)
        self.fail("only [[pick:…]] slots take values without a key (their choices)", option.line, option.col)

    def checked(self, key: str, value: Const, option: Option) -> object:
        try:
            return opts.check(key, opts.literal(value))
        except opts.OptionValueError as exc:
            self.fail(str(exc), option.line, option.col)

    def expr(self, node: Dynamic) -> CompiledExpr:
        return compile_expr(node, self.env, self.source)

    def check_slot_options(
        self, node: Slot, slot_type: SlotType, fixed: dict[str, object], seen: set[str], choices: list[Choice]
    ) -> None:
        if slot_type == "pick" and not choices:
            label = node.name or ""
            self.fail(
                f"[[pick:{label}]] needs its choices after '|', e.g. [[pick:{label or 'mood'}|happy, sad]]",
                node.line,
                node.col,
            )
        written: set[str] = set()
        for choice in choices:
            if isinstance(choice, str):
                if choice in written:
                    self.fail(f"pick choice {choice!r} appears more than once", node.line, node.col)
                written.add(choice)
        if node.required and fixed.get("required") is False:
            self.fail("'!' and required=false contradict each other", node.line, node.col)
        if fixed.get("use_tools") is False and "tools" in seen:
            self.fail("use_tools=false contradicts tools=…: drop one of them", node.line, node.col)
        tools_on = "tools" in seen or ("use_tools" in seen and fixed.get("use_tools") is not False)
        for key in ("max_iter", "max_calls"):
            if key in seen and not tools_on:
                message = f"option '{key}' has no effect without use_tools=true"
                self.warnings.append(TemplateWarning(message=message, line=node.line, col=node.col))
