"""A slot's type → what pydantic-ai is asked to produce, how the answer is checked, and its Python value.

The facts are the slot's kind (`template/kinds.py`): free text (a kind that `streams_text`, one answer)
streams as plain text, its string constraints and its kind's rule (`extract`'s verbatim quote) checked by
an output validator, so a miss is a validation retry the model reads. Every other slot answers through
the output tool with a one-field model `{response: T}` (one tool even for `T | None`), `T` being its
kind's answer type, whose schema carries the bounds (`minItems`, `ge`, …) so a wrong answer is refused
by validation and retried. A kind whose answer is `whole` (`halt`: `{triggered, reason}`) is asked for as
it is. The kind's converter makes the validated answer the slot's plain value.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field, create_model

from ..formats.frozen import faster_init
from ..template.answers import Answer, Asked, Check, DateRule, HaltVerdict
from ..template.kinds import KINDS
from ..template.program import SlotOptions, SlotSpec
from .guidance import count_phrase, describe

__all__ = ["Check", "DateRule", "HaltVerdict", "Output", "item_type", "plan", "text_check"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """How one slot run asks for, checks and converts its answer."""

    type: Any
    """The pydantic-ai `output_type`."""
    streams_text: bool
    value: Callable[[Any], Any]
    """The slot's value from pydantic-ai's output."""
    check: Check | None = None
    """For free text: the constraints and the kind's rule."""


def plan(spec: SlotSpec, options: SlotOptions, *, now: dt.datetime, seen: str = "") -> Output:
    """What a slot of `spec` (with `options`) asks the model for.

    Args:
        spec: the slot as written.
        options: its rendered options (choices, constraints, the notebook class).
        now: the run's reference time (a naive datetime answer takes its time zone).
        seen: everything the model is shown for this slot, for `extract`'s verbatim rule.
    """
    kind = KINDS[spec.type]
    answer = _answer(spec)
    if answer.whole:
        return Output(type=answer.item(Asked(options=options, now=now)), streams_text=False, value=answer.value)
    if kind.streams_text and spec.quantifier is None:
        return Output(type=str, streams_text=True, value=answer.value, check=text_check(spec, options, seen))
    item = item_type(spec, options, now=now, seen=seen)
    description = describe(spec, options)
    if spec.quantifier is not None:
        least, most = spec.quantifier
        described = count_phrase(spec.quantifier) + " " + description
        field = (list[item], Field(min_length=least, max_length=most, description=described))  # type: ignore[valid-type]
    elif spec.required or kind.always_required:
        field = (item, Field(description=description))
    else:
        field = (item | None, Field(description=description + " Null if there is none."))
    model = create_model("Answer", __doc__=_doc(spec), response=field)
    return Output(type=model, streams_text=False, value=_converter(spec, answer))


def reads_seen(spec: SlotSpec) -> bool:
    """Whether `plan` reads `seen` for a slot of `spec` (its kind has a rule on the text it was shown: `extract`)."""
    return KINDS[spec.type].rule is not None


def item_type(spec: SlotSpec, options: SlotOptions, *, now: dt.datetime, seen: str) -> Any:
    """The type of one answer (one item of a list slot)."""
    check = text_check(spec, options, seen) if KINDS[spec.type].streams_text else None
    return _answer(spec).item(Asked(options=options, now=now, check=check))


def _answer(spec: SlotSpec) -> Answer:
    answer = KINDS[spec.type].answer
    if answer is None:
        raise AssertionError(f"no output type for [[{spec.type}:{spec.name}]]")
    return answer


def text_check(spec: SlotSpec, options: SlotOptions, seen: str) -> Check | None:
    """The constraints on free text (and its kind's rule), or `None` when there are none."""
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
    rule = KINDS[spec.type].rule
    if rule is not None:
        checks.append(rule(seen))
    if not checks:
        return None

    def check(text: str) -> str | None:
        return next((problem for problem in (c(text) for c in checks) if problem is not None), None)

    return check


def _doc(spec: SlotSpec) -> str:
    if spec.quantifier is not None:
        return "Give the answers as a list."
    return "Give the answer."


def _converter(spec: SlotSpec, answer: Answer) -> Callable[[Any], Any]:
    plain = answer.value
    if spec.quantifier is not None:
        return lambda output: [plain(item) for item in output.response]
    return lambda output: plain(output.response)


faster_init(Output)  # one per slot run (`formats/frozen.py`)
