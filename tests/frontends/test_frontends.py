"""Front ends are implementations of one protocol (`agentcell.frontends.base.FrontEnd`).

`show()` asks each front end of `FRONT_ENDS` in order where the call comes from; the first that answers
places the run (which earlier run it replaces) and keeps its output. A new front end is one class.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import agentcell
from agentcell.frontends import show as show_module
from agentcell.frontends.base import FrontEnd, Place
from agentcell.frontends.jupyter.front import JUPYTER
from agentcell.frontends.marimo import MARIMO
from agentcell.frontends.python import PYTHON
from agentcell.frontends.registry import PYTHON_RUNS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_runs_left() -> Iterator[None]:
    yield
    assert not [h for h in PYTHON_RUNS.runs.values() if not h.done]


class Notebook:
    """A made-up front end: one cell, executed again when `execution` changes."""

    name = "made-up"

    def __init__(self) -> None:
        self.execution = object()
        self.kept: list[tuple[Any, Any, Place]] = []

    def here(self) -> Place:
        return Place(front=self.name, key="made-up:cell-1", generation=self.execution, cell="cell-1")

    def display(self, view: Any) -> None:
        raise AssertionError("show() returns the view; it does not display it")

    def keep(self, run: Any, view: Any, place: Place) -> None:
        self.kept.append((run, view, place))


def handle_of(widget: agentcell.AgentWidget) -> agentcell.RunHandle:
    return next(h for h in PYTHON_RUNS.runs.values() if getattr(h, "widget", None) is widget)  # type: ignore[return-value]


async def test_a_new_front_end_places_and_keeps_the_runs_started_in_it(monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = Notebook()
    front: FrontEnd = notebook  # the protocol, checked by mypy
    monkeypatch.setattr(show_module, "FRONT_ENDS", (front, PYTHON))
    first = agentcell.show("Hi [[answer]]", model="offline:fast")
    run = handle_of(first)
    assert notebook.kept == [(run, first, notebook.here())]
    assert PYTHON_RUNS.place_of(run) == "made-up:cell-1"

    same = handle_of(agentcell.show("Again [[answer]]", model="offline:fast"))  # the same execution: both stay
    assert not run.superseded
    notebook.execution = object()  # the cell runs again: its earlier runs are replaced
    later = handle_of(agentcell.show("Later [[answer]]", model="offline:fast"))
    assert run.superseded and same.superseded and not later.superseded
    assert [(await r).status for r in (run, same, later)] == ["stopped", "stopped", "completed"]


async def test_key_overrides_the_place_but_the_front_end_still_keeps_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = Notebook()
    monkeypatch.setattr(show_module, "FRONT_ENDS", (notebook, PYTHON))
    view = agentcell.show("Hi [[answer]]", model="offline:fast", key="mine")
    run = handle_of(view)
    assert PYTHON_RUNS.place_of(run) == "key:mine"
    assert [place.cell for _, _, place in notebook.kept] == ["cell-1"]
    await run


def test_outside_a_notebook_only_plain_python_answers_and_every_call_has_a_place_of_its_own() -> None:
    assert MARIMO.here() is None and JUPYTER.here() is None
    a, b = PYTHON.here(), PYTHON.here()
    assert a.front == b.front == "python" and a.key != b.key
    front, place = show_module.place_of_call()
    assert front is PYTHON and place.key.startswith("run:")
