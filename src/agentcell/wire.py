"""Events as JSON for the browser, and the log a late view replays.

The widget never re-sends a growing trait: each event becomes one small JSON object, batched into a
custom message. `EventLog` keeps every event of the run with consecutive text deltas of the same
slot and round merged, so a view that opens later (page reload, a second view) gets the whole run
as one snapshot whose size grows linearly with the text.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic_core import to_json, to_jsonable_python

from .events import Event, ProcessingComplete, Usage
from .long_strings import LONG, hollow, hollow_top, result_long_free
from .text_pieces import CHUNK, worth_joining

if TYPE_CHECKING:
    from .result import RunResult

WireEvent = dict[str, Any]
"""An event as sent to the browser: the dataclass fields, `kind`, and `t` (seconds since start)."""


class FrontendMsg(TypedDict, total=False):
    """What `widget.js` sends with `model.send(...)`."""

    kind: str
    call_id: str
    approved: bool
    reason: str | None


def to_wire(event: Event, *, t: float, converted: Converted | None = None) -> WireEvent:
    """Serialize one event; values the browser cannot take become their `repr`.

    A fresh top-level dict per call (the caller may add to it); the converted fields are shared with
    the other readers of the same event (`wire_fields`; a reader that kept them passes `converted`).
    """
    fields, valid, _ = converted if converted is not None else wire_fields(event)
    out: WireEvent = {**fields, "t": round(t, 3)}
    if valid:
        return out
    clean, _ = scrub(out)  # the comm's JSON must be valid UTF-8, or the whole message (and the view) is lost
    return clean  # type: ignore[no-any-return]


Converted = tuple[WireEvent, bool, bool]
"""An event's wire fields, whether they are valid UTF-8, and whether no string in them is `LONG` or longer."""

_last: tuple[Event | None, Converted] = (None, ({}, True, True))
"""The event converted last and its conversion (see `wire_fields`)."""


def wire_fields(event: Event) -> Converted:
    """`event`'s wire fields (no `t`, not scrubbed), whether they serialize as valid UTF-8 as they are, and
    whether they hold no long string (`event_long_free`).

    One event is read by several views as it is emitted (the run's sink checks its text, the widget
    sends it, the journal writes it, the event log keeps it for the transcript), synchronously one
    after the other: the conversion of the event seen last is remembered (by identity; events are
    frozen) so each event is converted and checked once, not once per reader. Treat it as read-only.
    """
    global _last
    last, converted = _last
    if last is event:
        return converted
    if isinstance(event, ProcessingComplete):  # once per run, and not remembered: it holds the whole result
        fields = {
            "kind": event.kind,
            "run_id": event.run_id,
            "slot": event.slot,
            "status": event.status,
            "early_termination": event.early_termination,
            "answer": jsonable(event.result.answer),
            "usage": usage_json(event.result.usage),
        }
        return fields, _check(fields)[0], False  # its journal row holds the result, not these fields
    fields = jsonable(event)  # one call in C: the dataclass's fields in order, `repr` for the odd value
    value = fields.get("value")
    if fields["kind"] == "slot_completed" and isinstance(value, str) and fields.get("text") == value:
        del fields["text"]  # a text answer: `value` is the text; don't send it twice
    converted = (fields, *_check(fields))
    _last = (event, converted)
    return converted


def event_long_free(event: Event) -> bool:
    """Whether no string of `event` is `LONG` characters or longer (so its JSON can be made whole, in C).

    Known from the UTF-8 check's serialization of the event's wire fields, which every event gets as it
    is emitted: no extra walk. `False` when unsure (text that is not valid UTF-8; the run's ending).
    """
    return wire_fields(event)[2]


def needs_scrub(event: Event) -> bool:
    """Whether some text of `event` is not valid UTF-8 (lone surrogates), so `scrub_event` has work to do.

    Every string `scrub_event` would look at appears unchanged in the event's wire fields, so a wire
    that serializes cleanly means nothing to scrub; the check is the conversion the views need anyway.
    """
    return not wire_fields(event)[1]


def transcript_json(result: RunResult) -> dict[str, Any]:
    """The exact transcript for the widget's export: OpenAI messages and pydantic-ai messages.

    `pydantic_ai` loads back with `ModelMessagesTypeAdapter.validate_python(...)`; `openai` is
    `RunResult.to_openai()`. A conversion that fails leaves `None` (and the reason) rather than
    losing the end of the run.
    """
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    out: dict[str, Any] = {"openai": None, "pydantic_ai": None}
    try:
        out["pydantic_ai"] = ModelMessagesTypeAdapter.dump_python(list(result.messages), mode="json")
        out["openai"] = result.to_openai()
    except Exception as exc:  # a converter bug must not cost the run its final event
        out["error"] = f"{type(exc).__name__}: {exc}"
    # A prompt may carry lone surrogates; the saved notebook must be valid UTF-8. Without a long string in
    # the messages the check serializes the whole in C; with one it walks them (not copying the answer).
    clean, _ = scrub(out, long_free=result_long_free(result))
    return clean  # type: ignore[no-any-return]


def usage_json(usage: Usage) -> dict[str, Any]:
    """`Usage` as a plain dict (its fields are scalars: no `dataclasses.asdict`, which deep-copies each
    value and cost ~30 calls here, read several times per run's ending)."""
    return {
        "requests": usage.requests,
        "tool_calls": usage.tool_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost": usage.cost,
    }


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
    Python for long strings (the exported transcript, once per run); an event is checked by `_check`.
    """
    if not deep:
        return _check(value)[0]
    try:
        to_json(hollow(value))
    except Exception:  # a lone surrogate, or a value only the walk in `scrub` can judge
        return False
    return True


def _check(fields: Any) -> tuple[bool, bool]:
    """Whether an event's `fields` are valid UTF-8 JSON, and whether they hold no string of `LONG` or more.

    An event's long strings are its own top-level fields (an answer, a merged stream piece; tool
    results and teaching texts are clipped), so only those are searched in place (`hollow_top`: a walk
    in Python of every value of every event cost more than the rest of its check); anything nested is
    serialized, and a serialization shorter than `LONG` bytes cannot hold a string of `LONG` characters.
    """
    try:
        top = hollow_top(fields)
        size = len(to_json(top))
    except Exception:  # a lone surrogate, or a value only the walk in `scrub` can judge
        return False, False
    return True, top is fields and size < LONG


def scrub_event(event: Event) -> tuple[Event, int]:
    """`event` with its text fields `scrub`-bed (a new event only when one changed), and the count."""
    changes: dict[str, Any] = {}
    total = 0
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, str | dict | list | tuple):
            clean, count = scrub(value)
            if count:
                changes[f.name], total = clean, total + count
    return (dataclasses.replace(event, **changes) if changes else event), total


_TEXT_KINDS = ("token_delta", "thinking_delta")


def _mergeable(a: WireEvent, b: WireEvent) -> bool:
    return (
        a["kind"] == b["kind"]
        and a["kind"] in _TEXT_KINDS
        and a.get("slot") == b.get("slot")
        and a.get("round") == b.get("round")
    )


class EventLog:
    """Wire events in order, consecutive text deltas of one slot and round merged into one event.

    The merged text is kept as a list of pieces and joined only when read (`snapshot`/`take`):
    concatenating per token would copy the whole answer on every token (quadratic in its length).
    A text event followed by others keeps its pieces too (`_unjoined`) until a read joins them, or
    until its slot completes with that very text as its value: then the value, the string the run's
    result holds, becomes the event's text (no copy of a long answer of this log's own). Events a
    read returned are never changed after; only the last one is copied for the caller.
    """

    def __init__(self) -> None:
        self._events: list[WireEvent] = []
        self._pieces: list[str] = []
        """Text pieces of the last event while it is an open text delta."""
        self._small = 0
        """Pieces appended since the last chunk was joined."""
        self._unjoined: dict[int, list[str]] = {}
        """Earlier text events (by position) whose text is still these pieces."""

    def add(self, event: WireEvent) -> None:
        if self._events and self._pieces and _mergeable(self._events[-1], event):
            pieces = self._pieces
            pieces.append(event["text"])
            self._small += 1
            if self._small >= CHUNK:  # the last CHUNK pieces become one string: chunks, not an object per token
                if worth_joining(pieces[-CHUNK:]):  # (long pieces are kept: shared with the run's other logs)
                    pieces[-CHUNK:] = ["".join(pieces[-CHUNK:])]
                self._small = 0
            self._events[-1]["t"] = event["t"]
            return
        if len(self._pieces) > 1:
            self._unjoined[len(self._events) - 1] = self._pieces
        self._events.append(dict(event))  # our own copy: the same event also goes to other logs
        self._pieces = [event["text"]] if event["kind"] in _TEXT_KINDS else []
        self._small = 0
        value = event.get("value")
        if event["kind"] == "slot_completed" and isinstance(value, str) and self._unjoined:
            self._adopt(event.get("slot"), value)

    def _adopt(self, slot: Any, value: str) -> None:
        """Make `value` the text of the slot's unjoined answer text event that holds the same text."""
        for at, pieces in reversed(self._unjoined.items()):
            event = self._events[at]
            if event["kind"] == "token_delta" and event.get("slot") == slot and _same_text(pieces, value):
                event["text"] = value
                del self._unjoined[at]
                return

    def snapshot(self) -> list[WireEvent]:
        """Every event so far (text joined); the caller may keep the list."""
        for at, pieces in self._unjoined.items():
            self._events[at]["text"] = "".join(pieces)
        self._unjoined = {}
        if len(self._pieces) > 1:
            joined = "".join(self._pieces)
            self._events[-1]["text"] = joined
            self._pieces, self._small = [joined], 0
        if not self._events:
            return []
        return [*self._events[:-1], dict(self._events[-1])]

    def take(self) -> list[WireEvent]:
        """Every event so far, emptying the log (a batch to send)."""
        events = self.snapshot()
        self._events, self._pieces = [], []
        return events

    def __len__(self) -> int:
        return len(self._events)


def _same_text(pieces: list[str], text: str) -> bool:
    """Whether `pieces` joined would be `text` (compared in place: no join)."""
    if sum(map(len, pieces)) != len(text):
        return False
    at = 0
    for piece in pieces:
        if not text.startswith(piece, at):
            return False
        at += len(piece)
    return True
