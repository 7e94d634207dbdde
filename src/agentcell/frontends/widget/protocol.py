"""The widget's protocol with the browser: what the view sends, and the log a late view replays.

The widget never re-sends a growing trait: events travel as batched custom messages (`events/json.py`
makes each event's JSON). `EventLog` keeps every event of the run with consecutive text deltas of the
same slot and round merged, so a view that opens later (page reload, a second view) gets the whole run
as one snapshot whose size grows linearly with the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from ...events.json import WireEvent
from ...formats.jsonsafe import scrub
from ...formats.long_strings import result_long_free
from ...formats.pieces import CHUNK, worth_joining

if TYPE_CHECKING:
    from ...result import RunResult


class FrontendMsg(TypedDict, total=False):
    """What `widget.js` sends with `model.send(...)`."""

    kind: str
    call_id: str
    approved: bool
    reason: str | None


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
