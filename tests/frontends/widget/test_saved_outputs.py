"""The saved-output keeper publishes tracked views at cell boundaries only: not around comm messages
(which the `comm` package wraps in `pre_execute`/`post_execute`, on a subshell thread in JupyterLab),
and only on the thread that showed the view."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from comm.base_comm import BaseComm
from IPython.core.events import EventManager, available_events

from agentcell.frontends.widget.saved_outputs import saved_outputs


class _Shell:
    def __init__(self) -> None:
        self.events = EventManager(self, available_events)


class _View:
    def __init__(self) -> None:
        self.calls = 0
        self.final = False

    def republish(self) -> bool:
        self.calls += 1
        return self.final


class _Comm(BaseComm):
    def publish_msg(self, *_args: Any, **_kwargs: Any) -> None:  # no kernel to publish to
        return None


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> _Shell:
    shell = _Shell()
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    return shell


def test_a_cell_republishes_its_views_until_one_went_out_final(shell: _Shell) -> None:
    keeper = saved_outputs(shell)
    assert keeper is not None and saved_outputs(shell) is keeper  # one keeper per shell, hooks registered once
    view = _View()
    keeper.track(view)
    keeper.track(view)
    shell.events.trigger("pre_run_cell", None)
    shell.events.trigger("post_run_cell", None)
    assert (view.calls, len(keeper)) == (2, 1)
    view.final = True
    shell.events.trigger("pre_run_cell", None)
    shell.events.trigger("post_run_cell", None)
    assert (view.calls, len(keeper)) == (3, 0)  # published final once, then forgotten


def test_a_comm_message_does_not_republish(shell: _Shell) -> None:
    keeper = saved_outputs(shell)
    assert keeper is not None
    view = _View()
    keeper.track(view)
    clicks: list[dict[str, Any]] = []
    comm = _Comm(target_name="jupyter.widget", comm_id="c1", primary=False)
    comm.on_msg(clicks.append)
    comm.handle_msg({"content": {"comm_id": "c1", "data": {"method": "custom", "content": {"kind": "stop"}}}})
    assert len(clicks) == 1  # the comm package ran its pre/post_execute around the callback...
    assert view.calls == 0  # ...and nothing was published


def test_each_thread_republishes_only_the_views_it_showed(shell: _Shell) -> None:
    """A cell in a kernel subshell runs on that subshell's thread (and loop): it publishes the views it
    showed, never the main shell's, whose runs a main-thread cell publishes."""
    keeper = saved_outputs(shell)
    assert keeper is not None
    main_view, sub_view = _View(), _View()
    keeper.track(main_view)

    def in_subshell(*steps: Any) -> None:
        worker = threading.Thread(target=lambda: [step() for step in steps])
        worker.start()
        worker.join()

    in_subshell(lambda: keeper.track(sub_view), lambda: shell.events.trigger("post_run_cell", None))
    assert (main_view.calls, sub_view.calls) == (0, 1)
    shell.events.trigger("post_run_cell", None)
    assert (main_view.calls, sub_view.calls, len(keeper)) == (1, 1, 2)


def test_a_failing_view_is_dropped_and_the_others_still_publish(shell: _Shell) -> None:
    keeper = saved_outputs(shell)
    assert keeper is not None

    class Broken(_View):
        def republish(self) -> bool:
            raise RuntimeError("boom")

    good = _View()
    keeper.track(Broken())
    keeper.track(good)
    shell.events.trigger("post_run_cell", None)
    assert (good.calls, len(keeper)) == (1, 1)
