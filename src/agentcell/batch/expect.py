"""The default check of a slot against its expected column: a type-aware equality.

A model that answers `" Paris\n"` where the gold label says `"paris"` is right; `3.0000001` for `3` is
right; a `pick` slot's choice is right only when it is the same choice, exactly as written (its
choices are the labels). Everything else compares as the values themselves, with numbers compared
within `REL_TOL` / `ABS_TOL` wherever they sit (in a list, in a record).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

REL_TOL = 1e-6
"""Two numbers are equal when they differ by at most this fraction of the larger one..."""
ABS_TOL = 1e-9
"""...or by at most this much (near zero)."""
EXACT_KINDS = frozenset({"pick", "decide"})
"""Slot types whose answer is a label to match exactly (one of the template's choices)."""
_SPACE = re.compile(r"\s+")


def missing(expected: Any) -> bool:
    """Whether an expected cell holds no label (`None`, a pandas NaN / NA): that row's slot is not scored."""
    if expected is None:
        return True
    if isinstance(expected, float) and math.isnan(expected):
        return True
    try:
        import pandas as pd
    except ImportError:
        return False
    try:
        verdict: object = False if isinstance(expected, list | tuple | dict) else pd.isna(expected)
        return bool(verdict)
    except (TypeError, ValueError):
        return False


def same(output: Any, expected: Any, slot_type: str | None = None) -> bool:
    """Whether `output` answers `expected` (see the module docstring for what counts as the same)."""
    if slot_type in EXACT_KINDS:
        return bool(_label(output) == _label(expected))
    return _same(output, expected)


def _label(value: Any) -> Any:
    return str(value) if value is not None and not isinstance(value, list | tuple | dict) else value


def _same(output: Any, expected: Any) -> bool:
    if isinstance(output, bool) or isinstance(expected, bool):
        return _truth(output) == _truth(expected) and _truth(output) is not None
    number_out, number_exp = _number(output), _number(expected)
    if number_out is not None and number_exp is not None and (_is_number(output) or _is_number(expected)):
        return math.isclose(number_out, number_exp, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if isinstance(output, str) and isinstance(expected, str):
        return _text(output) == _text(expected)
    if isinstance(output, Mapping) and isinstance(expected, Mapping):
        return set(output) == set(expected) and all(_same(output[k], expected[k]) for k in output)
    if isinstance(output, list | tuple) and isinstance(expected, list | tuple):
        return len(output) == len(expected) and all(_same(a, b) for a, b in zip(output, expected, strict=True))
    try:
        return bool(output == expected)
    except Exception:  # a user's type whose `==` raises (a NumPy array's truth): not the same
        return False


def _text(value: str) -> str:
    return _SPACE.sub(" ", value).strip().casefold()


def _is_number(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or type(value).__module__ == "numpy"


def _number(value: Any) -> float | None:
    """`value` as a float when it is a number, or text that reads as one (`" 42 "`, `"3.50"`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if _is_number(value) else None


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = _text(value)
        return True if text in ("true", "yes", "1") else False if text in ("false", "no", "0") else None
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    return None
