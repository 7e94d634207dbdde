"""The widget's protocol with the browser: what the view sends, and the run's events as the browser gets them.

The widget never re-sends a growing trait: events travel as batched custom messages. A view keeps no
log of its own: it reads the run's log (`engine/eventlog.py`) with a cursor and converts what it sends
when it sends it (`wire_events`), with consecutive text deltas of one slot, round and kind merged, so a
batch holds one delta per stream and a view that opens later (page reload, a second view) gets the
whole run as one snapshot whose size grows linearly with the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from ...engine.eventlog import EventLog, TextRun
from ...events import Event, ThinkingDelta, TokenDelta
from ...events.json import WireEvent, to_wire
from ...formats.jsonsafe import scrub, scrub_text
from ...formats.long_strings import result_long_free

if TYPE_CHECKING:
    from ...result import RunResult


class FrontendMsg(TypedDict, total=False):
    """What `widget.js` sends with `model.send(...)`."""

    kind: str
    call_id: str
    approved: bool
    reason: str | None
    slot: str
    """`fork`: the slot whose user message is edited (with `message`)."""
    value: str
    """`fork`: the new tool result (with `call_id`) or user message (with `slot`)."""
    does: str
    """`predict`: what the person guesses the model does (`answer`, `tool`, `both`)."""
    tool: str | None
    """`predict`: which tool."""
    # `compare` (a fork's "Compare with the original") carries nothing but its kind.


def transcript_json(result: RunResult) -> dict[str, Any]:
    """The exact transcript for the widget's export: OpenAI messages and pydantic-ai messages.

    `pydantic_ai` loads back with `ModelMessagesTypeAdapter.validate_python(...)`; `openai` is
    `RunResult.to_openai()`. A conversion that fails leaves `None` (and the reason) rather than
    losing the end of the run.
    """
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from ...formats.openai import to_openai
    from ...media.content import hollow_messages

    out: dict[str, Any] = {"openai": None, "pydantic_ai": None}
    try:
        # Images are named by digest (`agentcell-media:…`): their thumbnails came with `media_added` events,
        # and the saved widget state must not hold every image a run sent (`RunResult.to_openai()` has them).
        out["pydantic_ai"] = ModelMessagesTypeAdapter.dump_python(hollow_messages(result.messages), mode="json")
        out["openai"] = to_openai(result.messages, inline_media=False)
    except Exception as exc:  # a converter bug must not cost the run its final event
        out["error"] = f"{type(exc).__name__}: {exc}"
    # A prompt may carry lone surrogates; the saved notebook must be valid UTF-8. Without a long string in
    # the messages the check serializes the whole in C; with one it walks them (not copying the answer).
    clean, _ = scrub(out, long_free=result_long_free(result))
    return clean  # type: ignore[no-any-return]


Note = tuple[int, WireEvent]
"""A message of the view's own (not an event of the run: a run replaced, a view that broke) and where it goes:
before the event at that position of the run's log (at the end when the position is the log's length)."""


def wire_events(log: EventLog, start: int = 0, *, shift: float = 0.0, notes: Sequence[Note] = ()) -> list[WireEvent]:
    """The events of the run's `log` from position `start` on, as wire events (what a batch or snapshot sends).

    Converted now, when they are sent, not as they arrive: each run of consecutive text deltas of one slot,
    round and kind is one event with the text merged (`merged_from`: the log stores it that way), and other
    events take the conversion the run's sink made (`EventLog.converted`) while the log keeps it. `t` is the
    event's time in the log plus `shift` (the view's clock); a merged delta takes its last piece's time.
    `notes` (positions ≥ `start`) are put in at their places.

    A slot's streamed answer that equals its `slot_completed` value is given that value, the string the
    run's result holds, instead of a join: a list that is kept (the `final` trait) holds no copy of a long
    answer of its own, and the end of a long run makes none.
    """
    out: list[WireEvent] = []
    runs: list[tuple[WireEvent, object]] = []
    waiting = sorted(notes, key=lambda note: note[0])
    at = 0
    for event, text, first, last in log.events.merged_from(start):
        while at < len(waiting) and waiting[at][0] <= first:
            out.append(waiting[at][1])
            at += 1
        t = round(log.time(last) + shift, 3)
        if text is None:
            wire = to_wire(event, t=t, converted=log.converted(last))
            value = wire.get("value")
            if wire["kind"] == "slot_completed" and isinstance(value, str):
                _adopt(runs, wire.get("slot"), value)
            elif wire["kind"] in ("slot_started", "slot_retracted"):
                runs.append((wire, _NO_RUN))  # an answer streamed before this is not the slot's value
            out.append(wire)
        else:
            delta: TokenDelta | ThinkingDelta = event  # type: ignore[assignment]
            wire = {"run_id": delta.run_id, "slot": scrub_text(delta.slot)[0], "text": text,
                    "round": delta.round, "kind": delta.kind, "t": t}
            runs.append((wire, text))
            out.append(wire)
    out.extend(note for _, note in waiting[at:])
    for wire, run in runs:
        if isinstance(run, TextRun) and wire["text"] is run:
            wire["text"] = scrub_text(run.join())[0]
    return out


_NO_RUN = object()


def _adopt(runs: list[tuple[WireEvent, object]], slot: Any, value: str) -> None:
    """Give the slot's last streamed answer text `value` if it is the same text (compared without a join)."""
    for wire, text in reversed(runs):
        if wire.get("slot") != slot:
            continue
        if wire["kind"] == "token_delta" and isinstance(text, TextRun) and wire["text"] is text and text.equals(value):
            wire["text"] = value
        if wire["kind"] != "thinking_delta":
            return


def log_of(events: Iterable[Event]) -> EventLog:
    """A log holding `events` (a run read back from its journal), for `wire_events`."""
    log = EventLog()
    for event in events:
        log.append(event)
    return log
