"""Long strings: where a run's data may hold one, found without serializing it or walking it in Python.

A long answer (a million tokens is ~8 MB) appears in several places at a run's end: the slot's value,
the result's answer and messages, the journal's rows, the exported transcript. Serializing each place
whole would copy the answer once per place at the run's peak of memory; walking every value of every
event in Python to look for one would cost more than the rest of a tool round. So strings of `LONG`
characters or more are found where they can be: an event's own top-level fields (`hollow_top`), the
fields of pydantic-ai's messages and parts (`messages_long_free`), or a full walk when nothing cheaper
can tell (`hollow`). `jsonsafe.py` (the UTF-8 check) and `journal/rowjson.py` (rows written in slices) share
them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic_core import to_json

LONG = 32_768
"""Strings this long (characters) are checked in place, not serialized (`hollow`)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def hollow_top(value: Any) -> Any:
    """`hollow` of a dict's own long string values only (nested ones are serialized as they are)."""
    if not isinstance(value, dict):
        return hollow(value) if isinstance(value, str) else value
    for item in value.values():  # a loop, not a comprehension: no call or list per event when none is long
        if type(item) is str and len(item) >= LONG:
            break
    else:
        return value
    long = [key for key, item in value.items() if type(item) is str and len(item) >= LONG]
    return {**value, **{key: hollow(value[key]) for key in long}}


def hollow(value: Any) -> Any:
    """`value` with each long string replaced by `""` once found valid UTF-8 (containers copied only where
    one changed; `value` itself is never changed).

    Raises:
        ValueError: a long string holds a lone surrogate.
    """
    if isinstance(value, str):
        if len(value) < LONG:
            return value
        if not value.isascii() and _SURROGATE.search(value):
            raise ValueError("a lone surrogate")
        return ""
    if isinstance(value, dict):
        changed = {key: new for key, item in value.items() if (new := hollow(item)) is not item}
        return {**value, **changed} if changed else value
    if isinstance(value, list | tuple):
        items = [hollow(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    return value


_SHORT = frozenset({type(None), bool, int, float, datetime})


def long_free(value: Any) -> bool:
    """Whether `value` holds no string of `LONG` characters or more: a string measured in place, a short
    scalar, or anything else serialized alone in C and measured. `False` when unsure."""
    kind = type(value)
    if kind is str:
        return len(value) < LONG
    if kind in _SHORT:
        return True
    try:
        return len(to_json(value, fallback=repr)) < LONG
    except Exception:  # a lone surrogate: the caller's walk and scrub decide
        return False


def all_long_free(values: Iterable[Any]) -> bool:
    """`long_free` of every value."""
    return all(map(long_free, values))


def messages_long_free(messages: Iterable[Any]) -> bool:
    """Whether pydantic-ai messages hold no string of `LONG` characters or more, judged without a walk of
    their JSON: each field of each message and of its parts (dataclasses) is `long_free`. `False` when
    unsure (not a dataclass)."""
    for message in messages:
        if not _fields_long_free(message, _MESSAGE_SKIP):
            return False
        for part in getattr(message, "parts", ()):
            if not _fields_long_free(part, ()):
                return False
    return True


_MESSAGE_SKIP = ("parts", "usage")
"""A message's fields not measured: its parts (each measured on its own) and its token counts (numbers,
whose serializer is pydantic-ai's own Python code: measuring them cost more than the rest)."""


def _fields_long_free(value: Any, skip: tuple[str, ...]) -> bool:
    fields = getattr(type(value), "__dataclass_fields__", None)
    if fields is None:
        return False
    for name in fields:
        item = getattr(value, name)
        kind = type(item)
        if kind is str:
            if len(item) >= LONG:
                return False
        elif kind not in _SHORT and name not in skip and not long_free(item):
            return False
    return True


def result_long_free(result: Any) -> bool:
    """Whether a `RunResult` holds no string of `LONG` characters or more (its answer, values, partial
    texts, warnings, error and messages; a slot's messages are the run's own message objects)."""
    seen = {id(message) for message in result.messages}
    return (
        long_free(result.answer)
        and all_long_free(result.results.values())
        and all_long_free(result.partial.values())
        and all_long_free(result.warnings)
        and long_free(result.error)
        and messages_long_free(result.messages)
        and all(
            messages_long_free(m for m in messages if id(m) not in seen) for messages in result.slot_messages.values()
        )
    )
