"""A run's last row without the messages its earlier rows hold: journal format 2.

A finished run's result holds its conversation twice (`messages`, and `slot_messages` per slot), and the
slots' `messages` rows already hold nearly all of it. Format 1 (every journal before this module) wrote
the result whole: in a batch of one-request rows the last row was half of a row's bytes and most of its
serializing (BENCHMARKS.md, batch throughput). Format 2 marks that row `"format": 2` and writes the
result with `messages` and `slot_messages` empty, and beside it what rebuilds them:

* `"from": {slot: n}` and `"tails": {slot: [...]}`: the slot's messages are the first `n` its `messages`
  rows hold, then its tail;
* `"result_messages": [...]`, only when the result's `messages` are not the journaled history followed by
  each slot's messages in order (the engine builds them so; a guard, written whole when it does not hold).

A message comes from the rows only when the writer knows the row holds it as it is now (`Ledger`): it is
the very object the row was made from, and no field of it or of its parts was set since. pydantic-ai sets
some after a message was journaled (a response's run ids when its stream has closed, a request's parts or
instructions): those, and every message after them, go in the tail. Anything the rows never held (the
output tool's return, a resumed run's earlier segment) goes there too. The reader (`rebuild`) reads format 1
rows as before: the row marks its own format, so a resumed journal may mix the two.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import TypeAdapter
from pydantic_ai.messages import ModelMessage

from ..result import RunResult

FORMAT = 2
"""The format of the run's last row this version writes (format 1: the result whole, no `format` key)."""


@functools.cache
def tails_adapter() -> TypeAdapter[dict[str, list[ModelMessage]]]:
    return TypeAdapter(dict[str, list[ModelMessage]])


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Ending:
    """What the run's last row holds beside its emptied result (see the module docstring)."""

    result: RunResult
    """The result with `messages` and `slot_messages` empty."""
    starts: dict[str, int]
    """Slot → how many of its journaled messages come first."""
    tails: dict[str, list[ModelMessage]]
    """Slot → its messages after those."""
    messages: tuple[ModelMessage, ...] | None
    """The result's `messages` when they cannot be rebuilt, else `None`."""
    kind: Literal["ending"] = "ending"


class Ledger:
    """The message objects a run's rows were made from, by slot and position, each with its fields as written."""

    __slots__ = ("_history", "_slots")

    def __init__(self) -> None:
        self._slots: dict[str, list[tuple[ModelMessage, tuple[Any, ...]] | None]] = {}
        self._history: list[tuple[ModelMessage, tuple[Any, ...]]] | None = None

    def wrote(self, slot: str, index: int, messages: Sequence[ModelMessage]) -> None:
        """Slot `slot`'s row from `index` on holds `messages` (as the reader does: it replaces from `index`)."""
        known = self._slots.setdefault(slot, [])
        if index > len(known):  # rows of an earlier segment: not this writer's
            known.extend([None] * (index - len(known)))
        del known[index:]
        known.extend((m, _fields(m)) for m in messages)

    def wrote_history(self, messages: Sequence[ModelMessage]) -> None:
        self._history = [(m, _fields(m)) for m in messages]

    def ending(self, result: RunResult) -> Ending:
        """`result` split into what the last row writes and what the rows already hold."""
        starts: dict[str, int] = {}
        tails: dict[str, list[ModelMessage]] = {}
        for slot, messages in result.slot_messages.items():
            n = _held(self._slots.get(slot, ()), messages)
            starts[slot], tails[slot] = n, list(messages[n:])
        whole: tuple[ModelMessage, ...] | None = result.messages
        history = self._history
        ordered = itertools.chain.from_iterable(result.slot_messages.values())
        if (
            history is not None
            and len(history) == result.history_length
            and len(result.messages) == len(history) + sum(map(len, result.slot_messages.values()))
            and _held(history, result.messages) == len(history)
            and all(map(operator.is_, result.messages[len(history) :], ordered))
        ):
            whole = None
        hollow = dataclasses.replace(result, messages=(), slot_messages={})
        return Ending(result=hollow, starts=starts, tails=tails, messages=whole)


def _held(known: Sequence[tuple[ModelMessage, tuple[Any, ...]] | None], messages: Sequence[ModelMessage]) -> int:
    """How many of `messages`, from the first, the rows hold as they are now."""
    n = 0
    for entry, message in zip(known, messages, strict=False):
        if entry is None or entry[0] is not message or not _same(entry[1], _fields(message)):
            break
        n += 1
    return n


def _same(before: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    return len(before) == len(now) and all(map(operator.is_, before, now))


def _fields(message: ModelMessage) -> tuple[Any, ...]:
    """The values of a message's fields and of its parts' fields (the objects themselves: set anew, they differ)."""
    values = _getter(type(message))(message)
    parts = getattr(message, "parts", ())
    return (*values, *(value for part in parts for value in _getter(type(part))(part)))


_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _getter(kind: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving the values of `kind`'s dataclass fields, in C (`attrgetter`); made once per type."""
    getter = _GETTERS.get(kind)
    if getter is None:
        names = tuple(getattr(kind, "__dataclass_fields__", ()))
        if len(names) > 1:
            getter = operator.attrgetter(*names)
        elif names:
            one = operator.attrgetter(names[0])
            getter = lambda value: (one(value),)  # noqa: E731
        else:
            getter = lambda value: (value,)  # noqa: E731
        _GETTERS[kind] = getter
    return getter


def rebuild(
    result: RunResult,
    row: Mapping[str, Any],
    held: Mapping[str, Sequence[ModelMessage]],
    history: Sequence[ModelMessage],
    fill: Callable[[Sequence[ModelMessage]], list[ModelMessage]],
) -> RunResult:
    """A format 2 last row's result made whole from the messages the rows before it hold (`held`, `history`).

    Raises:
        ValueError: the row is not one this version reads (a newer format, or messages the rows do not hold).
    """
    version = row.get("format")
    if version != FORMAT:
        raise ValueError(f"journal format {version!r} is not one this agentcell reads (written by a newer one?)")
    starts, tails = row.get("from"), tails_adapter().validate_python(row.get("tails"))
    if not isinstance(starts, dict) or set(starts) != set(tails):
        raise ValueError("a format 2 ending needs `from` and `tails` for the same slots")
    slots: dict[str, tuple[ModelMessage, ...]] = {}
    for slot, tail in tails.items():
        start, known = starts[slot], held.get(slot, ())
        if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start <= len(known):
            raise ValueError(f"the ending takes {start!r} messages of slot {slot!r}; its rows hold {len(known)}")
        slots[slot] = (*known[:start], *fill(tail))
    if "result_messages" in row:
        messages = tuple(fill(tails_adapter().validate_python({"": row["result_messages"]})[""]))
    else:
        messages = (*history, *itertools.chain.from_iterable(slots.values()))
    return dataclasses.replace(result, messages=messages, slot_messages=slots)
