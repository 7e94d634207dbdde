"""What the model reads about each slot type: the field description of its answer.

struckdown's descriptions are the real guidance a model gets (its docstrings often were not used);
these say the same things in our words (each kind's `guidance`, `template/kinds.py`), with the slot's
levels, bounds and lengths spelled out, for every variant, lists included.
"""

from __future__ import annotations

from ..template.kinds import KINDS
from ..template.program import Quantifier, SlotOptions, SlotSpec


def describe(spec: SlotSpec, options: SlotOptions) -> str:
    """The guidance for one answer of `spec`'s type, with its bounds and choices spelled out."""
    kind = KINDS[spec.type]
    parts = [kind.guidance or "The answer."]
    if kind.positional == "levels":
        levels = "; ".join(f"{index} = {level}" for index, level in enumerate(options.choices))
        parts.append(f"Levels: {levels}.")
    if kind.temporal:
        parts.append("Resolve relative phrases against the current date and time given in the instructions.")
    bounds = [f"{word} {getattr(options, key)}" for key, word in _BOUNDS if getattr(options, key) is not None]
    if bounds:
        parts.append("It must be " + ", ".join(bounds) + ".")
    if options.pattern is not None:
        parts.append(f"It must match the regular expression {options.pattern!r}.")
    if options.min_length is not None or options.max_length is not None:
        parts.append(f"Length: {options.min_length or 0} to {options.max_length or 'any number of'} characters.")
    return " ".join(parts)


_BOUNDS = (("ge", "at least"), ("gt", "more than"), ("le", "at most"), ("lt", "less than"))


def count_phrase(quantifier: Quantifier) -> str:
    """How many items a list slot wants, in words ("exactly 3", "between 2 and 5", …)."""
    least, most = quantifier
    if most is None:
        return "A list of any number of items, each:" if least == 0 else f"A list of at least {least} items, each:"
    if least == most:
        return f"A list of exactly {least} items, each:"
    if least == 0:
        return f"A list of up to {most} items, each:"
    return f"A list of between {least} and {most} items, each:"
