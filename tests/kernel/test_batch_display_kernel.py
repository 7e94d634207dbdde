"""`batch = agentcell.map(...)`, then `batch` as a cell's value, in a real ipykernel (jupyter_client playing the
browser), registered at `import agentcell` (no magic): the cell shows the batch widget, and its saved output (what
nbclient and papermill keep) reads a one-line summary of the batch, not a widget placeholder only."""

from __future__ import annotations

import pytest

from tests.kernelclient import KernelSession

from .test_models_kernel import SETUP

pytestmark = pytest.mark.kernel

UNREGISTER_AND_IMPORT = """
import importlib, agentcell
_f = get_ipython().display_formatter.ipython_display_formatter
for _name in ("agentcell.batch.runner.Batch", "agentcell.batch.compare_rows.ComparedBatch"):
    _f.pop(_name, None)  # what `%load_ext agentcell` registered: the import alone must do it
importlib.reload(agentcell)
"""
TEMPLATE = "Question {{ qid }}: what is {{ qid }} doubled? [[answer]]"


def test_a_batch_as_a_cells_value_shows_its_widget_and_saves_a_summary(kernel: KernelSession) -> None:
    kernel.run(SETUP)
    kernel.run(UNREGISTER_AND_IMPORT)
    kernel.run(f"batch = agentcell.map({TEMPLATE!r}, qs, model=a, expect={{'answer': 'gold'}})")
    before = set(kernel.comms)
    msg_id = kernel.execute("batch")
    kernel.wait_until(lambda: any(c.comm_id not in before and "columns" in c.state for c in kernel.comms.values()),
                      what="the batch widget")
    kernel.wait_until(lambda: msg_id in kernel.replies, what="execute_reply")
    outputs = [m["content"]["data"] for m in kernel.outputs[msg_id]]
    assert any("application/vnd.jupyter.widget-view+json" in data for data in outputs)
    assert not any(data.get("text/plain", "").startswith("<agentcell batch") for data in outputs)  # not the repr
    twin = _twin(kernel, msg_id)
    kernel.wait_until(lambda: any("; completed" in text for _, text in _saved(kernel, twin)), what="the saved summary")
    head = next(text for _, text in _saved(kernel, twin) if "; completed" in text).splitlines()[0]
    assert head == ("agentcell batch: 30 rows (30 completed); completed; 20/30 passed (66.7%); 10 failed; "
                    "mean answer:equals 0.667")

    again = kernel.execute("batch")  # shown again once it ended: its saved table comes at once, under that cell
    kernel.wait_until(lambda: again in kernel.idle, what="the second cell's outputs")
    assert {text.splitlines()[0] for parent, text in _saved(kernel, _twin(kernel, again)) if parent == again} == {head}


def _twin(kernel: KernelSession, cell: str) -> str:
    """The display id of the static twin the cell `cell` displayed."""
    (twin,) = [m["content"]["transient"]["display_id"] for m in kernel.outputs[cell]
               if "agentcell-static" in m["content"]["data"].get("text/html", "")]
    return str(twin)


def _saved(kernel: KernelSession, twin: str) -> list[tuple[str, str]]:
    """The updates of a static twin: (the cell they came under, their text) each."""
    return [(m["parent_header"].get("msg_id", ""), m["content"]["data"]["text/plain"]) for m in kernel.display_updates
            if m["content"].get("transient", {}).get("display_id") == twin]


def test_a_comparison_over_rows_as_a_cells_value_shows_the_models_table(kernel: KernelSession) -> None:
    kernel.run(SETUP)
    before = set(kernel.comms)
    msg_id = kernel.execute(f"agentcell.compare({TEMPLATE!r}, models=[a, b], over=qs, expect={{'answer': 'gold'}})")

    def models() -> list:
        return [c for c in kernel.comms.values() if c.comm_id not in before and c.state.get("view") == "models"]

    kernel.wait_until(lambda: bool(models()), what="the models' widget")
    kernel.wait_until(lambda: models()[0].state.get("state", {}).get("status") == "completed", what="every model")
    body = models()[0].state["state"]["selection"]["body"]
    assert [cells[:2] for cells in body] == [["a", "20/30 (66.7%)"], ["b", "24/30 (80.0%)"]]
    texts = [m["content"]["data"].get("text/plain", "") for m in kernel.outputs[msg_id]]
    assert any(t.startswith("agentcell: 30 rows on 2 models (a, b)") for t in texts)  # the saved table's head
