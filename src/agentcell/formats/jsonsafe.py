"""Plain values as JSON that is safe to send and save: valid UTF-8, and checked in C where it can be.

A prompt, a tool result or a streamed token may hold a lone surrogate (text that is not encodable as
UTF-8); the comm's JSON, the journal and the saved notebook must be valid UTF-8, or the whole message
(and the view) is lost. `scrub` replaces such code points; `check_json` tells whether a value needs it.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json, to_jsonable_python

from .long_strings import LONG, hollow, hollow_top


def jsonable(value: Any) -> Any:
    """Anything as JSON-compatible data (dataclasses, pydantic models, sets…), `repr` as the fallback."""
    return to_jsonable_python(value, fallback=repr)


def scrub_text(text: str) -> tuple[str, int]:
    """`text` with lone surrogates (`"\\ud83d"`: not encodable as UTF-8) replaced by U+FFFD, and how many.

    A valid surrogate *pair* written as two code points is joined into its character on the way.
    """
    if text.isascii():
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        clean = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return clean, clean.count("\ufffd") - text.count("\ufffd")
    return text, 0


def scrub(value: Any, *, long_free: bool = False) -> tuple[Any, int]:
    """JSON-shaped data (str, dict, list, tuple) with every string `scrub_text`-ed, and the count.

    Containers are rebuilt only when something in them changed. `long_free`: the caller knows `value`
    holds no long string, so it is checked whole in C (else walked for them: `long_strings.hollow`).
    """
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict | list | tuple) and _valid_utf8(value, deep=not long_free):
        return value, 0  # the common case, checked in C: no walk in Python over every string
    if isinstance(value, dict):
        total, out = 0, {}
        for key, item in value.items():
            clean_key, a = scrub(key) if isinstance(key, str) else (key, 0)
            clean_item, b = scrub(item)
            out[clean_key] = clean_item
            total += a + b
        return (out, total) if total else (value, 0)
    if isinstance(value, list | tuple):
        pairs = [scrub(item) for item in value]
        total = sum(n for _, n in pairs)
        if not total:
            return value, 0
        items = [item for item, _ in pairs]
        return (items if isinstance(value, list) else tuple(items)), total
    return value, 0


def _valid_utf8(value: Any, *, deep: bool = False) -> bool:
    """Whether `value` serializes as UTF-8 JSON as it is (no lone surrogates anywhere); `False` when unsure.

    Checked in C by serializing it, except its long strings: each is searched for a surrogate where it
    is. Serialized, the run's end (a long answer in the event, twice in the exported transcript) cost a
    copy of the answer per place it appears, at the run's peak of memory. `deep` walks everything in
    Python for long strings (the exported transcript, once per run); an event is checked by `check_json`.
    """
    if not deep:
        return check_json(value)[0]
    try:
        to_json(hollow(value))
    except Exception:  # a lone surrogate, or a value only the walk in `scrub` can judge
        return False
    return True


def check_json(fields: Any) -> tuple[bool, bool]:
    """Whether an event's `fields` are valid UTF-8 JSON, and whether they hold no string of `LONG` or more."""
    valid, long_free, _ = check_json_dump(fields)
    return valid, long_free


def check_json_dump(fields: Any) -> tuple[bool, bool, bytes | None]:
    """`check_json`, and the JSON it made to check them when that is all of them (`None` when they hold a long
    string, or are not valid): the journal writes those bytes as the event's row instead of dumping it again.

    An event's long strings are its own top-level fields (an answer, a merged stream piece; tool
    results and teaching texts are clipped), so only those are searched in place (`hollow_top`: a walk
    in Python of every value of every event cost more than the rest of its check); anything nested is
    serialized, and a serialization shorter than `LONG` bytes cannot hold a string of `LONG` characters.
    """
    try:
        top = hollow_top(fields)
        dumped = to_json(top)
    except Exception:  # a lone surrogate, or a value only the walk in `scrub` can judge
        return False, False, None
    long_free = top is fields and len(dumped) < LONG
    return True, long_free, dumped if long_free else None
