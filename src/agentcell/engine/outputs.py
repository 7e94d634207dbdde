"""A slot's type → what pydantic-ai is asked to produce, how the answer is checked, and its Python value.

Free text (`text`, `extract`, `think`, `speak`, `poem`, one each) streams as plain text; its string
constraints and `extract`'s verbatim rule are checked by an output validator, so a miss is a
validation retry the model reads. Every other slot answers through the output tool with a one-field
model `{response: T}` (one tool even for `T | None`), whose schema carries the bounds (`minItems`,
`ge`, …) so a wrong answer is refused by validation and retried. `halt` asks for `{triggered, reason}`.

Values are plain: lists are lists, dates are `date`/`datetime`/`time`/`timedelta` (a naive datetime
gets the run's reference time zone), a notebook class gives an instance of exactly that class.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, create_model

from ..template.program import SlotOptions, SlotSpec
from .guidance import count_phrase, describe

TEXT_TYPES = frozenset({"text", "extract", "think", "speak", "poem"})
"""Types that stream as plain text when they are not lists."""
ALWAYS_REQUIRED = frozenset({"json", "poem", "record", "decide", "score", "date_rule", "class"})
"""Types whose answer is never `None` (`json` may still *be* null: it is any JSON value)."""


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


Check = Callable[[str], str | None]
"""A check of free text: `None` when it passes, else what the model is told to fix."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """How one slot run asks for, checks and converts its answer."""

    type: Any
    """The pydantic-ai `output_type`."""
    streams_text: bool
    value: Callable[[Any], Any]
    """The slot's value from pydantic-ai's output."""
    check: Check | None = None
    """For free text: the constraints and the verbatim rule."""


def plan(spec: SlotSpec, options: SlotOptions, *, now: dt.datetime, seen: str = "") -> Output:
    """What a slot of `spec` (with `options`) asks the model for.

    Args:
        spec: the slot as written.
        options: its rendered options (choices, constraints, the notebook class).
        now: the run's reference time (a naive datetime answer takes its time zone).
        seen: everything the model is shown for this slot, for `extract`'s verbatim rule.
    """
    if spec.type == "halt":
        return Output(type=HaltVerdict, streams_text=False, value=_verdict)
    if spec.type in TEXT_TYPES and spec.quantifier is None:
        return Output(type=str, streams_text=True, value=_same, check=text_check(spec, options, seen))
    item = item_type(spec, options, now=now, seen=seen)
    description = describe(spec, options)
    if spec.quantifier is not None:
        least, most = spec.quantifier
        described = count_phrase(spec.quantifier) + " " + description
        field = (list[item], Field(min_length=least, max_length=most, description=described))  # type: ignore[valid-type]
    elif spec.required or spec.type in ALWAYS_REQUIRED:
        field = (item, Field(description=description))
    else:
        field = (item | None, Field(description=description + " Null if there is none."))
    model = create_model("Answer", __doc__=_doc(spec), response=field)
    return Output(type=model, streams_text=False, value=_converter(spec))


def item_type(spec: SlotSpec, options: SlotOptions, *, now: dt.datetime, seen: str) -> Any:
    """The type of one answer (one item of a list slot)."""
    kind = spec.type
    if kind in TEXT_TYPES:
        return _string(spec, options, seen)
    if kind in ("int", "number", "score"):
        return _number(kind, options)
    if kind in ("date", "datetime", "time"):
        return _temporal(kind, options, now)
    simple: dict[str, Any] = {
        "json": Any,
        "record": dict[str, Any],
        "bool": bool,
        "duration": dt.timedelta,
        "date_rule": DateRule,
    }
    if kind in simple:
        return simple[kind]
    if kind in ("pick", "decide"):
        return Literal[options.choices] if options.choices else bool
    if kind == "class":
        return options.output_class
    raise AssertionError(f"no output type for [[{spec.type}:{spec.name}]]")


def _string(spec: SlotSpec, options: SlotOptions, seen: str) -> Any:
    check = text_check(spec, options, seen)
    if check is None:
        return str

    def validate(value: str) -> str:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return Annotated[str, AfterValidator(validate)]


def _number(kind: str, options: SlotOptions) -> Any:
    base: Any = int if kind == "int" else float
    if kind == "score":
        return Annotated[float, Field(ge=0, le=max(len(options.choices) - 1, 0))]
    bounds = {key: getattr(options, key) for key in ("ge", "le", "gt", "lt") if getattr(options, key) is not None}
    return Annotated[base, Field(**bounds)] if bounds else base


_PARSE: dict[str, Callable[[str], Any]] = {
    "date": dt.date.fromisoformat,
    "datetime": dt.datetime.fromisoformat,
    "time": dt.time.fromisoformat,
}
_TYPES: dict[str, type] = {"date": dt.date, "datetime": dt.datetime, "time": dt.time}


def _temporal(kind: str, options: SlotOptions, now: dt.datetime) -> Any:
    bounds: dict[str, Any] = {}
    for key in ("ge", "le", "gt", "lt"):
        value = getattr(options, key)
        if isinstance(value, str):
            bound = _PARSE[kind](value)
            bounds[key] = _aware(bound, now) if isinstance(bound, dt.datetime) else bound
    base: Any = _TYPES[kind]
    if kind == "datetime":
        # A naive answer is read in the run's reference time zone, so comparisons and bounds work.
        base = Annotated[dt.datetime, AfterValidator(lambda value: _aware(value, now))]
    return Annotated[base, Field(**bounds)] if bounds else base


def _aware(value: dt.datetime, now: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=now.tzinfo)


def text_check(spec: SlotSpec, options: SlotOptions, seen: str) -> Check | None:
    """The constraints on free text (and `extract`'s verbatim rule), or `None` when there are none."""
    checks: list[Check] = []
    if options.min_length is not None:
        least = options.min_length
        checks.append(lambda text: None if len(text) >= least else f"answer with at least {least} characters")
    if options.max_length is not None:
        most = options.max_length
        checks.append(lambda text: None if len(text) <= most else f"answer with at most {most} characters")
    if options.pattern is not None:
        pattern = re.compile(options.pattern)
        checks.append(lambda text: None if pattern.search(text) else f"the answer must match {options.pattern!r}")
    if spec.type == "extract":
        checks.append(verbatim(seen))
    if not checks:
        return None

    def check(text: str) -> str | None:
        return next((problem for problem in (c(text) for c in checks) if problem is not None), None)

    return check


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


def _doc(spec: SlotSpec) -> str:
    if spec.quantifier is not None:
        return "Give the answers as a list."
    return "Give the answer."


def _same(output: Any) -> Any:
    return output


def _verdict(output: HaltVerdict) -> dict[str, Any]:
    return {"triggered": output.triggered, "reason": output.reason}


def _converter(spec: SlotSpec) -> Callable[[Any], Any]:
    def plain(item: Any) -> Any:
        return item.model_dump() if isinstance(item, DateRule) else item

    if spec.quantifier is not None:
        return lambda output: [plain(item) for item in output.response]
    return lambda output: plain(output.response)
