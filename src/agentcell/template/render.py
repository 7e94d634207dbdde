"""A slot's step + the context → the `RenderedSlot` it sends: values, never text to parse again.

Rendering happens when the engine reaches the slot, so `{{ earlier_slot }}` sees that slot's answer.
Whatever a `{{ }}` produces lands inside a `Turn` string or an option value; it can never become a
slot, a tag or more Jinja.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

import jinja2
import pydantic
import typing_extensions

from ..errors import MediaError, TemplateRenderError
from ..formats.jsonsafe import scrub_text
from ..media.marks import Collector, collecting
from . import options as opts
from .frozen import faster_init
from .inline import PlainReads, plain_reads
from .jinja import CompiledExpr, CompiledText
from .program import RenderedSlot, SlotOptions, Turn
from .render_limits import RenderLimit, current_budget, render_budget

Choice = str | CompiledExpr


@dataclass(frozen=True, slots=True)
class Reference:
    """An action option written as an unquoted name: the context's value of that name."""

    name: str


Argument = tuple[str | None, object]
"""An action argument: its key (`None` when positional) and a literal, a `Reference` or a `CompiledExpr`."""


@dataclass(frozen=True, slots=True)
class TurnSource:
    """Where a turn comes from: plain text above the slot (`"text"`) or an explicit tag."""

    role: Literal["text", "user", "assistant"]
    text: CompiledText


@dataclass(frozen=True, slots=True)
class DynamicOption:
    """`key={{ expr }}`, checked when the slot is reached."""

    key: str
    expr: CompiledExpr


@dataclass(frozen=True, slots=True, eq=False)
class SlotRenderer:
    """Renders one slot (the engine calls it as `SlotStep.render(context)`)."""

    template_name: str
    slot: str
    system: tuple[CompiledText, ...]
    """The `<system>` blocks in force at this slot."""
    turns: tuple[TurnSource, ...]
    fixed: tuple[tuple[str, object], ...]
    """Options written literally, already checked."""
    dynamic: tuple[DynamicOption, ...] = ()
    choices: tuple[Choice, ...] = ()
    header: tuple[CompiledText, ...] = ()
    """The `<header>` blocks in force at this slot."""
    arguments: tuple[Argument, ...] = ()
    """For an action: its options as arguments."""
    class_name: str | None = None
    """For a notebook type: the name of the class to find in the context."""
    bound_class: type[Any] | None = None
    """For a type given when compiling (`--types`): its class, so the context is not consulted."""
    plain: list[PlainReads | None] = field(default_factory=list, repr=False)
    """What the slot reads if its texts are plain (`inline.py`), found at its first render and kept."""
    constant: list[SlotOptions] = field(default_factory=list, repr=False)
    """Its options when nothing in them is computed (`options`): built at the first render, then shared."""

    def renders_inline(self, context: Mapping[str, Any], /) -> bool:
        """Whether rendering against `context` may run on the event loop (see `inline.py`)."""
        if not self.plain:  # found when first reached, not when compiled: blocks in force add up per slot
            expressions = self.dynamic or any(not isinstance(c, str) for c in self.choices)
            expressions = expressions or any(isinstance(value, CompiledExpr) for _, value in self.arguments)
            texts = (*self.system, *self.header, *(source.text for source in self.turns))
            self.plain.append(None if expressions else plain_reads(texts))
        reads = self.plain[0]
        return reads is not None and reads.fits(context)

    def __call__(self, context: Mapping[str, Any], /) -> RenderedSlot:
        """The system text, turns and options this slot sends for `context`.

        Raises:
            TemplateRenderError: a Jinja expression failed (e.g. `{{ 1 / 0 }}`, an undefined
                attribute) or a `{{ }}` option value does not suit its option.
        """
        values = dict(context)
        with render_budget(), collecting(values) as media:  # bounded: see render_limits.py; media: see media/marks.py
            return RenderedSlot(
                system=self.joined(self.system, values, media),
                header=self.joined(self.header, values, media),
                turns=self.rendered_turns(values, media),
                options=self.options(values),
            )

    def joined(self, blocks: tuple[CompiledText, ...], values: dict[str, Any], media: Collector) -> str | None:
        if not blocks:
            return None
        rendered = [media.readable(self.text(block, values)).strip() for block in blocks]
        return "\n\n".join(part for part in rendered if part) or None

    def rendered_turns(self, values: dict[str, Any], media: Collector) -> tuple[Turn, ...]:
        turns = list(resolve_turns(render_turns(self.turns, values, self.text), media))
        if not turns or turns[-1].role != "user":
            # Every slot ends on a user turn; with nothing above it, that turn is empty.
            turns.append(Turn(role="user", text=""))
        return tuple(turns)

    def options(self, values: dict[str, Any]) -> SlotOptions:
        if self.constant:
            return self.constant[0]
        options = self._options(values)
        if not (self.dynamic or self.arguments or self.class_name is not None
                or any(not isinstance(choice, str) for choice in self.choices)):
            self.constant.append(options)  # the same for every context (a frozen value, so shared)
        return options

    def _options(self, values: dict[str, Any]) -> SlotOptions:
        settings: dict[str, Any] = dict(self.fixed)
        for option in self.dynamic:
            value = self.evaluate(option.expr, values)
            try:
                settings[option.key] = opts.check(option.key, value)
            except opts.OptionValueError as exc:
                self.fail(option.expr, str(exc))
        choices: list[str] = []
        for choice in self.choices:
            if isinstance(choice, str):
                choices.append(choice)
                continue
            try:
                value = self.evaluate(choice, values)
                if isinstance(value, str) and not choice.quoted:  # `{{ moods|join(",") }}`: one choice each
                    value = [part.strip() for part in value.split(",") if part.strip()]
                # A lone surrogate (not valid UTF-8) in a choice broke pydantic's schema for the answer.
                choices.extend(scrub_text(item)[0] for item in opts.check_choices(value))
            except opts.OptionValueError as exc:
                self.fail(choice, str(exc))
        if self.choices:
            settings["choices"] = self.checked_choices(choices)
        settings.setdefault("use_tools", settings.get("tools") is not None)
        settings.pop("required", None)
        if self.arguments:
            settings["arguments"] = tuple((key, self.argument(value, values)) for key, value in self.arguments)
        if self.class_name is not None:
            settings["output_class"] = self.output_class(values)
        return SlotOptions(**settings)

    def argument(self, value: object, values: dict[str, Any]) -> object:
        if isinstance(value, CompiledExpr):
            return self.evaluate(value, values)
        if isinstance(value, Reference):
            # check_context made sure the name exists before the run; a skipped slot's is None.
            return values.get(value.name)
        return value

    def output_class(self, values: dict[str, Any]) -> type[Any]:
        if self.bound_class is not None:
            return self.bound_class
        found = values.get(self.class_name or "")
        if not is_output_class(found):
            message = (
                f"cannot run [[{self.slot}]]: {self.class_name} is {_kind(found)}, not a pydantic model, "
                "dataclass or TypedDict"
            )
            raise TemplateRenderError(f"{self.template_name}: {message}")
        assert isinstance(found, type)
        return found

    def checked_choices(self, choices: list[str]) -> tuple[str, ...]:
        where = next((choice for choice in self.choices if isinstance(choice, CompiledExpr)), None)
        if where is None:
            return tuple(choices)  # literal choices were checked when the cell compiled
        if not choices:
            self.fail(where, "a pick slot needs at least one choice, got none")
        seen: set[str] = set()
        for choice in choices:
            if choice in seen:
                self.fail(where, f"pick choice {choice!r} appears more than once")
            seen.add(choice)
        return tuple(choices)

    def text(self, text: CompiledText, values: dict[str, Any]) -> str:
        budget = current_budget()
        try:
            rendered = text.render(values, check=None if budget is None else budget.take)
        except Exception as exc:  # any error a user's expression raises, located for the person
            message = f"cannot render the prompt of [[{self.slot}]]: {_describe(exc)}"
            raise TemplateRenderError(_at(self.template_name, text.node.line, text.node.col, message)) from exc
        return scrub_text(rendered)[0]  # text that is not valid UTF-8 cannot be sent to a provider

    def evaluate(self, expr: CompiledExpr, values: dict[str, Any]) -> object:
        budget = current_budget()
        try:
            value = expr.function(**values)
            if budget is not None:
                budget.take(len(value) if isinstance(value, str) else 0)
        except Exception as exc:  # as above
            self.fail(expr, _describe(exc), cause=exc)
        if isinstance(value, jinja2.Undefined):
            self.fail(expr, f"{expr.node.source} is undefined")
        return value

    def fail(self, expr: CompiledExpr, problem: str, *, cause: BaseException | None = None) -> NoReturn:
        message = f"cannot set the options of [[{self.slot}]]: {problem}"
        raise TemplateRenderError(_at(self.template_name, expr.node.line, expr.node.col, message)) from cause


@dataclass(frozen=True, slots=True, eq=False)
class TextRenderer:
    """Renders text that no slot of its own block sends (a `TextStep`) into its turns."""

    template_name: str
    turns: tuple[TurnSource, ...]

    def __call__(self, context: Mapping[str, Any], /) -> tuple[Turn, ...]:
        values = dict(context)
        with collecting(values) as media:
            return resolve_turns(render_turns(self.turns, values, self.text), media)

    def text(self, text: CompiledText, values: dict[str, Any]) -> str:
        try:
            return text.render(values)
        except Exception as exc:  # any error a user's expression raises, located for the person
            message = f"cannot render the text: {_describe(exc)}"
            raise TemplateRenderError(_at(self.template_name, text.node.line, text.node.col, message)) from exc


def render_turns(
    sources: tuple[TurnSource, ...], values: dict[str, Any], render: Callable[[CompiledText, dict[str, Any]], str]
) -> tuple[Turn, ...]:
    """The turns `sources` give: consecutive plain texts form one user turn; blank turns are dropped."""
    turns: list[Turn] = []
    above: list[str] = []
    for source in sources:
        rendered = render(source.text, values)
        if source.role == "text":
            above.append(rendered)
            continue
        _add(turns, "user", "".join(above))
        above.clear()
        _add(turns, source.role, rendered)
    _add(turns, "user", "".join(above))
    return tuple(turns)


def resolve_turns(turns: tuple[Turn, ...], media: Collector) -> tuple[Turn, ...]:
    """`turns` with the media marks of this render cut into parts (`media/marks.py`)."""
    if not media.found:
        return turns
    out = []
    for turn in turns:
        text, parts = media.resolve(turn.text)
        if turn.role == "assistant":  # an assistant turn cannot hold an image: its label stands in
            parts = ()
        out.append(Turn(role=turn.role, text=text, parts=parts))
    return tuple(out)


def is_output_class(value: object) -> bool:
    """Whether a notebook value can be a slot's type: a pydantic model, a dataclass or a TypedDict."""
    if not isinstance(value, type):
        return False
    model = issubclass(value, pydantic.BaseModel)
    return model or dataclasses.is_dataclass(value) or typing_extensions.is_typeddict(value)


def _kind(value: object) -> str:
    return "not defined" if value is None else f"a {type(value).__name__}"


def _add(turns: list[Turn], role: Literal["user", "assistant"], text: str) -> None:
    """Append a turn unless it is whitespace only (layout around tags and slots is not a turn)."""
    if text.strip():
        turns.append(Turn(role=role, text=text.strip()))


def _at(name: str, line: int, col: int, message: str) -> str:
    return f"{name}, line {line}, column {col}: {message}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, jinja2.UndefinedError):
        return exc.message or "undefined"
    if isinstance(exc, RenderLimit | MediaError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True, slots=True, eq=False)
class Condition:
    """An `{% if %}`/`{% elif %}` test, evaluated when the run reaches the block."""

    template_name: str
    expr: CompiledExpr

    def __call__(self, context: Mapping[str, Any], /) -> bool:
        return bool(_evaluate(self.template_name, self.expr, dict(context), "cannot decide the {% if %}"))


@dataclass(frozen=True, slots=True, eq=False)
class Items:
    """A loop's items as bindings of its variables (`{"item": …}`), filtered by its `if`."""

    template_name: str
    expr: CompiledExpr
    targets: tuple[str, ...]
    test: CompiledExpr | None = None

    def __call__(self, context: Mapping[str, Any], /) -> list[dict[str, Any]]:
        values = dict(context)
        found = _evaluate(self.template_name, self.expr, values, "cannot loop")
        if isinstance(found, Mapping):
            found = list(found)  # as Jinja does: a mapping loops over its keys
        try:
            items = list(found)  # type: ignore[call-overload]  # any iterable; a TypeError is reported below
        except TypeError:
            where = _at(self.template_name, self.expr.node.line, self.expr.node.col, "cannot loop")
            raise TemplateRenderError(f"{where}: {type(found).__name__} is not something to loop over") from None
        bindings = [self.bind(item) for item in items]
        if self.test is None:
            return bindings
        test = self.test
        return [b for b in bindings if _evaluate(self.template_name, test, {**values, **b}, "cannot filter the loop")]

    def bind(self, item: object) -> dict[str, Any]:
        if len(self.targets) == 1:
            return {self.targets[0]: item}
        values: tuple[Any, ...] = ()
        if isinstance(item, Iterable) and not isinstance(item, str):
            values = tuple(item)  # unpacking, as `for a, b in …` does
        if len(values) != len(self.targets):
            where = _at(self.template_name, self.expr.node.line, self.expr.node.col, "cannot loop")
            raise TemplateRenderError(f"{where}: cannot unpack {item!r} into {', '.join(self.targets)}")
        return dict(zip(self.targets, values, strict=True))


def _evaluate(template_name: str, expr: CompiledExpr, values: dict[str, Any], what: str) -> object:
    try:
        value = expr.function(**values)
    except Exception as exc:  # any error a user's expression raises, located for the person
        where = _at(template_name, expr.node.line, expr.node.col, what)
        raise TemplateRenderError(f"{where}: {_describe(exc)}") from exc
    if isinstance(value, jinja2.Undefined):
        where = _at(template_name, expr.node.line, expr.node.col, what)
        raise TemplateRenderError(f"{where}: {expr.node.expression.strip()} is undefined")
    return value


faster_init(Reference, TurnSource, DynamicOption, SlotRenderer, TextRenderer, Condition, Items)
