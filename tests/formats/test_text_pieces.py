"""The stores of a run's text join small pieces into chunks and keep long ones as they are (`text_pieces.py`).

Long pieces (a fast stream, merged by the engine) are the same string objects in the run's log, the
transcript and the widget's log: one copy of the answer shared, not one per store.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentcell.engine.eventlog import _Deltas
from agentcell.events import TokenDelta
from agentcell.formats.pieces import CHUNK, LARGE
from agentcell.frontends.widget.protocol import EventLog
from agentcell.transcript import Pieces


def _pieces_store(texts: list[str]) -> list[str]:
    store = Pieces(texts[0])
    for text in texts[1:]:
        store.append(text)
    return list(store._parts)


def _wire_store(texts: list[str]) -> list[str]:
    log = EventLog()
    for text in texts:
        log.add({"kind": "token_delta", "run_id": "r", "slot": "a", "round": 1, "text": text, "t": 0})
    return list(log._pieces)


def _run_log_store(texts: list[str]) -> list[str]:
    deltas = _Deltas(TokenDelta(run_id="r", slot="a", text=texts[0]))
    for text in texts[1:]:
        deltas.add(text)
    assert [deltas.text(k) for k in range(len(deltas))] == texts  # read back piece by piece
    return [t for chunk in deltas.chunks for t in ([chunk] if isinstance(chunk, str) else chunk)] + deltas.pending


STORES: list[Callable[[list[str]], list[str]]] = [_pieces_store, _wire_store, _run_log_store]


@pytest.mark.parametrize("store", STORES, ids=["transcript", "widget-log", "run-log"])
def test_long_pieces_are_kept_as_the_same_strings(store: Callable[[list[str]], list[str]]) -> None:
    texts = [f"{i:06d}" + "x" * LARGE for i in range(CHUNK + 10)]
    kept = store(texts)
    assert len(kept) == len(texts)
    assert all(a is b for a, b in zip(kept, texts, strict=True))  # shared, not copied


@pytest.mark.parametrize("store", STORES, ids=["transcript", "widget-log", "run-log"])
def test_small_pieces_are_joined_into_chunks(store: Callable[[list[str]], list[str]]) -> None:
    texts = [f"t{i} " for i in range(CHUNK + 10)]
    kept = store(texts)
    assert "".join(kept) == "".join(texts)
    assert len(kept) <= 12  # one chunk for the first CHUNK pieces, the rest as they came


def _delta(text: str, *, slot: str = "a") -> dict[str, object]:
    return {"kind": "token_delta", "run_id": "r", "slot": slot, "round": 1, "text": text, "t": 0}


def test_the_widget_log_takes_the_slots_value_as_its_answer_text_not_a_join() -> None:
    """A slot's streamed answer is not joined into a copy of the widget log's own when the slot
    completes with that text: the value (the string the run's result holds) becomes the text."""
    texts = [f"{i:06d}" + "x" * LARGE for i in range(40)]
    answer = "".join(texts)
    log = EventLog()
    for text in texts:
        log.add(_delta(text))
    log.add({"kind": "model_response_received", "run_id": "r", "slot": "a", "t": 0})
    log.add(_delta("other", slot="b"))
    log.add({"kind": "slot_completed", "run_id": "r", "slot": "b", "value": "different", "t": 0})
    log.add({"kind": "slot_completed", "run_id": "r", "slot": "a", "value": answer, "t": 0})
    events = log.snapshot()
    assert events[0]["text"] is answer
    assert [e.get("text") for e in events[1:]] == [None, "other", None, None]


def test_the_widget_log_joins_an_answer_its_slot_did_not_complete_with() -> None:
    log = EventLog()
    for text in ("ab", "cd"):
        log.add(_delta(text))
    log.add({"kind": "slot_completed", "run_id": "r", "slot": "a", "value": "abce", "t": 0})  # same length
    log.add(_delta("ef"))
    first = log.snapshot()
    log.add(_delta("gh"))
    log.add({"kind": "slot_completed", "run_id": "r", "slot": "a", "value": "efgh", "t": 0})  # after a read
    assert [e.get("text") for e in first] == ["abcd", None, "ef"]
    assert [e.get("text") for e in log.snapshot()] == ["abcd", None, "efgh", None]
