"""`CompiledTemplate`: what `compile_template` returns, and the pre-flight variable check.

`check_context` runs before any model call: every `{{ name }}` a slot will render must be in the
namespace/`--context`, or be a slot answered *earlier* in the run.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass, field

import jinja2

from ..errors import UndefinedVariableError
from .jinja import locate_name
from .program import SlotSpec, SlotStep, Step, TemplateWarning
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

    def undefined(self, use: VariableUse, missing: frozenset[str], known: set[str]) -> None:
        source = Source(self.source, name=self.name)
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
        raise UndefinedVariableError(message, variable=name, line=line, col=col, source=self.source, name=self.name)


def _written(spec: SlotSpec) -> str:
    bang = "!" if spec.required else ""
    if spec.auto_named:
        return f"[[{bang}{spec.type}:]]"
    kind = "" if spec.type == "text" else f"{spec.type}:"
    return f"[[{bang}{kind}{spec.name}]]"
