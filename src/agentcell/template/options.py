"""Slot types and options: which exist, what each option's value must be, and how values are checked.

One checker serves both times a value is known: the compiler checks a literal (`max_iter=3`) when
the cell compiles, the renderer checks a `{{ expr }}` value when its slot is reached.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import get_args

from .nodes import Const
from .program import SLOT_TYPES, SlotType

TYPE_ALIASES: dict[str, SlotType] = {"respond": "text"}
KNOWN_TYPES: tuple[str, ...] = ("text", "respond", "json", "bool", "int", "number", "pick", "halt")
# Words people reach for; only used to suggest the real name.
_TYPE_SYNONYMS = {
    "boolean": "bool", "integer": "int", "float": "number", "str": "text", "string": "text",
    "choice": "pick", "choose": "pick", "guard": "halt", "dict": "json", "list": "json", "object": "json",
}  # fmt: skip

OPTION_KEYS: tuple[str, ...] = (
    "use_tools", "max_iter", "max_calls", "tools", "model", "temperature", "max_tokens", "thinking",
    "when", "required", "retries",
)  # fmt: skip
FLAGS = frozenset({"use_tools", "required", "thinking"})
"""Options that may be written bare (`[[x|use_tools]]`), meaning `=true`."""
THINKING_LEVELS = ("minimal", "low", "medium", "high", "xhigh", "max")

# Slot names `{{ }}` could not read back: Jinja takes them as literals or operators.
RESERVED_NAMES = frozenset(
    {"and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None"}
)
# How each option is written, for "needs a value" errors.
EXAMPLES = {
    "max_iter": "max_iter=3", "max_calls": "max_calls=5", "tools": "tools=search+fetch",
    "model": "model=openai:gpt-4o-mini", "temperature": "temperature=0.2", "max_tokens": "max_tokens=500",
    "when": "when=false", "retries": "retries=2",
}  # fmt: skip

_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
assert set(SLOT_TYPES) == set(get_args(SlotType))
_TYPES: dict[str, SlotType] = {**{known: known for known in SLOT_TYPES}, **TYPE_ALIASES}


class OptionValueError(ValueError):
    """A value that does not suit its option; the message reads well after a location."""


def resolve_type(written: str) -> SlotType | None:
    """The slot type `written` names (aliases resolved), or `None` if it names none."""
    return _TYPES.get(written)


def suggest(word: str, known: Iterable[str], *, synonyms: dict[str, str] | None = None) -> str:
    """`"; did you mean 'x'?"` for the closest of `known`, or `""`."""
    if synonyms and word.lower() in synonyms:
        return f"; did you mean '{synonyms[word.lower()]}'?"
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def unknown_type_message(written: str) -> str:
    hint = suggest(written, KNOWN_TYPES, synonyms=_TYPE_SYNONYMS)
    return f"unknown slot type '{written}'{hint} (known types: {', '.join(KNOWN_TYPES)})"


def unknown_option_message(written: str) -> str:
    hint = suggest(written, OPTION_KEYS)
    return f"unknown option '{written}'{hint} (known options: {', '.join(OPTION_KEYS)})"


def literal(value: Const) -> object:
    """The Python value a literal stands for: quoted → str; true/false → bool; numbers; else str."""
    if value.quoted:
        return value.text
    lowered = value.text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT.fullmatch(value.text):
        return int(value.text)
    if _FLOAT.fullmatch(value.text):
        return float(value.text)
    return value.text


def check(key: str, value: object) -> object:
    """`value` as option `key` holds it; raise `OptionValueError` if it does not fit."""
    return _CHECKERS[key](key, value)


def check_choices(value: object) -> tuple[str, ...]:
    """The `pick` choices a positional value gives: a word, a number, or a list of them."""
    items = value if isinstance(value, list | tuple) else [value]
    choices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise OptionValueError(f"a pick choice must be a word, string or number, got {item!r}")
        choices.append(str(item))
    return tuple(choices)


def _boolean(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise OptionValueError(f"option '{key}' expects true or false, got {value!r}")
    return value


def _whole(minimum: int) -> Callable[[str, object], int]:
    def checker(key: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise OptionValueError(f"option '{key}' expects a whole number of at least {minimum}, got {value!r}")
        return value

    return checker


def _temperature(key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
        raise OptionValueError(f"option '{key}' expects a number from 0 to 2, got {value!r}")
    return float(value)


def _model(key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OptionValueError(f"option '{key}' expects a model name such as openai:gpt-4o-mini, got {value!r}")
    return value.strip()


def _tools(key: str, value: object) -> tuple[str, ...]:
    names = value.split("+") if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names:
        raise OptionValueError(f"option '{key}' expects tool names joined by '+' (tools=search+fetch), got {value!r}")
    cleaned = tuple(name.strip() if isinstance(name, str) else name for name in names)
    for name in cleaned:
        if not isinstance(name, str) or not name.isidentifier():
            raise OptionValueError(
                f"option '{key}' expects tool names joined by '+' (tools=search+fetch), got {value!r}"
            )
    return tuple(dict.fromkeys(cleaned))


def _thinking(key: str, value: object) -> bool | str:
    if isinstance(value, bool) or (isinstance(value, str) and value in THINKING_LEVELS):
        return value
    levels = ", ".join(THINKING_LEVELS)
    raise OptionValueError(f"option '{key}' expects true, false or one of {levels}, got {value!r}")


_CHECKERS: dict[str, Callable[[str, object], object]] = {
    "use_tools": _boolean,
    "max_iter": _whole(1),
    "max_calls": _whole(0),
    "tools": _tools,
    "model": _model,
    "temperature": _temperature,
    "max_tokens": _whole(1),
    "thinking": _thinking,
    "when": _boolean,
    "required": _boolean,
    "retries": _whole(0),
}
assert tuple(_CHECKERS) == OPTION_KEYS
