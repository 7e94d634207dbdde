"""`agentcell.show()` from a Jupyter cell, in real kernels: a re-run cell replaces its run, like `%%agent`.

The client plays JupyterLab: every execute_request carries a `cellId`. One execution of a cell may
start several runs; the next execution of that cell replaces them all, and the replaced views say so.
"""

from __future__ import annotations

import uuid

import pytest

from agentcell.frontends.handle import REPLACED
from tests.kernel.conftest import start_cell
from tests.kernelclient import KernelSession, WidgetComm

pytestmark = pytest.mark.kernel
SHOW = "import agentcell\nagentcell.show('Explain photosynthesis in detail. [[answer]]')"
TWICE = ("import agentcell\nfrom IPython.display import display\n"
         "display(agentcell.show('Explain photosynthesis. [[answer]]'))\n"
         "display(agentcell.show('Explain respiration. [[answer]]'))")


def status(comm: WidgetComm) -> object:
    return comm.state.get("status")


def warnings(comm: WidgetComm) -> list[str]:
    return [ev["message"] for _, content in comm.custom for ev in content.get("events", [])
            if ev.get("kind") == "run_warning"]


def test_rerunning_a_show_cell_replaces_its_run_and_says_so(kernel: KernelSession) -> None:
    cell_id = str(uuid.uuid4())
    _, first = start_cell(kernel, SHOW, cell_id=cell_id)
    kernel.wait_until(lambda: kernel.streamed_text(first) != "", what="first run streams")
    _, second = start_cell(kernel, SHOW, cell_id=cell_id)
    kernel.wait_until(lambda: status(first) == "stopped", timeout=5, what="first run stopped")
    assert warnings(first) == [REPLACED]
    kernel.wait_until(lambda: kernel.streamed_text(second) != "", what="second run streams")
    assert status(second) == "running" and warnings(second) == []
    assert kernel.run("print(len(agentcell.stop_all()))").strip() == "1"
    kernel.wait_until(lambda: status(second) == "stopped", timeout=5, what="second stopped by stop_all")
    assert warnings(second) == []


def test_runs_started_by_one_execution_coexist_until_the_cell_runs_again(kernel: KernelSession) -> None:
    cell_id = str(uuid.uuid4())
    before = {c.comm_id for c in kernel.agent_widgets()}
    kernel.execute(TWICE, cell_id=cell_id)
    kernel.wait_until(lambda: len([c for c in kernel.agent_widgets() if c.comm_id not in before]) == 2,
                      what="two widgets")
    a, b = [c for c in kernel.agent_widgets() if c.comm_id not in before]
    kernel.wait_until(lambda: kernel.streamed_text(a) != "" and kernel.streamed_text(b) != "", what="both stream")
    assert status(a) == status(b) == "running"
    _, again = start_cell(kernel, SHOW, cell_id=cell_id)
    kernel.wait_until(lambda: status(a) == status(b) == "stopped", timeout=5, what="both replaced")
    assert warnings(a) == warnings(b) == [REPLACED]
    kernel.send_custom(again.comm_id, {"kind": "stop"})
    kernel.wait_until(lambda: status(again) == "stopped", timeout=5, what="third stopped")
