"""Tool results as the model and every view get them: JSON-safe, bounded, valid UTF-8.

A tool may return anything. This is what becomes of it, inside the call (so the call is shown done
only once its result can be sent, saved and shown):

* `str`, `bool`, `int`, `None`: as they are; a `float` too, except NaN and ±infinity, which become
  the strings `"nan"`, `"inf"`, `"-inf"` (JSON has no such numbers).
* `dict`, `list`, `tuple`, `set`, `frozenset`, `range` and other sequences: element by element (keys
  become strings, sets are sorted when their elements allow), at most `ITEMS` elements each (then a
  `"… N more"` marker), at most `DEPTH` levels deep (deeper: the `repr`); a container that contains
  itself shows `"<cycle>"` there.
* `bytes`: its text when it is valid UTF-8, else its `repr`.
* pandas: a `DataFrame` as a list of row records, a `Series` as `{index: value}` (first `ITEMS` rows);
  numpy: an array as nested lists, a scalar as the Python number.
* dataclasses, pydantic models, dates, UUIDs, decimals, enums, paths: pydantic's JSON form.
* anything else: its `repr` (at most `REPR_CHARS` characters).

The result's text (the JSON, or the string itself) longer than `RESULT_CHARS` is clipped, and the
model reads a note saying how much was left out. Lone surrogates (`"\\ud83d"`, not valid UTF-8) are
replaced with U+FFFD and counted, so the run can say so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Mapping, Sequence, Set
from itertools import islice
from typing import Any

from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from ..formats.jsonsafe import scrub_text

RESULT_CHARS = 100_000
"""Longest result text the model (and the widget, the journal, the saved notebook) gets."""
ITEMS = 2_000
"""Most elements kept per container (rows of a DataFrame, elements of a list, keys of a dict)."""
DEPTH = 64
"""Deepest nesting kept; deeper values show as their `repr`."""
REPR_CHARS = 2_000
"""Longest `repr` kept for a value with no JSON form."""
CLIP_NOTE = (
    "\n\n[agentcell: this result was {total:,} characters; only the first {kept:,} are shown. "
    "If you need the rest, ask the tool for less at a time (a filter, a smaller page).]"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Converted:
    """A tool's return value made safe to send."""

    value: Any
    """What the model gets: the JSON-safe value, or the clipped text when it was too long."""
    text: str
    """The result as text (what the widget shows)."""
    replaced: int = 0
    """How many lone surrogates were replaced."""
    clipped: bool = False


def convert_result(value: Any) -> Converted:
    """`value` as the conversion above describes it."""
    walk = _Walk()
    try:
        plain = walk.plain(value, 0)
    except Exception:  # a container whose own methods fail (a broken __len__, __iter__): its repr, then
        plain = walk.text(_repr(value))
    text = plain if isinstance(plain, str) else to_json(plain).decode()
    if len(text) <= RESULT_CHARS:
        return Converted(value=plain, text=text, replaced=walk.replaced)
    text = text[:RESULT_CHARS] + CLIP_NOTE.format(total=len(text), kept=RESULT_CHARS)
    return Converted(value=text, text=text, replaced=walk.replaced, clipped=True)


def _repr(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to show>"
    except Exception as exc:  # a broken __repr__ still leaves the model something to read
        return f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    if len(text) > REPR_CHARS:
        text = f"{text[:REPR_CHARS]}… [{len(text) - REPR_CHARS:,} more characters]"
    return text


def _length(value: Any) -> int | None:
    try:
        return len(value)
    except (TypeError, OverflowError):  # range(10**20) has no len()
        return None


def _more(total: int | None) -> str:
    return "… more" if total is None else f"… {total - ITEMS:,} more"


class _Walk:
    """One conversion: the containers on the current path (for cycles) and the surrogates replaced."""

    def __init__(self) -> None:
        self.path: set[int] = set()
        self.replaced = 0

    def text(self, value: str) -> str:
        clean, count = scrub_text(value)
        self.replaced += count
        return clean

    def plain(self, value: Any, depth: int) -> Any:
        if value is None or type(value) in (bool, int):
            return value
        if isinstance(value, int):  # bool and int subclasses (IntEnum…): the plain number
            return bool(value) if isinstance(value, bool) else int(value)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else str(value)
        if isinstance(value, str):
            return self.text(str(value))
        if isinstance(value, bytes | bytearray | memoryview):
            try:
                return self.text(bytes(value).decode("utf-8"))
            except UnicodeDecodeError:
                return _repr(bytes(value[: REPR_CHARS]))
        if depth >= DEPTH:
            return self.text(_repr(value))
        if id(value) in self.path:
            return "<cycle>"
        self.path.add(id(value))
        try:
            return self._container(value, depth)
        finally:
            self.path.discard(id(value))

    def _container(self, value: Any, depth: int) -> Any:
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, Set):
            items = list(islice(value, ITEMS))
            with contextlib.suppress(TypeError):
                items.sort()
            return self._items(items, _length(value), depth)
        if isinstance(value, Sequence):
            return self._items(islice(value, ITEMS), _length(value), depth)
        foreign = self._foreign(value, depth)
        if foreign is not _NONE:
            return foreign
        return self.text(_repr(value))

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in islice(value.items(), ITEMS):
            name = key if isinstance(key, str) else str(key) if isinstance(key, int | float | bool) else _repr(key)
            out[self.text(name)] = self.plain(item, depth + 1)
        if len(value) > ITEMS:
            out["…"] = f"{len(value) - ITEMS:,} more"
        return out

    def _items(self, items: Any, total: int | None, depth: int) -> list[Any]:
        out = [self.plain(item, depth + 1) for item in items]
        if total is None or total > ITEMS:
            out.append(_more(total))
        return out

    def _foreign(self, value: Any, depth: int) -> Any:
        """pandas, numpy and pydantic's JSON types; `_NONE` when `value` is none of them."""
        family = type(value).__module__.partition(".")[0]
        if family == "pandas" and hasattr(value, "to_dict") and hasattr(value, "head"):
            head = value.head(ITEMS)
            rows = head.to_dict(orient="records") if hasattr(value, "columns") else head.to_dict()
            out = self.plain(rows, depth)
            if len(value) > ITEMS and isinstance(out, list):
                out.append(_more(len(value)))
            return out
        if family == "numpy" and hasattr(value, "tolist"):
            shape = tuple(getattr(value, "shape", ()))
            if not shape or max(shape) <= ITEMS:
                return self.plain(value.tolist(), depth)
            cut = self.plain(value[tuple(slice(0, ITEMS) for _ in shape)].tolist(), depth)
            return [*cut, f"… an array of shape {shape}, cut to {ITEMS:,} per axis"]
        try:
            jsonable = to_jsonable_python(value)
        except (PydanticSerializationError, ValueError, TypeError, RecursionError):
            return _NONE
        return _NONE if jsonable is value else self.plain(jsonable, depth + 1)


_NONE = object()
"""`_foreign`'s "not one of mine"."""
