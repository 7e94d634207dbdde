"""A slot's step + the context → the `RenderedSlot` it sends: values, never text to parse again.

Rendering happens when the engine reaches the slot, so `{{ earlier_slot }}` sees that slot's answer.
Whatever a `{{ }}` produces lands inside a `Turn` string or an option value; it can never become a
slot, a tag or more Jinja.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

import jinja2

from ..errors import TemplateRenderError
from ..wire import scrub_text
from . import options as opts
from .jinja import CompiledExpr, CompiledText
from .program import RenderedSlot, SlotOptions, Turn
from .render_limits import RenderLimit, current_budget, render_budget

Choice = str | CompiledExpr


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

    def __call__(self, context: Mapping[str, Any], /) -> RenderedSlot:
        """The system text, turns and options this slot sends for `context`.

        Raises:
            TemplateRenderError: a Jinja expression failed (e.g. `{{ 1 / 0 }}`, an undefined
                attribute) or a `{{ }}` option value does not suit its option.
        """
        values = dict(context)
        with render_budget():  # bounded: see render_limits.py
            system = [self.text(block, values).strip() for block in self.system]
            return RenderedSlot(
                system="\n\n".join(part for part in system if part) or None,
                turns=self.rendered_turns(values),
                options=self.options(values),
            )

    def rendered_turns(self, values: dict[str, Any]) -> tuple[Turn, ...]:
        turns: list[Turn] = []
        above: list[str] = []  # consecutive plain texts form one user turn
        for source in self.turns:
            rendered = self.text(source.text, values)
            if source.role == "text":
                above.append(rendered)
                continue
            _add(turns, "user", "".join(above))
            above.clear()
            _add(turns, source.role, rendered)
        _add(turns, "user", "".join(above))
        if not turns or turns[-1].role != "user":
            # Every slot ends on a user turn; with nothing above it, that turn is empty.
            turns.append(Turn(role="user", text=""))
        return tuple(turns)

    def options(self, values: dict[str, Any]) -> SlotOptions:
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
                # A lone surrogate (not valid UTF-8) in a choice broke pydantic's schema for the answer.
                choices.extend(scrub_text(item)[0] for item in opts.check_choices(self.evaluate(choice, values)))
            except opts.OptionValueError as exc:
                self.fail(choice, str(exc))
        if self.choices:
            settings["choices"] = self.checked_choices(choices)
        settings.setdefault("use_tools", settings.get("tools") is not None)
        settings.pop("required", None)
        return SlotOptions(**settings)

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


def _add(turns: list[Turn], role: Literal["user", "assistant"], text: str) -> None:
    """Append a turn unless it is whitespace only (layout around tags and slots is not a turn)."""
    if text.strip():
        turns.append(Turn(role=role, text=text.strip()))


def _at(name: str, line: int, col: int, message: str) -> str:
    return f"{name}, line {line}, column {col}: {message}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, jinja2.UndefinedError):
        return exc.message or "undefined"
    if isinstance(exc, RenderLimit):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
