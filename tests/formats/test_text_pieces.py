"""The stores of a run's text join small pieces into chunks and keep long ones as they are (`text_pieces.py`).

Long pieces (a fast stream, merged by the engine) are the same string objects in the run's log and the
transcript: one copy of the answer shared, not one per store. The widget keeps no log: it reads the run's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentcell.engine.eventlog import EventLog, _Deltas
from agentcell.events import SlotCompleted, SlotStarted, TokenDelta
from agentcell.formats.pieces import CHUNK, LARGE
from agentcell.frontends.widget.protocol import wire_events
from agentcell.transcript import Pieces


def _pieces_store(texts: list[str]) -> list[str]:
    store = Pieces(texts[0])
    for text in texts[1:]:
        store.append(text)
    return list(store._parts)


def _run_log_store(texts: list[str]) -> list[str]:
    deltas = _Deltas(TokenDelta(run_id="r", slot="a", text=texts[0]))
    for text in texts[1:]:
        deltas.add(text)
    assert [deltas.text(k) for k in range(len(deltas))] == texts  # read back piece by piece
    return [t for chunk in deltas.chunks for t in ([chunk] if isinstance(chunk, str) else chunk)] + deltas.pending


STORES: list[Callable[[list[str]], list[str]]] = [_pieces_store, _run_log_store]


@pytest.mark.parametrize("store", STORES, ids=["transcript", "run-log"])
def test_long_pieces_are_kept_as_the_same_strings(store: Callable[[list[str]], list[str]]) -> None:
    texts = [f"{i:06d}" + "x" * LARGE for i in range(CHUNK + 10)]
    kept = store(texts)
    assert len(kept) == len(texts)
    assert all(a is b for a, b in zip(kept, texts, strict=True))  # shared, not copied


@pytest.mark.parametrize("store", STORES, ids=["transcript", "run-log"])
def test_small_pieces_are_joined_into_chunks(store: Callable[[list[str]], list[str]]) -> None:
    texts = [f"t{i} " for i in range(CHUNK + 10)]
    kept = store(texts)
    assert "".join(kept) == "".join(texts)
    assert len(kept) <= 12  # one chunk for the first CHUNK pieces, the rest as they came


def _delta(text: str, *, slot: str = "a") -> TokenDelta:
    return TokenDelta(run_id="r", slot=slot, text=text)


def test_the_final_list_takes_the_slots_value_as_its_answer_text_not_a_join() -> None:
    """A slot's streamed answer is not kept as a copy of the view's own in the `final` list when the slot
    completes with that text: the value (the string the run's result holds) becomes the text."""
    texts = [f"{i:06d}" + "x" * LARGE for i in range(40)]
    answer = "".join(texts)
    log = EventLog()
    for text in texts:
        log.append(_delta(text))
    log.append(_delta("other", slot="b"))
    log.append(SlotCompleted(run_id="r", slot="b", value="different", text="different"))
    log.append(SlotCompleted(run_id="r", slot="a", value=answer, text=answer))
    events = wire_events(log)
    assert events[0]["text"] is answer
    assert [e.get("text") for e in events[1:]] == ["other", None, None]


def test_the_end_of_a_long_answer_makes_no_join_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The widget's `final` list is made at the run's end: the answer, streamed as many deltas, is compared
    with the slot's value in place, never joined into a copy (a 7.5 MB answer made a 7.5 MB peak)."""
    from agentcell.engine import eventlog

    joins: list[str] = []
    join = eventlog.TextRun.join
    monkeypatch.setattr(eventlog.TextRun, "join", lambda self: joins.append(join(self)) or joins[-1])
    texts = [f"t{i} " for i in range(CHUNK * 3)]
    answer = "".join(texts)
    log = EventLog()
    for text in texts:
        log.append(_delta(text))
    log.append(SlotCompleted(run_id="r", slot="a", value=answer, text=answer))
    events = wire_events(log)
    assert events[0]["text"] is answer and joins == []
    assert wire_events(log, 5)[0]["text"] == answer[len("t0 t1 t2 t3 t4 "):] and len(joins) == 1  # a batch: joined


def test_an_answer_its_slot_did_not_complete_with_keeps_its_own_text() -> None:
    log = EventLog()
    for text in ("ab", "cd"):
        log.append(_delta(text))
    log.append(SlotCompleted(run_id="r", slot="a", value="abce", text="abce"))  # same length, other text
    log.append(SlotStarted(run_id="r", slot="a", slot_type="text", index=1))
    log.append(_delta("ef"))
    first = wire_events(log)
    log.append(_delta("gh"))
    log.append(SlotCompleted(run_id="r", slot="a", value="efgh", text="efgh"))
    assert [e.get("text") for e in first] == ["abcd", None, None, "ef"]
    assert [e.get("text") for e in wire_events(log)] == ["abcd", None, None, "efgh", None]


def test_a_read_from_the_middle_of_a_run_of_deltas_merges_the_rest() -> None:
    """The widget's cursor may fall inside a run of deltas (some sent, more came): the rest is one event."""
    log = EventLog()
    texts = [f"t{i} " for i in range(CHUNK * 2 + 300)]
    for text in texts:
        log.append(_delta(text))
    for cut in (0, 1, CHUNK - 1, CHUNK, CHUNK + 7, CHUNK * 2 + 299):
        [event] = wire_events(log, cut)
        assert event["text"] == "".join(texts[cut:]), cut
