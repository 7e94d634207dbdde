"""`%%agent --over` in a real ipykernel, with jupyter_client playing the browser: the cell returns at once,
the batch widget streams rows and progress within the message budget, a clicked row gets its run's
events, and the comm `stop` message stops the whole batch."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.kernelclient import KernelSession, WidgetComm

pytestmark = pytest.mark.kernel

SETUP = """
import asyncio, re
from pydantic_ai.models.function import FunctionModel

async def _slow(messages, info):
    await asyncio.sleep(0.15)
    word = re.search(r"SHOUT: (\\S+)", messages[-1].parts[-1].content)
    yield word.group(1).upper()

slow = FunctionModel(stream_function=_slow, model_name="slow")
words = [f"w{i:03d}" for i in range(300)]
"""


def batch_comm(kernel: KernelSession, before: set[str]) -> WidgetComm:
    kernel.wait_until(lambda: any(c.comm_id not in before and "columns" in c.state for c in kernel.comms.values()),
                      what="batch widget comm")
    return next(c for c in kernel.comms.values() if c.comm_id not in before and "columns" in c.state)


def _twin_updates(kernel: KernelSession, cell: str) -> Callable[[], list[tuple[str, str]]]:
    """The updates of the saved table the cell `cell` displayed: (parent message type, HTML) each (the
    parent is the cell, or on ipykernel 6 whichever shell message came last)."""
    (twin,) = [m["content"]["transient"]["display_id"] for m in kernel.outputs[cell]
               if "agentcell-static" in m["content"]["data"].get("text/html", "")]
    return lambda: [(m["parent_header"].get("msg_type", ""), m["content"]["data"]["text/html"])
                    for m in kernel.display_updates if m["content"].get("transient", {}).get("display_id") == twin]


def custom(comm: WidgetComm, kind: str) -> list[dict]:
    return [content for _, content in comm.custom if content.get("kind") == kind]


def test_over_streams_rows_opens_one_and_stop_stops_everything(kernel: KernelSession) -> None:
    kernel.run(SETUP)
    before = set(kernel.comms)
    msg_id = kernel.execute("%%agent --over words -m slow -o b --concurrency 16\nSHOUT: {{ item }} [[answer]]")
    comm = batch_comm(kernel, before)
    kernel.wait_until(lambda: msg_id in kernel.replies, what="execute_reply")
    assert kernel.replies[msg_id][1]["content"]["status"] == "ok"  # the cell returned; the batch goes on
    assert comm.state["columns"] == ["answer"]

    kernel.send_custom(comm.comm_id, {"kind": "snapshot_request"})
    kernel.wait_until(lambda: any(r["status"] == "completed" for m in custom(comm, "rows") for r in m["rows"]),
                      what="a finished row")
    kernel.send_custom(comm.comm_id, {"kind": "row", "index": 0, "msg": {"kind": "snapshot_request"}})
    kernel.wait_until(lambda: custom(comm, "row"), what="row 0's events")
    (row,) = custom(comm, "row")
    kinds = [e["kind"] for e in row["msg"]["events"]]
    assert (row["index"], kinds[0], kinds[-1]) == (0, "run_started", "processing_complete")
    assert row["msg"]["events"][-1]["answer"] == "W000"

    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    kernel.wait_until(lambda: comm.state.get("status") == "stopped", timeout=10, what="stopped")
    # The saved table (the static twin) was published twice: at the cell's end (running) and at the
    # batch's end (stopped). Never around the comm messages above: those once republished it, and from
    # a subshell thread a stale "running" table could follow the end's (tests/frontends/widget/test_saved_outputs.py).
    twin = _twin_updates(kernel, msg_id)
    kernel.wait_until(lambda: len(twin()) >= 2, timeout=10, what="the stopped table")
    kernel.pump(0.3)
    assert [html.split(">", 1)[0] for _, html in twin()] == [
        '<div class="agentcell-static" data-status="running"', '<div class="agentcell-static" data-status="stopped"']
    progress = comm.state["final"]["progress"]
    assert progress["not_started"] > 0 and progress["running"] == 0 and progress["pending"] == 0
    assert progress["done"] + progress["stopped"] + progress["not_started"] == 300
    out = kernel.run("r = await b\nprint(r.status, r.counts.get('not_started', 0) > 0, len(r.rows))")
    assert out.strip() == "stopped True 300"

    # The widget's budget: at most 30 messages in any one second, whatever the row rate.
    times = sorted(t for t, _ in comm.custom)
    busiest = max(sum(1 for u in times if t <= u < t + 1.0) for t in times)
    assert busiest <= 30, busiest
