"""`%%agent --over rows --models a,b --expect answer=gold` in a real ipykernel, with jupyter_client playing the
browser: the models' side-by-side widget gets each model's exact pass rate, and the saved output (what
nbconvert or papermill keep, and a notebook opened without a kernel shows) gets the same model-selection table."""

from __future__ import annotations

import pytest

from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel

SETUP = """
import asyncio, re
from pydantic_ai.models.function import FunctionModel

def scripted(right, name):
    async def stream(messages, info):
        qid = int(re.search(r"Question (\\d+)", messages[-1].parts[-1].content).group(1))
        await asyncio.sleep(0.001 * (qid % 3))
        yield str(2 * qid) if qid in right else str(2 * qid + 1)
    return FunctionModel(stream_function=stream, model_name=name)

qs = [{"qid": i, "gold": str(2 * i)} for i in range(30)]
a = scripted({i for i in range(30) if i % 3 != 2}, "a")  # right on 20
b = scripted(set(range(6, 30)), "b")  # right on 24
"""


def test_models_scores_show_side_by_side_live_and_saved(kernel: KernelSession) -> None:
    kernel.run(SETUP)
    before = set(kernel.comms)
    msg_id = kernel.execute("%%agent --over qs --models a,b --expect answer=gold -o c\n"
                            "Question {{ qid }}: what is {{ qid }} doubled? [[answer]]")

    def models_comm() -> list:
        return [c for c in kernel.comms.values() if c.comm_id not in before and c.state.get("view") == "models"]

    kernel.wait_until(lambda: bool(models_comm()), what="the models' widget")
    (comm,) = models_comm()
    kernel.wait_until(lambda: comm.state.get("state", {}).get("status") == "completed", what="every model ended")
    body = comm.state["state"]["selection"]["body"]
    assert [cells[:3] for cells in body] == [["a", "20/30 (66.7%)", "0.667"], ["b", "24/30 (80.0%)", "0.8"]]

    (twin,) = [m["content"]["transient"]["display_id"] for m in kernel.outputs[msg_id]
               if "agentcell-static" in m["content"]["data"].get("text/html", "")]

    def saved() -> list[str]:
        return [m["content"]["data"]["text/html"] for m in kernel.display_updates
                if m["content"].get("transient", {}).get("display_id") == twin]

    kernel.wait_until(lambda: any('data-status="completed"' in html for html in saved()), what="the saved table")
    final = saved()[-1]
    assert "<caption>Model selection</caption>" in final
    assert "<td>20/30 (66.7%)</td>" in final and "<td>24/30 (80.0%)</td>" in final
    out = kernel.run("r = await c\nprint({m: n['passed'] for m, n in r.summary().items()})")
    assert "{'a': 20, 'b': 24}" in out
