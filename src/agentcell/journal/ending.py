"""A run's last row without the messages its earlier rows hold: journal format 2.

A finished run's result holds its conversation twice (`messages`, and `slot_messages` per slot), and the
slots' `messages` rows already hold nearly all of it. Format 1 (every journal before this module) wrote
the result whole: in a batch of one-request rows the last row was half of a row's bytes and most of its
serializing (BENCHMARKS.md, batch throughput). Format 2 marks that row `"format": 2` and writes the
result without `messages` and `slot_messages` (read back empty), and beside it what rebuilds them:

* `"from": {slot: n}`, `"patches": {slot: {i: {field: value}}}` and `"tails": {slot: [...]}`: the slot's
  messages are the first `n` its `messages` rows hold, the fields in `patches` set on them, then its tail
  (left out when empty);
* `"result_messages": [...]`, only when the result's `messages` are not the journaled history followed by
  each slot's messages in order (the engine builds them so; a guard, written whole when it does not hold).

A message comes from the rows only when the writer knows a row holds it as it is now (`Ledger`): the row
was made from a message of the same type whose field values, and its parts' field values, are the same
objects or equal to those now (pydantic-ai may hand back a copy). pydantic-ai sets some fields after the
row was written: a response's run ids and model id when its stream has closed. A field of the message
itself that now holds a plain value (text, a number, `None`) is written as a patch; any other change (its
parts, a request's parts or instructions) puts that message, and every one after it, in the tail, and so
does anything the rows never held (the output tool's return, a resumed run's earlier segment). A value
changed in place (an item of a dict the message holds) is not seen: pydantic-ai sets fields anew.
The reader (`rebuild`) reads format 1 rows as before: each row marks its own format, so a resumed
journal may mix the two.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from ..formats.long_strings import all_long_free, long_free
from ..result import RunResult

FORMAT = 2
"""The format of the run's last row this version writes (format 1: the result whole, no `format` key)."""


WITHOUT_MESSAGES = {"result": {"messages": True, "slot_messages": True}}
"""What the last row's event leaves out of its result (`exclude=` of its dump; the reader's defaults are empty)."""


def values_long_free(result: RunResult) -> bool:
    """Whether the result's fields but its messages hold no string of `LONG` characters or more."""
    return (long_free(result.answer) and all_long_free(result.results.values())
            and all_long_free(result.partial.values()) and all_long_free(result.warnings) and long_free(result.error))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Ending:
    """What the run's last row holds beside its result without messages (see the module docstring)."""

    starts: dict[str, int]
    """Slot → how many of its journaled messages come first."""
    tails: dict[str, list[ModelMessage]]
    """Slot → its messages after those."""
    patches: dict[str, dict[int, Patch]]
    """Slot → position → fields to set on that journaled message (only slots that have some)."""
    messages: tuple[ModelMessage, ...] | None
    """The result's `messages` when they cannot be rebuilt, else `None`."""
    kind: Literal["ending"] = "ending"


Patch = dict[str, "str | int | float | bool | None"]
"""A message's fields set to new plain values since its row was written (a response's run ids, its model id)."""
_PLAIN = frozenset({str, int, float, bool, type(None)})


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
        patches: dict[str, dict[int, Patch]] = {}
        for slot, messages in result.slot_messages.items():
            patched: dict[int, Patch] = {}
            n = _held(self._slots.get(slot, ()), messages, patched)
            starts[slot], tails[slot] = n, list(messages[n:])
            if patched:
                patches[slot] = patched
        whole: tuple[ModelMessage, ...] | None = result.messages
        history = self._history
        ordered = itertools.chain.from_iterable(result.slot_messages.values())
        if (
            history is not None
            and len(history) == result.history_length
            and len(result.messages) == len(history) + sum(map(len, result.slot_messages.values()))
            and _held(history, result.messages, None) == len(history)
            and all(map(operator.is_, result.messages[len(history) :], ordered))
        ):
            whole = None
        return Ending(starts=starts, tails=tails, patches=patches, messages=whole)


def _held(
    known: Sequence[tuple[ModelMessage, tuple[Any, ...]] | None],
    messages: Sequence[ModelMessage],
    patches: dict[int, Patch] | None,
) -> int:
    """How many of `messages`, from the first, the rows hold as they are now, or but for a `Patch` (put in
    `patches` by position; `None`: none allowed)."""
    n = 0
    for entry, message in zip(known, messages, strict=False):
        if entry is None or type(entry[0]) is not type(message):
            break
        now = _fields(message)
        if not _same(entry[1], now):
            patch = None if patches is None else _patch(message, entry[1], now)
            if patch is None or patches is None:
                break
            patches[n] = patch
        n += 1
    return n


def _patch(message: ModelMessage, before: tuple[Any, ...], now: tuple[Any, ...]) -> Patch | None:
    """What changed since the row was made, as a patch: each value set anew is equal to the one written (a copy
    of it), or is one of the message's own fields now holding a plain value. `None` for any other change."""
    names = _fields_of(type(message))[0]
    if len(before) != len(now):
        return None
    patch: Patch = {}
    for i, (old, new) in enumerate(zip(before, now, strict=True)):
        if old is new or (type(old) is type(new) and old == new):
            continue
        if i >= len(names) or type(new) not in _PLAIN or names[i] == "kind":
            return None
        patch[names[i]] = new
    return patch


def _same(before: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    return len(before) == len(now) and all(map(operator.is_, before, now))


def _fields(message: ModelMessage) -> tuple[Any, ...]:
    """The values of a message's fields and of its parts' fields (the objects themselves: set anew, they differ)."""
    values = _fields_of(type(message))[1](message)
    parts = getattr(message, "parts", ())
    return (*values, *(value for part in parts for value in _fields_of(type(part))[1](part)))


_GETTERS: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]] = {}


def _fields_of(kind: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]:
    """`kind`'s dataclass fields that `__init__` takes, and a function giving their values in C (`attrgetter`)."""
    known = _GETTERS.get(kind)
    if known is None:
        fields = getattr(kind, "__dataclass_fields__", {})
        names = tuple(name for name, f in fields.items() if f.init)
        getter: Callable[[Any], tuple[Any, ...]]
        if len(names) > 1:
            getter = operator.attrgetter(*names)
        elif names:
            one = operator.attrgetter(names[0])
            getter = lambda value: (one(value),)  # noqa: E731
        else:
            getter = lambda value: (value,)  # noqa: E731
        known = _GETTERS[kind] = (names, getter)
    return known


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
    starts, raw = row.get("from"), row.get("tails")
    if not isinstance(starts, dict) or not isinstance(raw, dict) or not set(raw) <= set(starts):
        raise ValueError("a format 2 ending needs `from` for every slot and `tails` for some of them")
    tails = {slot: ModelMessagesTypeAdapter.validate_python(raw.get(slot, [])) for slot in starts}
    patches = row.get("patches", {})
    if not isinstance(patches, dict):
        raise ValueError("a format 2 ending's `patches` must be an object")
    slots: dict[str, tuple[ModelMessage, ...]] = {}
    for slot, tail in tails.items():
        start, known = starts[slot], held.get(slot, ())
        if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start <= len(known):
            raise ValueError(f"the ending takes {start!r} messages of slot {slot!r}; its rows hold {len(known)}")
        kept = list(known[:start])
        for index, patch in patches.get(slot, {}).items():
            if not (index.isdigit() and int(index) < start and isinstance(patch, dict)):
                raise ValueError(f"a format 2 ending patches message {index!r} of slot {slot!r}, not one it takes")
            kept[int(index)] = dataclasses.replace(kept[int(index)], **patch)
        slots[slot] = (*kept, *fill(tail))
    if "result_messages" in row:
        messages = tuple(fill(ModelMessagesTypeAdapter.validate_python(row["result_messages"])))
    else:
        messages = (*history, *itertools.chain.from_iterable(slots.values()))
    return dataclasses.replace(result, messages=messages, slot_messages=slots)
