"""The slot types: which names exist, their aliases, and which options and quantifiers each takes.

One table (`TYPES`) says per type which constraint options fit it, what its values without a key
mean (pick choices, score levels), whether it may be a list, and whether it is always required. The
compiler checks every slot against it, so an option on a type it does not fit is an error at the
option's column instead of being ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..actions import BUILTIN_ACTIONS
from .program import SLOT_TYPES, SlotType

NUMERIC = frozenset({"ge", "le", "gt", "lt"})
STRING = frozenset({"min_length", "max_length", "pattern"})
CONSTRAINTS = NUMERIC | STRING


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """What one slot type accepts."""

    constraints: frozenset[str] = frozenset()
    """Constraint options that fit it (canonical names: `ge`, `le`, `gt`, `lt`, `min_length`, …)."""
    positional: Literal["choices", "levels", "optional choices"] | None = None
    """What values without a key are: `pick` choices (needed), `score` levels (two or more), `decide`
    choices (optional: without them it decides yes or no)."""
    listable: bool = True
    """Whether a quantifier may make it a list."""
    always_required: bool = False
    """Never `None`, with or without `!`."""
    bounds: Literal["number", "iso"] = "number"
    """What `min`/`max` values are: numbers, or ISO dates/times."""


TYPES: dict[SlotType, TypeInfo] = {
    "text": TypeInfo(STRING),
    "extract": TypeInfo(STRING),
    "think": TypeInfo(STRING),
    "speak": TypeInfo(STRING),
    "poem": TypeInfo(STRING, always_required=True),
    "json": TypeInfo(),
    "record": TypeInfo(always_required=True),
    "bool": TypeInfo(),
    "int": TypeInfo(NUMERIC),
    "number": TypeInfo(NUMERIC),
    "pick": TypeInfo(positional="choices"),
    "decide": TypeInfo(positional="optional choices", listable=False, always_required=True),
    "score": TypeInfo(positional="levels", listable=False, always_required=True),
    "halt": TypeInfo(listable=False, always_required=True),
    "date": TypeInfo(NUMERIC, bounds="iso"),
    "datetime": TypeInfo(NUMERIC, bounds="iso"),
    "time": TypeInfo(NUMERIC, bounds="iso"),
    "duration": TypeInfo(),
    "date_rule": TypeInfo(always_required=True),
    "class": TypeInfo(),
    "action": TypeInfo(listable=False),
}
assert set(TYPES) == {*SLOT_TYPES, "class", "action"}

ALIASES: dict[str, SlotType] = {"respond": "text", "default": "text", "boolean": "bool"}
KNOWN_TYPES: tuple[str, ...] = (*SLOT_TYPES[:1], "respond", "default", *SLOT_TYPES[1:], "boolean")
"""Every type name a slot may use, as error messages list them."""

# Words people reach for; only used to suggest the real name.
_SYNONYMS = {
    "integer": "int", "float": "number", "str": "text", "string": "text", "choice": "pick", "choose": "pick",
    "guard": "halt", "dict": "record", "list": "json", "object": "json", "quote": "extract", "timedelta": "duration",
}  # fmt: skip
_TYPES: dict[str, SlotType] = {**{name: name for name in SLOT_TYPES}, **ALIASES}


def resolve_type(written: str) -> SlotType | None:
    """The slot type `written` names (aliases resolved), or `None` if it names none."""
    return _TYPES.get(written)


def is_class_name(written: str) -> bool:
    """A type written like a class (`Person`) names a notebook class, looked up when the run starts."""
    return written[:1].isupper()


def suggest(word: str, known: Iterable[str], *, synonyms: dict[str, str] | None = None) -> str:
    """`"; did you mean 'x'?"` for the closest of `known`, or `""`."""
    if synonyms and word.lower() in synonyms:
        return f"; did you mean '{synonyms[word.lower()]}'?"
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def unknown_type_message(written: str) -> str:
    if written in BUILTIN_ACTIONS:
        return f"'{written}' is an action, not a type: write [[@{written}:name|…]]"
    hint = suggest(written, KNOWN_TYPES, synonyms=_SYNONYMS)
    return (
        f"unknown slot type '{written}'{hint} (known types: {', '.join(KNOWN_TYPES)}; "
        "a notebook class is named with a capital, e.g. [[Person:p]])"
    )
