"""`show()`: a run started from Python, shown live where the call was made; and `stop_all()`.

`%%agent` keeps its runs in the magic's registry, keyed by the front end's cell id. Runs started
with `show()` live in `PYTHON_RUNS` (there is no shell object in marimo or a script to hang them
on), and their *place* decides which earlier run a new one replaces:

* `key=` given: that key (a string), or the place of the earlier run whose widget is passed;
* else the place the front end running the call gives (`FrontEnd.here`, asked in `FRONT_ENDS`
  order): the running marimo cell, the executing Jupyter cell, or in plain Python a place of its own
  (the run replaces nothing, and only `show(key=its_widget)` replaces it).
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from dataclasses import replace
from typing import Any, Unpack

from ..errors import NoEventLoop
from ..options import RunOptionsKwargs, ShowOptionsKwargs, option_keywords, options_for
from ..template.program import Template
from .base import FrontEnd, Place
from .handle import RunHandle, launch
from .jupyter.front import JUPYTER
from .launch import LaunchSpec
from .marimo import MARIMO
from .python import PYTHON
from .registry import PYTHON_RUNS, LiveRun
from .widget.widget import AgentWidget

FRONT_ENDS: tuple[FrontEnd, ...] = (MARIMO, JUPYTER, PYTHON)
"""The front ends a `show()` call may come from, asked in this order (`PYTHON` answers always)."""

_places: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""A `show()` widget → the place its run was started from (so `key=widget` replaces that place)."""


def place_of_call(key: str | AgentWidget | None = None) -> tuple[FrontEnd, Place]:
    """The front end running a `show()` call made now, and the call's place (see the module docstring)."""
    for front in FRONT_ENDS:
        here = front.here()
        if here is not None:
            break
    else:  # PYTHON always answers
        raise AssertionError("no front end answered")
    if isinstance(key, str):
        return front, replace(here, key=f"key:{key}", generation=None)
    if key is not None:
        return front, replace(here, key=_places.get(key) or f"view:{id(key)}", generation=None)
    return front, here


def stop_all() -> list[LiveRun]:
    """Stop every run started with `show()` and, in IPython, every `%%agent` run; returns those asked to stop.

    Safe from any thread. The returned handles are awaitable: `await asyncio.gather(*stop_all())` waits
    until each has ended (its view then shows `stopped`).
    """
    stopped = PYTHON_RUNS.stop_all()
    shell = None
    if "IPython" in sys.modules:
        from IPython import get_ipython

        shell = get_ipython()
    magics = shell.magics_manager.registry.get("AgentMagics") if shell is not None else None
    if magics is not None:
        stopped += magics.registry.stop_all()
    return stopped


@option_keywords
def show(
    template: Template | str, *, key: str | AgentWidget | None = None, **options: Unpack[ShowOptionsKwargs]
) -> AgentWidget:
    """Start a run on the running loop and return its live widget (marimo, Jupyter, Python inside a loop).

    The keywords are `RunOptions`' fields except `approve` (the widget's Approve / Deny buttons
    answer), then `key`. A run replaces the one started before from the same place: the same marimo
    or Jupyter cell, or the same `key` (a string, or the widget of the run to replace); the replaced
    run is stopped and its view says so. Elsewhere nothing is replaced (`stop_all()` stops every run).

    Raises:
        NoEventLoop: no event loop runs here (a plain script): use `complete()` there.
    """
    from ..template import compile_template

    chosen = options_for(show, options)
    _require_loop()
    compiled = compile_template(template) if isinstance(template, str) else template
    return _show(LaunchSpec(template=compiled, options=chosen, hints="python"), key=key)


@option_keywords
def start_run(template: Template | str, **options: Unpack[RunOptionsKwargs]) -> RunHandle:
    """Start a run on the running loop and return its `RunHandle` (what `%%agent -o NAME` binds) at once.

    For code that drives a run itself, notably a stepped one: `handle = start_run(t, step=True)`, then
    `await handle.step()`, `handle.paused`, `handle.go()`, `await handle` for the `RunResult`. No view is
    shown (`show()` returns one); `stop_all()` stops it. The keywords are `RunOptions`' fields.

    Raises:
        NoEventLoop: no event loop runs here (a plain script): use `complete()` there.
    """
    from ..template import compile_template

    chosen = options_for(start_run, options)
    _require_loop()
    compiled = compile_template(template) if isinstance(template, str) else template
    place = PYTHON.here()
    spec = LaunchSpec(template=compiled, options=chosen, hints="python", quiet=True, key=place.key)
    handle = launch(spec, registry=PYTHON_RUNS, generation=place.generation)
    _show_source(handle, spec, "start_run")
    return handle


def _show_source(handle: RunHandle, spec: LaunchSpec, function: str) -> None:
    """The template and options that produced a Python run, for its teaching view and lesson."""
    from ..render.cell_source import cell_source, python_call

    options = spec.options
    chosen = {name: getattr(options, name) for name in ("model", "step", "predict", "inject", "limits")}
    handle.show_source(cell_source(spec.template.source, call=python_call(function, chosen), context=options.context,
                                   variables=spec.template.variables, model=options.model))


def _show(spec: LaunchSpec, *, key: str | AgentWidget | None) -> AgentWidget:
    front, place = place_of_call(key)
    handle = launch(replace(spec, key=place.key), registry=PYTHON_RUNS, generation=place.generation)
    _show_source(handle, spec, "show")
    assert handle.widget is not None
    _places[handle.widget] = place.key
    front.keep(handle, handle.widget, place)
    return handle.widget


def _require_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise NoEventLoop(
            "show() needs a running event loop (a Jupyter or marimo notebook, or async code); "
            "in a script use `result = agentcell.complete(...)`"
        ) from None
