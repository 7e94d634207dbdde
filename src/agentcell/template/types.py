"""The slot types as the compiler checks them: their names, aliases, and the options each takes.

Every fact comes from the kinds (`kinds.py`, one record per type): which constraint options fit a type,
what its values without a key mean (pick choices, score levels), whether it may be a list. The compiler
checks every slot against them, so an option on a type it does not fit is an error at the option's
column instead of being ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..actions import BUILTIN_ACTIONS
from .kinds import CONSTRAINTS, KINDS, NUMERIC, STRING, SlotKind, SlotType

__all__ = ["ALIASES", "CONSTRAINTS", "KNOWN_TYPES", "NUMERIC", "STRING", "TYPES", "is_class_name", "resolve_type",
           "suggest", "unknown_type_message"]  # fmt: skip

TYPES: dict[SlotType, SlotKind] = KINDS
"""Every type's record (the compiler's name for `kinds.KINDS`)."""

ALIASES: dict[str, SlotType] = {alias: kind.name for kind in KINDS.values() for alias in kind.aliases}
KNOWN_TYPES: tuple[str, ...] = tuple(name for kind in KINDS.values() if kind.written
                                     for name in (kind.name, *kind.aliases))  # fmt: skip
"""Every type name a slot may use, each beside its aliases, as error messages list them."""

# Words people reach for; only used to suggest the real name.
_SYNONYMS: dict[str, str] = {word: kind.name for kind in KINDS.values() for word in kind.synonyms}
_TYPES: dict[str, SlotType] = {**{kind.name: kind.name for kind in KINDS.values() if kind.written}, **ALIASES}


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
