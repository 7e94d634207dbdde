"""One slot node → its type, its checked options and what its renderer needs.

Rules decided here (our own where we are stricter, struckdown 0.18's documented behaviour elsewhere):

* A type is a built-in (aliases resolved), a capitalised notebook class (`[[Person:p]]`, found in
  the context when the run starts), a type given when compiling (`--types`/`types=`, any case, bound
  now) or, after `@`, an action.
* `required=true` (or bare `required`) is `!`; `!` with `required=false` is an error; `required`
  cannot be a `{{ }}` value. `tools=a+b` implies `use_tools=true`. `when` is for `halt` only.
* Values without a key are `pick`/`decide` choices and `score` levels (kept as written: `1`, `true`
  stay strings); on an action they are its positional arguments.
* A constraint (`min`/`ge`, `max`/`le`, `gt`, `lt`, `min_length`, `max_length`, `pattern`) on a
  type it does not fit is an error at the option. `min`/`max` on dates and times are ISO text.
* A quoted value with Jinja in it is rendered when the slot is reached (`"light {{ colour }}"`).
* An action's unquoted word is a variable of the context (`topic`), except `true`/`false`, numbers
  and words that cannot be names (`https://…`), which are literals.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import NoReturn

import jinja2

from . import options as opts
from . import types
from .jinja import CompiledExpr, compile_expr, compile_quoted
from .kinds import DEFAULT
from .nodes import Const, Dynamic, Option, OptionValue, Slot
from .program import SlotType, TemplateWarning
from .render import Argument, Choice, DynamicOption, Reference
from .source import Source


@dataclass(slots=True)
class SlotParts:
    """What the compiler builds a slot's spec and renderer from."""

    slot_type: SlotType
    required: bool
    class_name: str | None = None
    action: str | None = None
    fixed: dict[str, object] = field(default_factory=dict)
    dynamic: list[DynamicOption] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    arguments: list[Argument] = field(default_factory=list)
    warnings: list[TemplateWarning] = field(default_factory=list)

    @property
    def expressions(self) -> list[CompiledExpr]:
        """Every `{{ }}` value of the slot (for the variables it reads)."""
        found = [option.expr for option in self.dynamic] + [c for c in self.choices if isinstance(c, CompiledExpr)]
        return found + [value for _, value in self.arguments if isinstance(value, CompiledExpr)]

    @property
    def references(self) -> frozenset[str]:
        """Context names an action's unquoted options read."""
        return frozenset(value.name for _, value in self.arguments if isinstance(value, Reference))


class SlotCompiler:
    """Checks one slot node against its kind (`kinds.KINDS`, as `types.TYPES`)."""

    def __init__(self, source: Source, env: jinja2.Environment, defined: Collection[str] = ()) -> None:
        self.source = source
        self.env = env
        self.defined = defined
        """Type names given when compiling (`--types`, `types=`): class types of any case."""

    def fail(self, message: str, line: int, col: int) -> NoReturn:
        self.source.fail(message, line, col)

    def parts(self, node: Slot) -> SlotParts:
        if node.action:
            return self.action(node)
        written = node.type or DEFAULT
        slot_type = types.resolve_type(written)
        parts = SlotParts(slot_type or "class", node.required)
        if slot_type is None:
            if not types.is_class_name(written) and written not in self.defined:
                self.fail(types.unknown_type_message(written), node.type_line, node.type_col)
            parts.class_name = written
        info = types.TYPES[parts.slot_type]
        if node.quantifier is not None and not info.listable:
            label = f"[[{written}{'{'}…{'}'}:…]]"
            self.fail(f"{label}: a {written} slot gives one answer, so it takes no quantifier", node.line, node.col)
        self.options(node, parts)
        required = parts.fixed.pop("required", None)
        if node.required and required is False:
            self.fail("'!' and required=false contradict each other", node.line, node.col)
        parts.required = bool(required) or node.required
        self.check_positional(node, parts)
        self.check_tools(node, parts)
        return parts

    # -- options of model slots -----------------------------------------------------------------
    def options(self, node: Slot, parts: SlotParts) -> None:
        seen: set[str] = set()
        for option in node.options:
            key = self.key(option, parts)
            if key is None:
                parts.choices.append(self.choice(option.value))
                continue
            if key in seen:
                self.fail(f"option '{option.key or key}' is given twice", option.line, option.col)
            seen.add(key)
            value = option.value if option.key is not None else Const("true")
            if key == "required" and not isinstance(value, Const):
                message = "'required' cannot be a {{ }} value: it is fixed when the cell compiles"
                self.fail(message, option.line, option.col)
            compiled = self.value(value)
            if isinstance(compiled, CompiledExpr):
                parts.dynamic.append(DynamicOption(key, compiled))
            else:
                parts.fixed[key] = self.checked(key, compiled, option, parts.slot_type)
        if parts.fixed.get("mode") == "decision":
            message = (
                f"mode=decision: [[{node.name or ''}]] runs on its ordinary model (agentcell has no decision models)"
            )
            parts.warnings.append(TemplateWarning(message=message, line=node.line, col=node.col))

    def key(self, option: Option, parts: SlotParts) -> str | None:
        """The option's canonical key (a bare flag gives its own); `None` for a positional value."""
        slot_type, value = parts.slot_type, option.value
        if option.key is not None:
            if not opts.is_key(option.key):
                self.fail(opts.unknown_option_message(option.key), option.line, option.col)
            key = opts.canonical(option.key)
            self.check_fits(key, option, parts)
            return key
        bare = value.text if isinstance(value, Const) and not value.quoted else None
        if bare in opts.BARE:
            return bare
        if types.TYPES[slot_type].positional is not None:
            return None
        if bare is not None and opts.is_key(bare):
            example = opts.EXAMPLES.get(bare) or opts.EXTRA_EXAMPLES.get(bare, f"{bare}=…")
            self.fail(f"option '{bare}' needs a value, e.g. {example}", option.line, option.col)
        if bare is not None:
            self.fail(opts.unknown_option_message(bare), option.line, option.col)
        self.fail(
            "only [[pick:…]], [[decide:…]] and [[score:…]] slots take values without a key (their choices or levels)",
            option.line,
            option.col,
        )

    def check_fits(self, key: str, option: Option, parts: SlotParts) -> None:
        slot_type = parts.slot_type
        shown = parts.class_name or slot_type
        if key == "when" and slot_type != "halt":
            self.fail("option 'when' only applies to [[halt:…]] guards", option.line, option.col)
        if key in types.CONSTRAINTS and key not in types.TYPES[slot_type].constraints:
            fits = sorted(name for name, info in types.TYPES.items() if key in info.constraints)
            self.fail(
                f"option '{option.key}' does not apply to a {shown} slot (it fits: {', '.join(fits)})",
                option.line,
                option.col,
            )

    def value(self, value: OptionValue) -> object:
        """A literal's Python value, or a `CompiledExpr` for `{{ }}` (quoted text with Jinja too)."""
        if isinstance(value, Dynamic):
            return compile_expr(value, self.env, self.source)
        if value.quoted and ("{{" in value.text or "{%" in value.text):
            return compile_quoted(value, self.env, self.source)
        return opts.literal(value)

    def choice(self, value: OptionValue) -> Choice:
        compiled = self.value(value)
        return compiled if isinstance(compiled, CompiledExpr) else value.text if isinstance(value, Const) else ""

    def checked(self, key: str, value: object, option: Option, slot_type: SlotType) -> object:
        try:
            checked = opts.check(key, value)
        except opts.OptionValueError as exc:
            self.fail(str(exc), option.line, option.col)
        iso = types.TYPES[slot_type].iso
        if key in types.NUMERIC and iso is not None:
            if not isinstance(checked, str):
                self.fail(f"option '{option.key}' on a {slot_type} slot is ISO text, e.g. \"2024-01-31\"", option.line,
                          option.col)  # fmt: skip
            try:
                iso(checked)
            except ValueError:
                self.fail(f"option '{option.key}' is not an ISO {slot_type}: {checked!r}", option.line, option.col)
        elif key in types.NUMERIC and isinstance(checked, str):
            self.fail(f"option '{option.key}' expects a number, got {checked!r}", option.line, option.col)
        return checked

    def check_positional(self, node: Slot, parts: SlotParts) -> None:
        positional = types.TYPES[parts.slot_type].positional
        label = node.name or ""
        if positional == "choices" and not parts.choices:
            self.fail(
                f"[[pick:{label}]] needs its choices after '|', e.g. [[pick:{label or 'mood'}|happy, sad]]",
                node.line,
                node.col,
            )
        if positional == "levels" and len(parts.choices) < 2:
            self.fail(
                f"[[score:{label}]] needs two or more levels after '|', lowest first, e.g. "
                f"[[score:{label or 'quality'}|poor, fair, good]]",
                node.line,
                node.col,
            )
        written: set[str] = set()
        for choice in parts.choices:
            if isinstance(choice, str):
                if choice in written:
                    self.fail(f"{parts.slot_type} choice {choice!r} appears more than once", node.line, node.col)
                written.add(choice)

    def check_tools(self, node: Slot, parts: SlotParts) -> None:
        if not parts.fixed and not parts.dynamic:
            return
        fixed, seen = parts.fixed, {*parts.fixed, *(option.key for option in parts.dynamic)}
        if fixed.get("use_tools") is False and "tools" in seen:
            self.fail("use_tools=false contradicts tools=…: drop one of them", node.line, node.col)
        tools_on = "tools" in seen or ("use_tools" in seen and fixed.get("use_tools") is not False)
        for key in ("max_iter", "max_calls"):
            if key in seen and not tools_on:
                message = f"option '{key}' has no effect without use_tools=true"
                parts.warnings.append(TemplateWarning(message=message, line=node.line, col=node.col))

    # -- actions --------------------------------------------------------------------------------
    def action(self, node: Slot) -> SlotParts:
        parts = SlotParts("action", False, action=node.type)
        keys: set[str] = set()
        for option in node.options:
            if option.key is not None:
                if option.key in keys:
                    self.fail(f"option '{option.key}' is given twice", option.line, option.col)
                keys.add(option.key)
            parts.arguments.append((option.key, self.argument(option.value)))
        return parts

    def argument(self, value: OptionValue) -> object:
        if isinstance(value, Const) and not value.quoted and value.text.isidentifier():
            literal = opts.literal(value)
            return literal if isinstance(literal, bool) else Reference(value.text)
        return self.value(value)
