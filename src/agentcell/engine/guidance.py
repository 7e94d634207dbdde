"""What the model reads about each slot type: the field description of its answer.

struckdown's descriptions are the real guidance a model gets (its docstrings often were not used);
these say the same things in our words, for every variant, lists included.
"""

from __future__ import annotations

from ..template.program import Quantifier, SlotOptions, SlotSpec

_GUIDANCE = {
    "text": "A concise, sensible reply to the conversation.",
    "extract": "Text copied verbatim from what you were given: never paraphrase, summarise or add anything.",
    "think": "Terse step-by-step notes and plans for yourself, not the reply itself.",
    "speak": "Just the next words spoken, with no speaker label and no quotation marks.",
    "poem": "A short poem (often a haiku) continuing the conversation.",
    "json": "Any JSON value.",
    "record": "A JSON object with string keys.",
    "bool": "true or false.",
    "int": "A whole number.",
    "number": "A number.",
    "pick": "One of the allowed choices, exactly as written.",
    "decide": "The decision.",
    "score": "The number of the level that fits best.",
    "date": "A date as YYYY-MM-DD.",
    "datetime": "A date and time in ISO 8601 with its UTC offset, e.g. 2026-03-02T15:00:00+00:00.",
    "time": "A time as HH:MM:SS.",
    "duration": "A duration in ISO 8601, e.g. PT2H30M (or a number of seconds).",
    "date_rule": "A recurrence rule.",
    "class": "An object of the requested shape.",
}


def describe(spec: SlotSpec, options: SlotOptions) -> str:
    """The guidance for one answer of `spec`'s type, with its bounds and choices spelled out."""
    parts = [_GUIDANCE.get(spec.type, "The answer.")]
    if spec.type == "score":
        levels = "; ".join(f"{index} = {level}" for index, level in enumerate(options.choices))
        parts.append(f"Levels: {levels}.")
    if spec.type in ("date", "datetime", "time", "duration", "date_rule"):
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
