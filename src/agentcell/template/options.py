"""Slot types and options: which exist, what each option's value must be, and how values are checked.

One checker serves both times a value is known: the compiler checks a literal (`max_iter=3`) when
the cell compiles, the renderer checks a `{{ expr }}` value when its slot is reached.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..usage import OUTPUT_MODES, OutputMode
from .nodes import Const
from .types import suggest

OPTION_KEYS: tuple[str, ...] = (
    "use_tools", "max_iter", "max_calls", "tools", "model", "temperature", "max_tokens", "thinking",
    "when", "required", "retries", "output_mode",
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
    "when": "when=false", "retries": "retries=2", "output_mode": "output_mode=prompted",
}  # fmt: skip

_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")

EXTRA_KEYS: tuple[str, ...] = (
    "min", "max", "ge", "le", "gt", "lt", "min_length", "max_length", "minlength", "maxlength",
    "pattern", "regex", "seed", "mode", "block",
)  # fmt: skip
"""struckdown's constraint and model keys, on top of `OPTION_KEYS`."""
KEY_ALIASES = {"min": "ge", "max": "le", "minlength": "min_length", "maxlength": "max_length", "regex": "pattern"}
BARE = FLAGS | {"block"}
"""Options that may be written without a value."""
EXTRA_EXAMPLES = {
    "min": "min=1", "max": "max=10", "pattern": 'pattern="[A-Z]+"', "seed": "seed=42", "mode": "mode=decision",
}  # fmt: skip


def canonical(key: str) -> str:
    """The option a key names (`min` is `ge`, `regex` is `pattern`, …)."""
    return KEY_ALIASES.get(key, key)


def is_key(key: str) -> bool:
    return key in OPTION_KEYS or key in EXTRA_KEYS


class OptionValueError(ValueError):
    """A value that does not suit its option; the message reads well after a location."""


def unknown_option_message(written: str) -> str:
    hint = suggest(written, [*OPTION_KEYS, *EXTRA_KEYS])
    return f"unknown option '{written}'{hint} (known options: {', '.join([*OPTION_KEYS, *EXTRA_KEYS])})"


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
    if value == "off":  # struckdown's word for "no thinking"
        return False
    if isinstance(value, bool) or (isinstance(value, str) and value in THINKING_LEVELS):
        return value
    levels = ", ".join(THINKING_LEVELS)
    raise OptionValueError(f"option '{key}' expects true, false, off or one of {levels}, got {value!r}")


def _output_mode(key: str, value: object) -> OutputMode:
    for mode in OUTPUT_MODES:
        if value == mode:
            return mode
    raise OptionValueError(f"option '{key}' expects one of {', '.join(OUTPUT_MODES)}, got {value!r}")


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
    "output_mode": _output_mode,
}
assert tuple(_CHECKERS) == OPTION_KEYS


def _text(key: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise OptionValueError(f"option '{key}' expects text, got {value!r}")
    return value


def _pattern(key: str, value: object) -> str:
    text = _text(key, value)
    try:
        re.compile(text)
    except re.error as exc:
        raise OptionValueError(f"option '{key}' is not a valid regular expression ({exc}): {text!r}") from None
    return text


def _mode(key: str, value: object) -> str:
    if value != "decision":
        raise OptionValueError(f"option '{key}' accepts only mode=decision, got {value!r}")
    return value


def _bound(key: str, value: object) -> float | str:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise OptionValueError(f"option '{key}' expects a number (or an ISO date/time), got {value!r}")
    return value


_CHECKERS.update(
    {
        "ge": _bound,
        "le": _bound,
        "gt": _bound,
        "lt": _bound,
        "min_length": _whole(0),
        "max_length": _whole(0),
        "pattern": _pattern,
        "seed": _whole(0),
        "mode": _mode,
        "block": _boolean,
    }
)
