"""Events as JSON: the fields every reader of an event (the widget, the journal, the transcript) sends or keeps.

Each event becomes one small JSON object: its dataclass fields, `kind`, and `t` (seconds since the run's
start). The run's sink converts each event once as it is emitted (`wire_fields`: the conversion checks its
text too) and hands the conversion to the run's log and journal; the views take it from the log.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..formats.jsonsafe import check_json, check_json_dump, jsonable, scrub
from .run import Event, ProcessingComplete, Usage

WireEvent = dict[str, Any]
"""An event as sent to the browser: the dataclass fields, `kind`, and `t` (seconds since start)."""



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



def wire_fields(event: Event) -> Converted:
    """`event`'s wire fields (no `t`, not scrubbed), whether they serialize as valid UTF-8 as they are, and
    whether they hold no long string (then a row of it is dumped whole, in C).

    Made once per event by the run's sink, which passes it on (`EventLog.append`, `Journal.event`): a
    reader that has it never converts again. Treat it as read-only: its readers share it.
    """
    return wire_json(event)[0]


def wire_json(event: Event) -> tuple[Converted, bytes | None]:
    """`wire_fields(event)`, and the event's JSON when the check made it whole: every field of the event, in its
    order, as the journal's event adapter writes them (tests pin the two to the same bytes); `None` when a field
    was left out of the wire fields, or they hold a long string or text that is not valid UTF-8."""
    if isinstance(event, ProcessingComplete):  # once per run: its readers use the result, not these fields
        fields = {
            "kind": event.kind,
            "run_id": event.run_id,
            "slot": event.slot,
            "status": event.status,
            "early_termination": event.early_termination,
            "answer": jsonable(event.result.answer),
            "usage": usage_json(event.result.usage),
        }
        return (fields, check_json(fields)[0], False), None  # its journal row holds the result, not these fields
    fields = jsonable(event)  # one call in C: the dataclass's fields in order, `repr` for the odd value
    whole = True
    if fields["kind"] in ("tool_started", "approval_requested") and fields.get("server") is None:
        fields.pop("server", None)  # only an MCP server's tool names its server
        whole = False
    value = fields.get("value")
    if fields["kind"] == "slot_completed" and isinstance(value, str) and fields.get("text") == value:
        del fields["text"]  # a text answer: `value` is the text; don't send it twice
        whole = False
    valid, long_free, dumped = check_json_dump(fields)
    return (fields, valid, long_free), dumped if whole else None


def usage_json(usage: Usage) -> dict[str, Any]:
    """`Usage` as a plain dict (its fields are scalars: no `dataclasses.asdict`, which deep-copies each
    value and cost ~30 calls here, read several times per run's ending)."""
    return {
        "requests": usage.requests,
        "tool_calls": usage.tool_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost": usage.cost,
        "estimated": usage.estimated,
    }


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
