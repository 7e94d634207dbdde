"""The compiled program: the hand-off from the template compiler to the run engine.

This module is the contract between `agentcell.template` (which builds a `Template`) and
`agentcell.engine` (which runs one). The engine only uses what is declared here:

* `Template.steps` in order; each is a `SlotStep` (a model slot, a guard or an action), a
  `CheckpointStep`, a `TextStep` (text whose turns join the prompt of the next slot the run reaches),
  an `IfStep` / `ForStep` (slots under `{% if %}` / `{% for %}`, decided when reached) or a
  `TogetherStep` (slots that run concurrently).
* `Template.check_context(names)` before any model call (raises `UndefinedVariableError`, or a
  `TemplateSyntaxError` for a notebook type or action that names nothing).
* `SlotStep.render(context)` when the slot is reached: the system text and header in force, the
  user/assistant turns this slot adds, and the slot's options with any `{{ expr }}` values evaluated.

Rendering returns *values* (strings inside `Turn`s), never text that is parsed again, so a value
substituted by `{{ }}` can never create a slot, a tag or a Jinja expression.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from ..usage import OutputMode
from .frozen import faster_init
from .kinds import SLOT_TYPES as SLOT_TYPES  # the types are defined with their records (`kinds.py`)
from .kinds import TEMPORAL_TYPES as TEMPORAL_TYPES
from .kinds import SlotType as SlotType

Quantifier: TypeAlias = tuple[int, int | None]
"""`(least, most)` items of a list slot (`most=None`: no upper bound)."""


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
    """The positional options: `pick`/`decide` choices, `score` levels (lowest first)."""
    ge: float | str | None = None
    """Constraints (`min`/`ge`, `max`/`le`, `gt`, `lt`): numbers, or ISO text for dates and times."""
    le: float | str | None = None
    gt: float | str | None = None
    lt: float | str | None = None
    min_length: int | None = None
    """String constraints (`min_length`, `max_length`, `pattern`); on a list slot they apply to each item."""
    max_length: int | None = None
    pattern: str | None = None
    seed: int | None = None
    mode: str | None = None
    """`mode=decision`: accepted; the slot runs on its ordinary model (agentcell has no decision models)."""
    block: bool = False
    """`block`: later checkpoints wait for this slot (they always do here: segments run in order)."""
    arguments: tuple[tuple[str | None, Any], ...] = ()
    """For actions: the options as arguments (`None` key: positional), references already resolved."""
    output_class: Any = None
    """For a notebook type (`[[Person:p]]`): the class found in the context."""
    retries: int | None = None
    """How many invalid tool calls or invalid typed answers in a row are fed back before the slot fails;
    `None`: as many as the slot's request budget allows."""
    output_mode: OutputMode | None = None
    """How a typed slot asks for its value (`output_mode=prompted`; `usage.OutputMode`); `None`: the run's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One message the slot adds to the conversation."""

    role: Literal["user", "assistant"]
    text: str
    parts: tuple[Any, ...] = ()
    """The turn's content in order when it holds media (`str` pieces and `agentcell.media` parts: a
    `{{ fig }}` is an image exactly where it was written); `()` for a text-only turn. `text` is then the
    readable version, each part shown as `[image: a 640×480 PNG]`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedSlot:
    """What a slot sends, computed when the slot is reached."""

    system: str | None
    """The `<system>` instructions in force at this slot (joined), or `None`."""
    header: str | None = None
    """The `<header>` text in force (joined): a user turn that opens the segment's conversation."""
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
    quantifier: Quantifier | None = None
    """A list slot (`[[int*:x]]`, `[[ideas{3}]]`): its value is a list with this many items."""
    class_name: str | None = None
    """For `type="class"`: the notebook class named as the type (`Person`)."""
    action: str | None = None
    """For `type="action"`: the action's name (`fetch`, or a notebook function decorated `@action`)."""
    occurrence: int = 1
    """The name's nth use in the template (a name may be used again after a checkpoint)."""
    in_loop: bool = False
    """Inside `{% for %}`: the slot runs once per item and its value is the list of answers."""
    conditional: bool = False
    """Inside `{% if %}`: the slot runs only when its branch holds (else its value is `None`)."""

    @property
    def key(self) -> str:
        """The name as events and the transcript know this use of it (`x`, then `x#2` after a checkpoint)."""
        return self.name if self.occurrence == 1 else f"{self.name}#{self.occurrence}"

    @property
    def type_label(self) -> str:
        """The type as written for people: `int`, `int*`, `Person`, `@fetch`."""
        base = self.class_name or (f"@{self.action}" if self.action else self.type)
        if self.quantifier is None:
            return base
        least, most = self.quantifier
        shown = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((least, most))
        if shown is None:
            shown = f"{{{least}}}" if least == most else f"{{{least},{'' if most is None else most}}}"
        return base + shown


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


class TurnsRenderer(Protocol):
    """Renders text that has no slot of its own block into the turns it adds."""

    def __call__(self, context: Mapping[str, Any], /) -> tuple[Turn, ...]: ...


class Predicate(Protocol):
    """Evaluates an `{% if %}` test (or a loop's items) against the current context."""

    def __call__(self, context: Mapping[str, Any], /) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TextStep:
    """Text that no slot of its own block sends (before an `{% if %}`, at the end of a branch or loop
    body): the run carries its turns into the prompt of the next slot it reaches."""

    render: TurnsRenderer = field(compare=False, repr=False)
    line: int = 1
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class IfBranch:
    """One arm of an `IfStep`: `test` is `None` for `{% else %}`."""

    test: Predicate | None = field(compare=False, repr=False)
    steps: tuple[Step, ...]
    line: int = 1
    has_test: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class IfStep:
    """`{% if %}` around slots: the first branch whose test holds runs; the others' slots get `None`."""

    branches: tuple[IfBranch, ...]
    slots: tuple[str, ...]
    """Names of the slots anywhere in the branches (the ones not run are set to `None`)."""
    line: int = 1
    kind: Literal["if"] = "if"


@dataclass(frozen=True, slots=True, kw_only=True)
class ForStep:
    """`{% for %}` around slots: `steps` run once per item, with the loop variables set.

    Each slot in the body gets the list of its answers in iteration order; inside an iteration, after
    it is answered, its name is that iteration's answer."""

    targets: tuple[str, ...]
    items: Predicate = field(compare=False, repr=False)
    """The items to loop over (already filtered by the loop's `if`)."""
    steps: tuple[Step, ...]
    empty: tuple[Step, ...] = ()
    """The `{% else %}` body, for no items."""
    slots: tuple[str, ...] = ()
    """Names of the slots in `steps` (their values become lists)."""
    line: int = 1
    kind: Literal["for"] = "for"


@dataclass(frozen=True, slots=True, kw_only=True)
class TogetherStep:
    """`<together>`: the slots run concurrently, each on the conversation so far (plus the text carried
    into the block); their answers join the conversation in source order."""

    steps: tuple[SlotStep, ...]
    line: int = 1
    kind: Literal["together"] = "together"


Step: TypeAlias = SlotStep | CheckpointStep | TextStep | IfStep | ForStep | TogetherStep


def join_turns(first: Sequence[Turn], second: Sequence[Turn]) -> tuple[Turn, ...]:
    """`first` then `second`, with a user turn at the seam merged into one (empty turns dropped)."""
    out = [turn for turn in first if turn.text or turn.role == "assistant"]
    for turn in second:
        if out and out[-1].role == "user" and turn.role == "user":
            text = "\n".join(part for part in (out[-1].text, turn.text) if part)
            parts: tuple[Any, ...] = ()
            if out[-1].parts or turn.parts:
                joined = [p for p in (out[-1].parts or (out[-1].text,)) if p]
                later = [p for p in (turn.parts or (turn.text,)) if p]
                parts = (*joined, "\n", *later) if joined and later else (*joined, *later)
            out[-1] = Turn(role="user", text=text, parts=parts)
        else:
            out.append(turn)
    return tuple(out)


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
        """Raise `UndefinedVariableError` for the first free variable not in `names` (and
        `TemplateSyntaxError` for a notebook type or custom action not among them)."""
        ...


faster_init(
    SlotOptions,
    Turn,
    RenderedSlot,
    SlotSpec,
    SlotStep,
    CheckpointStep,
    TextStep,
    IfBranch,
    IfStep,
    ForStep,
    TogetherStep,
    TemplateWarning,
)
