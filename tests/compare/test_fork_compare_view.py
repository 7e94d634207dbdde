"""A fork's "Compare with the original", as the kernel handles the view's `compare` message (no kernel needed).

The fork's widget offers the comparison (`comparison["original"]`); the message puts `agentcell.diff`'s own
HTML and text in the widget's `comparison` trait and in the fork's saved output; a plain run offers nothing.
"""

from __future__ import annotations

import pytest

import agentcell
from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.options import RunOptions
from agentcell.template import compile_template

from .conftest import Counted, Tools

pytestmark = pytest.mark.anyio


async def started(model: Counted, tools: Tools):
    spec = LaunchSpec(template=compile_template("Find it. [[answer|use_tools=true]]"),
                      options=RunOptions(model=model.model(), tools=[tools.lookup_tool()], journal=False))
    handle = launch(spec)
    await handle
    return handle


async def test_the_compare_message_puts_the_diff_of_fork_and_original_in_the_forks_view_and_saved_output() -> None:
    handle = await started(Counted("m", rounds=2), Tools())
    assert handle.widget is not None and handle.widget.comparison == {}  # no fork: nothing offered
    handle.fork_from_view({"kind": "fork", "call_id": "c1", "value": "EDITED"})
    fork = handle.forks[-1]
    assert fork.widget is not None and fork.widget.comparison == {"original": handle.run_id}
    result = await fork
    fork.widget._on_frontend_msg(fork.widget, {"kind": "compare"}, [])
    expected = agentcell.diff(handle.result(), result)
    shown = fork.widget.comparison
    assert shown["html"] == expected._repr_html_() and shown["text"] == repr(expected)
    assert expected["first_difference"]["round"] == 2 and expected["first_difference"]["part"] == "tool result"
    assert shown["summary"] == "compared with the original: first difference in answer, round 2, tool result"
    data, _ = fork.widget.static_bundle()
    assert data["text/html"].endswith(expected._repr_html_())
    assert data["text/plain"].endswith(repr(expected))


async def test_a_second_compare_message_sends_nothing_new() -> None:
    handle = await started(Counted("m", rounds=1), Tools())
    handle.fork_from_view({"kind": "fork", "call_id": "c0", "value": "EDITED"})
    fork = handle.forks[-1]
    await fork
    assert fork.widget is not None
    fork.widget._on_frontend_msg(fork.widget, {"kind": "compare"}, [])
    first = fork.widget.comparison
    changes: list[object] = []
    fork.widget.observe(changes.append, names="comparison")
    fork.widget._on_frontend_msg(fork.widget, {"kind": "compare"}, [])
    assert changes == [] and fork.widget.comparison is first


async def test_a_plain_runs_view_ignores_a_compare_message() -> None:
    handle = await started(Counted("m", rounds=1), Tools())
    assert handle.widget is not None
    handle.widget._on_frontend_msg(handle.widget, {"kind": "compare"}, [])
    assert handle.widget.comparison == {}
