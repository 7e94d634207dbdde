"""The stores of a run's text join small pieces into chunks and keep long ones as they are (`text_pieces.py`).

Long pieces (a fast stream, merged by the engine) are the same string objects in the run's log, the
transcript and the widget's log: one copy of the answer shared, not one per store.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentcell.engine.eventlog import _Deltas
from agentcell.events import TokenDelta
from agentcell.text_pieces import CHUNK, LARGE
from agentcell.transcript import Pieces
from agentcell.wire import EventLog


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
