"""The shapes an answer can take: what a slot kind (`kinds.py`) asks the model for, and its Python value.

Each kind names one `Answer`: the type of one answer (what pydantic validates, given the slot's options
and the run's reference time) and how that validated answer becomes the slot's plain value. The engine
wraps the type as the run needs it (a one-field output model, a list with bounds, `| None` when the answer
may be missing); free text skips all that and streams (`SlotKind.streams_text`). A new kind reuses a shape
here, or writes its own `Answer` beside its record.

Values are plain: lists are lists, dates are `date`/`datetime`/`time`/`timedelta` (a naive datetime gets
the run's reference time zone), a recurrence rule is a dict, a notebook class gives an instance of it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, Field

Check = Callable[[str], str | None]
"""A check of free text: `None` when it passes, else what the model is told to fix."""


class AskedOptions(Protocol):
    """The rendered options an answer's shape reads (`program.SlotOptions` has them all)."""

    @property
    def choices(self) -> tuple[str, ...]: ...
    @property
    def ge(self) -> float | str | None: ...
    @property
    def le(self) -> float | str | None: ...
    @property
    def gt(self) -> float | str | None: ...
    @property
    def lt(self) -> float | str | None: ...
    @property
    def output_class(self) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked:
    """What one answer's type is built from."""

    options: AskedOptions
    now: dt.datetime
    """The run's reference time (a naive datetime answer takes its time zone)."""
    check: Check | None = None
    """The free-text check (string constraints and the kind's rule), for text answers."""


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """One kind's converter: the type of one answer, and that answer as the slot's value."""

    item: Callable[[Asked], Any]
    """The type pydantic validates one answer against."""
    value: Callable[[Any], Any] = _same
    """One validated answer → the slot's plain value (an item of it, for a list slot)."""
    whole: bool = False
    """The output is `item` itself, never `{response: item}`, a list or optional (`halt`'s verdict)."""


class HaltVerdict(BaseModel):
    """Decide whether the condition described above holds."""

    triggered: bool = Field(description="True when the condition described in the prompt holds.")
    reason: str = Field(description="One short sentence explaining the decision.")


class DateRule(BaseModel):
    """A recurrence rule in the terms of RFC 5545 (dateutil's rrule)."""

    freq: Literal["DAILY", "WEEKLY", "MONTHLY", "YEARLY"] = Field(description="How often it repeats.")
    dtstart: dt.date = Field(description="The first occurrence (use the current year unless told otherwise).")
    count: int | None = Field(default=None, description="How many occurrences, if limited.")
    until: dt.date | None = Field(default=None, description="The last possible date, if limited.")
    interval: int = Field(default=1, description="Every nth period (2 with WEEKLY: every other week).")
    byweekday: list[int] | None = Field(default=None, description="Weekdays, 0 = Monday … 6 = Sunday.")
    bymonth: list[int] | None = Field(default=None, description="Months, 1 = January … 12 = December.")
    bymonthday: list[int] | None = Field(default=None, description="Days of the month.")
    bysetpos: list[int] | None = Field(default=None, description="Which occurrence in the period (-1 = last).")


def plain(kind: Any, value: Callable[[Any], Any] = _same) -> Answer:
    """An answer of a fixed type (`bool`, `dict[str, Any]`, a model), converted by `value`."""
    return Answer(item=lambda _asked: kind, value=value)


def _text(asked: Asked) -> Any:
    check = asked.check
    if check is None:
        return str

    def validate(value: str) -> str:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return Annotated[str, AfterValidator(validate)]


TEXT = Answer(item=_text)
"""Free text (when it is a list item: a free-text slot alone streams as plain text), its check applied."""


def _bounds(asked: Asked) -> dict[str, Any]:
    options = asked.options
    found = {"ge": options.ge, "le": options.le, "gt": options.gt, "lt": options.lt}
    return {key: value for key, value in found.items() if value is not None}


def number(base: type) -> Answer:
    """`int` or `float`, within the slot's `min`/`max`/`gt`/`lt`."""

    def item(asked: Asked) -> Any:
        bounds = _bounds(asked)
        return Annotated[base, Field(**bounds)] if bounds else base

    return Answer(item=item)


SCORE = Answer(item=lambda asked: Annotated[float, Field(ge=0, le=max(len(asked.options.choices) - 1, 0))])
"""The number of a level, lowest first (a float: between two levels is allowed)."""

CHOICE = Answer(item=lambda asked: Literal[asked.options.choices] if asked.options.choices else bool)
"""One of the choices as written (yes or no without any)."""

NOTEBOOK_CLASS = Answer(item=lambda asked: asked.options.output_class)
"""An instance of the notebook class the slot names."""

VERDICT = Answer(item=lambda _asked: HaltVerdict, value=lambda v: {"triggered": v.triggered, "reason": v.reason},
                 whole=True)  # fmt: skip
"""A guard's `{triggered, reason}`."""

RECURRENCE = plain(DateRule, lambda rule: rule.model_dump())


def temporal(kind: type[dt.date] | type[dt.time]) -> Answer:
    """A date, datetime or time within the slot's ISO bounds; a naive datetime takes the run's time zone."""

    def item(asked: Asked) -> Any:
        now = asked.now
        bounds: dict[str, Any] = {}
        for key, text in _bounds(asked).items():
            if isinstance(text, str):
                bound = kind.fromisoformat(text)
                bounds[key] = _aware(bound, now) if isinstance(bound, dt.datetime) else bound
        base: Any = kind
        if kind is dt.datetime:  # a naive answer is read in the run's time zone, so comparisons and bounds work
            base = Annotated[dt.datetime, AfterValidator(lambda value: _aware(value, now))]
        return Annotated[base, Field(**bounds)] if bounds else base

    return Answer(item=item)


def _aware(value: dt.datetime, now: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=now.tzinfo)


def verbatim(seen: str) -> Check:
    """`extract`'s rule: the answer is copied from what the model was shown (whitespace may differ)."""
    haystack = _squash(seen)

    def check(text: str) -> str | None:
        quote = _squash(text)
        if not quote or quote in haystack or quote.strip("\"'“”‘’") in haystack:
            return None
        return (
            "that is not a verbatim quote: copy the exact words from the text you were given, "
            "without paraphrasing, summarising or adding anything"
        )

    return check


def _squash(text: str) -> str:
    return " ".join(text.split())
