"""The shapes a transcript is made of: slots and rounds (items: `items.py`), usage, JS-compatible coercions.

The reducer (`state.py`, `handlers.py`) is a port of `js/src/state/`; these helpers make Python read odd
wire values the way JavaScript does (`num`, `truthy`, `js_str`), so both reducers give the same transcript
for the same events — the golden fixtures under `tests/fixtures/transcripts/` pin that.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..usage import SlotStatus, Usage
from .items import Item, ToolItem
from .pieces import Pieces

TEXT_TYPES = frozenset(json.loads(resources.files("agentcell").joinpath("slot_kinds.json").read_text("utf-8"))
                       ["shown_as_text"])  # fmt: skip
"""Slot types whose answer is free text, shown as Markdown: the slot kinds that stream text, their aliases,
and `""` (no type said: the default). Read from `slot_kinds.json`, which `template/kinds.py` writes and the JS
reducer reads too; a list slot's type carries its quantifier (`think*`), so its value is shown as JSON."""
MAX_UNKNOWN = 200


@dataclass(slots=True)
class Round:
    """One model request of a slot and what happened around it."""

    round: int
    items: list[Item] = field(default_factory=list)


@dataclass(slots=True)
class Slot:
    """A template slot as the transcript knows it so far."""

    name: str
    type: str = "text"
    required: bool = False
    use_tools: bool = False
    index: int | None = None
    limits: dict[str, Any] | None = None
    """This slot's effective ceiling (`slot_started.limits`), for the meters."""
    status: SlotStatus = "pending"
    rounds: dict[int, Round] = field(default_factory=dict)
    """Round number → round, in the order first seen (JSON sorts them)."""
    current_round: int = 1
    streamed: dict[int, Pieces] = field(default_factory=dict)
    """Round → the answer text streamed in that round and not retracted."""
    answer_stopped: bool = False
    final_text: str | None = None
    value: Any = None
    has_value: bool = False
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    saw_tokens: bool = False
    kept: bool = False
    """The value comes from an earlier segment of a resumed run."""
    round_base: int = 0
    """A resumed slot numbers its rounds from 1 again; they are shown after the earlier ones."""
    tools: dict[str, ToolItem] = field(default_factory=dict)
    """Call id → the slot's tool item with that (string) id: finding a call is O(1), not a walk of every round."""

    def answer(self) -> str:
        """The text this slot shows as its answer: a text slot's final text, else its streamed rounds."""
        if self.final_text is not None and is_text_type(self.type):
            return self.final_text
        return "".join(str(self.streamed[r]) for r in sorted(self.streamed))

    def clear_answer(self) -> None:
        self.streamed.clear()
        self.final_text = None
        self.value = None
        self.has_value = False
        self.saw_tokens = False
        self.answer_stopped = False
        self.error = None


def is_text_type(type_: Any) -> bool:
    return js_str(type_ if type_ is not None else "").lower() in TEXT_TYPES


def is_num(x: Any) -> bool:
    """A finite JSON number (JavaScript's `typeof x === "number" && Number.isFinite(x)`)."""
    cls = type(x)  # exact types first: this runs for every number of every event
    if cls is int:
        return True
    if cls is float:
        return math.isfinite(x)
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def num(x: Any, default: Any = 0) -> Any:
    return x if is_num(x) else default


def truthy(x: Any) -> bool:
    """JavaScript truthiness (`!!x`): empty lists and objects are true there."""
    if x is None or x is False or x == "" or (is_num(x) and x == 0):
        return False
    return not (isinstance(x, float) and math.isnan(x))


def js_str(x: Any) -> str:
    """`String(x)` for the values the wire carries."""
    if isinstance(x, str):
        return x
    if x is True or x is False:
        return "true" if x else "false"
    if x is None:
        return "null"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def json_text(x: Any) -> str:
    """`JSON.stringify(x)` for a summary that is not a string ("" for null)."""
    if x is None:
        return ""
    try:
        return json.dumps(x, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return js_str(x)


def norm_usage(u: Any) -> Usage:
    """A wire event's usage as `Usage` (odd or missing numbers are 0, an odd cost `None`, as in JS)."""
    if not isinstance(u, dict):
        return Usage()
    cost = u.get("cost")
    return Usage(requests=num(u.get("requests")), tool_calls=num(u.get("tool_calls")),
                 input_tokens=num(u.get("input_tokens")), output_tokens=num(u.get("output_tokens")),
                 cost=cost if is_num(cost) else None, estimated=u.get("estimated") is True)


def usage_delta(before: Usage, after: Usage) -> Usage:
    """What was spent between two run totals (never negative); cost `None` when `after` has none; estimated when
    `after` holds an estimate."""
    cost = None if after.cost is None else max(0, after.cost - (before.cost or 0))
    return Usage(requests=max(0, after.requests - before.requests),
                 tool_calls=max(0, after.tool_calls - before.tool_calls),
                 input_tokens=max(0, after.input_tokens - before.input_tokens),
                 output_tokens=max(0, after.output_tokens - before.output_tokens), cost=cost,
                 estimated=after.estimated)


def usage_json(u: Usage) -> dict[str, Any]:
    """`Usage` as the canonical JSON's USAGE object (`estimated: true` only when some tokens were counted here)."""
    out = {"requests": u.requests, "tool_calls": u.tool_calls, "input_tokens": u.input_tokens,
           "output_tokens": u.output_tokens, "cost": u.cost}
    if u.estimated:  # only then: a provider that reports usage keeps the canonical JSON it always had
        out["estimated"] = True
    return out
