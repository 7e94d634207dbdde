"""The compiled program: the hand-off from the template compiler to the run engine.

This module is the contract between `agentcell.template` (which builds a `Template`) and
`agentcell.engine` (which runs one). The engine only uses what is declared here:

* `Template.steps` in order; each is a `SlotStep` or a `CheckpointStep`.
* `Template.check_context(names)` before any model call (raises `UndefinedVariableError`).
* `SlotStep.render(context)` when the slot is reached: the system text in force, the user/assistant
  turns this slot adds, and the slot's options with any `{{ expr }}` values evaluated.

Rendering returns *values* (strings inside `Turn`s), never text that is parsed again, so a value
substituted by `{{ }}` can never create a slot, a tag or a Jinja expression.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

SlotType: TypeAlias = Literal["text", "json", "bool", "int", "number", "pick", "halt"]
"""The value a slot asks for. `respond` is an alias of `text` resolved by the parser."""

SLOT_TYPES: tuple[SlotType, ...] = ("text", "json", "bool", "int", "number", "pick", "halt")


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotOptions:
    """A slot's options after `{{ expr }}` values were evaluated. `None` means "not set"."""

    use_tools: bool = False
    max_iter: int | None = None
    max_calls: int | None = None
    tools: tuple[str, ...] | None = None
    """Restrict the slot to these tool names (`tools=a+b`); `None` means all the run's tools."""
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    thinking: bool | str | None = None
    when: bool = True
    """For `halt` slots: the guard trips when the model's `triggered` equals this."""
    choices: tuple[str, ...] = ()
    """For `pick` slots: the allowed answers, from the positional options."""
    retries: int | None = None
    """How many invalid tool calls or invalid typed answers in a row are fed back before the slot fails;
    `None`: as many as the slot's request budget allows."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One message the slot adds to the conversation."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedSlot:
    """What a slot sends, computed when the slot is reached."""

    system: str | None
    """The `<system>` instructions in force at this slot (joined), or `None`."""
    turns: tuple[Turn, ...]
    """The turns this slot adds before its answer: explicit `<user>`/`<assistant>` turns and the
    text above the slot (since the previous slot) as the final user turn. For a guard these turns
    are the guard's own prompt and do not enter the shared conversation."""
    options: SlotOptions


class Renderer(Protocol):
    """Renders a slot's prompt and options against the current context."""

    def __call__(self, context: Mapping[str, Any], /) -> RenderedSlot: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotSpec:
    """A slot as written: `[[!type:name|options]]`."""

    name: str
    type: SlotType
    required: bool = False
    auto_named: bool = False
    line: int = 1
    col: int = 1
    implicit: bool = False
    """`True` for the `[[answer]]` added to a cell that has no slot (placed at the end of the cell)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotStep:
    """Ask the model for `slot` after the turns `render(context)` gives."""

    slot: SlotSpec
    segment: int
    """Index of the checkpoint segment (0 before the first `<checkpoint>`)."""
    render: Renderer = field(compare=False, repr=False)
    kind: Literal["slot"] = "slot"


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointStep:
    """`<checkpoint>`: the conversation restarts; earlier values stay reachable as variables."""

    name: str | None
    segment: int
    """Index of the segment this checkpoint starts."""
    line: int = 1
    kind: Literal["checkpoint"] = "checkpoint"


Step: TypeAlias = SlotStep | CheckpointStep


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateWarning:
    """Something legal but probably unintended (e.g. text after the last slot)."""

    message: str
    line: int
    col: int


class Template(Protocol):
    """A compiled template. Built by `compile_template`; run by the engine."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def steps(self) -> tuple[Step, ...]: ...
    @property
    def slots(self) -> tuple[SlotSpec, ...]: ...
    @property
    def variables(self) -> frozenset[str]:
        """Free variables `{{ }}` reads that no slot of this template defines (before the read:
        `{{ answer }}` above `[[answer]]` must come from the namespace, so it is listed)."""
        ...
    @property
    def warnings(self) -> tuple[TemplateWarning, ...]: ...
    @property
    def sha256(self) -> str:
        """Hash of the source (for provenance in saved notebooks)."""
        ...

    def check_context(self, names: Collection[str], /) -> None:
        """Raise `UndefinedVariableError` for the first free variable not in `names`."""
        ...
