"""`CompiledTemplate`: what `compile_template` returns, and the pre-flight variable check.

`check_context` runs before any model call: every `{{ name }}` a slot will render must be in the
namespace/`--context`, or be a slot answered *earlier* in the run.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

import jinja2

from ..actions import BUILTIN_ACTIONS, action_policy
from ..errors import TemplateSyntaxError, UndefinedVariableError
from .frozen import faster_init
from .jinja import locate_name
from .kinds import DEFAULT
from .program import SLOT_TYPES, SlotSpec, SlotStep, Step, TemplateWarning
from .source import Source


@dataclass(frozen=True, slots=True)
class VariableUse:
    """Names one text or option value reads, rendered first at slot number `slot`."""

    names: frozenset[str]
    regions: tuple[tuple[str, int], ...]
    """Its Jinja regions as `(source, offset)`, for pointing at a name."""
    line: int
    col: int
    slot: int
    origin: tuple[str, str] | None = None
    """`(name, text)` of the included file it is written in; `None` for the cell itself."""


@dataclass(frozen=True, slots=True)
class Need:
    """A name the run must find in the context: a notebook class used as a type, or a custom action."""

    name: str
    what: Literal["class", "action"]
    line: int
    col: int
    origin: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class CompiledTemplate:
    """A compiled cell (implements `agentcell.template.program.Template`)."""

    name: str
    source: str = field(repr=False)
    steps: tuple[Step, ...]
    slots: tuple[SlotSpec, ...]
    variables: frozenset[str]
    """Names `{{ }}` reads that no *earlier* slot answers: they must come from the context."""
    warnings: tuple[TemplateWarning, ...]
    sha256: str
    uses: tuple[VariableUse, ...] = field(repr=False)
    environment: jinja2.Environment = field(repr=False)
    assigned: frozenset[str] = field(default=frozenset(), repr=False)
    """Names some `{% set %}` assigns (to explain why they are undefined elsewhere)."""
    needs: tuple[Need, ...] = field(default=(), repr=False)
    """Notebook classes and custom actions the template names."""

    def __repr__(self) -> str:
        slots = ", ".join(_written(spec) for spec in self.slots)
        variables = ", ".join(sorted(self.variables))
        return (
            f"<Template {self.name!r}: slots {slots}; variables {variables or '(none)'}; "
            f"{len(self.steps)} steps; {len(self.warnings)} warnings>"
        )

    @property
    def slot_steps(self) -> tuple[SlotStep, ...]:
        """The slot steps alone, in order."""
        return tuple(step for step in self.steps if isinstance(step, SlotStep))

    def check_context(self, names: Collection[str], /) -> None:
        """Raise `UndefinedVariableError` for the first `{{ name }}` nothing will define in time.

        `names` are the namespace and `--context` keys. A slot's answer counts only from the slots
        after it, so reading a slot before it is answered is reported too.
        """
        available = set(names)
        if isinstance(names, Mapping):  # values too: a function decorated @action(name=…) goes by that name
            available |= {policy.name for value in names.values()
                          if callable(value) and (policy := action_policy(value)) and policy.name}  # `@action`s only
        self.check_needs(available)
        answered: set[str] = set()
        index = 0
        for position, spec in enumerate(self.slots):
            while index < len(self.uses) and self.uses[index].slot == position:
                use = self.uses[index]
                missing = use.names - available - answered
                if missing:
                    self.undefined(use, missing, available | answered)
                index += 1
            answered.add(spec.name)

    def check_needs(self, available: set[str]) -> None:
        """Every notebook class and custom action the template names must be in the context."""
        for need in self.needs:
            if need.name in available or (need.what == "action" and need.name in BUILTIN_ACTIONS):
                continue
            name, text = need.origin or (self.name, self.source)
            if need.what == "class":
                close = difflib.get_close_matches(need.name, [*SLOT_TYPES, *sorted(available)], n=3, cutoff=0.6)
                hint = f" (close: {', '.join(close)})" if close else ""
                message = (
                    f"no type or notebook class named '{need.name}'{hint}: define a pydantic model, dataclass "
                    "or TypedDict of that name in the notebook, or pass it with --context"
                )
            else:
                close = difflib.get_close_matches(need.name, [*BUILTIN_ACTIONS, *sorted(available)], n=1, cutoff=0.6)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                message = (
                    f"no action named '{need.name}'{hint} (built-in actions: {', '.join(BUILTIN_ACTIONS)}; "
                    "a notebook function becomes one with @action)"
                )
            raise TemplateSyntaxError(message, line=need.line, col=need.col, source=text, name=name)

    def undefined(self, use: VariableUse, missing: frozenset[str], known: set[str]) -> None:
        name_, text = use.origin or (self.name, self.source)
        source = Source(text, name=name_)
        located = []
        for name in sorted(missing):
            at = locate_name(use.regions, name, self.environment, source) or (use.line, use.col)
            located.append((at, name))
        (line, col), name = min(located)
        later = next((spec for spec in self.slots if spec.name == name), None)
        if later is not None:
            message = (
                f"'{name}' is read before the slot [[{name}]] at line {later.line} has answered it; "
                "use it below that slot"
            )
        elif name in self.assigned:
            message = (
                f"undefined variable '{name}': a {{% set %}} lasts only until the next slot or tag; "
                "set it again here or pass it with --context"
            )
        else:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            hint = (
                f"; did you mean '{close[0]}'?"
                if close
                else "; define it in the notebook, pass it with --context, or answer it with an earlier slot"
            )
            message = f"undefined variable '{name}'{hint}"
        raise UndefinedVariableError(message, variable=name, line=line, col=col, source=text, name=name_)


def _written(spec: SlotSpec) -> str:
    bang = "!" if spec.required else ""
    label = spec.type_label
    if spec.auto_named:
        return f"[[{bang}{label}:]]"
    if spec.action is not None and spec.name == spec.action:
        return f"[[{label}]]"
    if spec.type == DEFAULT:
        return f"[[{bang}{spec.name}{label[len(DEFAULT):]}]]"  # `[[ideas{3}]]`: the quantifier follows the name
    return f"[[{bang}{label}:{spec.name}]]"


faster_init(VariableUse, Need, CompiledTemplate)
