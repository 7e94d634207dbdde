"""The `final` trait's wire form: a long text that occurs more than once travels once.

A run's final log holds its answer several times: the streamed text (one merged `token_delta`), the
slot's value (`slot_completed`), `processing_complete.answer`, and the exact transcript twice (OpenAI
messages and pydantic-ai's). For a 50,000-token answer that was 1.4 MB of JSON which JupyterLab decodes
in one task when the run ends (`bench/browser.py`). So the trait is sent as the same events with every
repeated long string replaced by a reference into one table, the list's first element:

    [{"kind": "shared_texts", "texts": [text, ...], "events": [i, ...]}, event, event, ...]

A reference is `{"agentcell_text": n}` (`texts[n]`); `events` lists the positions (in the packed list)
of the events that hold one, so a reader resolves those only (`js/src/view/store.js` `unpackTexts`). A log
with no repeated long text, or one whose data already holds a dict shaped like a reference, is sent
as it is. Python keeps the plain list (`AgentWidget.final`); only the JSON sent to the browser and
written in saved widget state is packed. The run's last live batch and a snapshot are packed the same way
(`AgentWidget.flush`): the last batch holds the answer twice (the slot's value and the run's answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SHARE_MIN = 1_000
"""Characters from which a text that occurs twice is sent once (shorter ones cost less than a reference)."""
TABLE_KIND = "shared_texts"
REF_KEY = "agentcell_text"


class _Clash(Exception):
    """The data holds a dict shaped like a reference: packing it would be ambiguous."""


def _count(value: Any, seen: dict[str, int], wanted: Mapping[str, int] | None = None) -> None:
    """Count the long strings under `value` (those in `wanted` only, if given); raise `_Clash` for a dict
    shaped like a reference. Iterative: a deep tool result must not recurse."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= SHARE_MIN and (wanted is None or item in wanted):
                seen[item] = seen.get(item, 0) + 1
        elif isinstance(item, Mapping):
            if REF_KEY in item and len(item) == 1:
                raise _Clash
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def _replace(value: Any, refs: dict[str, int]) -> tuple[Any, bool]:
    """`value` with repeated long strings replaced by references; whether anything was replaced."""
    if isinstance(value, str):
        at = refs.get(value) if len(value) >= SHARE_MIN else None
        return (value, False) if at is None else ({REF_KEY: at}, True)
    if isinstance(value, Mapping):
        out, hit = {}, False
        for key, item in value.items():
            out[key], got = _replace(item, refs)
            hit = hit or got
        return (out if hit else value), hit
    if isinstance(value, list | tuple):
        pairs = [_replace(item, refs) for item in value]
        hit = any(got for _, got in pairs)
        return ([item for item, _ in pairs] if hit else value), hit
    return value, False


def _top_texts(events: list[dict[str, Any]]) -> dict[str, int]:
    """The long strings that are an event's own fields (where an answer is: the merged stream, a slot's value,
    the run's answer), with their counts; one look at each event's fields, no walk."""
    top: dict[str, int] = {}
    for event in events:
        for value in event.values():
            if type(value) is str and len(value) >= SHARE_MIN:
                top[value] = top.get(value, 0) + 1
    return top


def pack(events: list[dict[str, Any]], _widget: Any = None) -> list[dict[str, Any]]:
    """The events as sent: each long text that occurs more than once replaced by a reference (see above).

    Also a traitlets `to_json` (the second argument is the widget). Only the places an answer repeats are
    looked at: events' own fields, and the exact transcript of the last event (walked: it holds the answer
    in nested messages). A run of many tool rounds and short texts costs one look at each event's fields,
    not a walk of every request and tool result it logged. Events without a repeated text are the caller's
    own objects, unchanged.
    """
    top = _top_texts(events)
    if not top:
        return events
    transcript = events[-1].get("transcript") if events else None
    try:
        _count(transcript, top, wanted=top)
    except _Clash:
        return events
    texts = [text for text, n in top.items() if n > 1]
    if not texts:
        return events
    refs = {text: i for i, text in enumerate(texts)}
    packed: list[dict[str, Any]] = [{}]
    holders = []
    try:
        for event in events:
            new = event
            if any(type(v) is str and v in refs for v in event.values()) or (event is events[-1] and transcript):
                _count(event, {})  # a holder is resolved whole by a reader: it must hold no reference-shaped dict
                new, hit = _replace(event, refs)
                if hit:
                    holders.append(len(packed))
            packed.append(new)
    except (_Clash, RecursionError):  # a user's dict shaped like a reference; a value deeper than the stack
        return events
    packed[0] = {"kind": TABLE_KIND, "texts": texts, "events": holders}
    return packed


def _resolve(value: Any, texts: list[str]) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(REF_KEY), int):
            return texts[value[REF_KEY]]
        return {key: _resolve(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, texts) for item in value]
    return value


def unpack(packed: Any, _widget: Any = None) -> Any:
    """The plain events of a packed list (a list without the table is returned as it is); a `from_json`.
    Only the events the table names are resolved, as in the browser (`js/src/view/store.js`)."""
    if not isinstance(packed, list) or not packed or not isinstance(packed[0], dict):
        return packed
    head = packed[0]
    if head.get("kind") != TABLE_KIND or not isinstance(head.get("texts"), list):
        return packed
    texts, events = head["texts"], packed[1:]
    holders = {at - 1 for at in head.get("events") or () if isinstance(at, int)}
    try:
        return [_resolve(event, texts) if i in holders else event for i, event in enumerate(events)]
    except RecursionError:  # deeper than Python's stack: not something `pack` sent (it sends those plain)
        return packed
