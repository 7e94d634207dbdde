"""A batch in JupyterLab + Chromium: rows fill the table live, a clicked row opens its run view, Stop stops all."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done

pytestmark = pytest.mark.browser
expect = sync_api.expect

SETUP = """%load_ext agentcell
import asyncio, re
from pydantic_ai.models.function import FunctionModel

async def _slow(messages, info):
    await asyncio.sleep(0.4)
    word = re.search(r"SHOUT: (\\S+)", messages[-1].parts[-1].content)
    yield word.group(1).upper()

slow = FunctionModel(stream_function=_slow, model_name="slow")
words = [f"w{i:03d}" for i in range(200)]"""


def test_batch_rows_fill_live_a_row_opens_and_stop_stops_everything(lab: Lab, page: Any) -> None:
    lab.write_notebook("batch.ipynb", [
        SETUP,
        "%%agent --over words -m slow -o b --concurrency 4\nSHOUT: {{ item }} [[answer]]",
        "r = await b\nprint(r.status, '|', r.counts.get('not_started', 0) > 0, '|', r.rows[0].results)",
    ])
    open_notebook(page, lab, "batch.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell-batch")
    expect(widget).to_have_attribute("data-status", "running", timeout=30_000)
    first = widget.locator('tbody tr[data-index="0"]')
    expect(first).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(widget.locator(".agentcell-batch-counts")).to_contain_text("done")

    first.click()
    detail = widget.locator(".agentcell-batch-detail")
    expect(detail).to_be_visible()
    expect(detail.locator(".agentcell-batch-detail-title")).to_contain_text("Row 0 · item = ")  # names its input
    expect(detail.locator('.agentcell-answer[data-slot="answer"]')).to_contain_text("W000")

    widget.locator(".agentcell-batch-header .agentcell-stop").click()
    expect(widget).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(widget.locator(".agentcell-batch-counts")).to_contain_text("not started")
    screenshot(page, "batch-in-browser.png")
    # The saved twin (the batch as HTML, for readers without a kernel) is hidden next to the live view,
    # also once the row's run view (a view of its own inside the batch's) is closed.
    twin = cell(page, 1).locator(".agentcell-static")
    expect(twin).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(twin).to_be_hidden()
    widget.get_by_role("button", name="Close this row's run view").click()
    expect(detail).to_be_hidden()
    expect(twin).to_be_hidden()

    run_cell(page, 2)
    wait_cell_done(page, 2)
    out = cell(page, 2).locator(".jp-OutputArea-output").inner_text()
    assert out.strip() == "stopped | True | {'answer': 'W000'}"
    assert page.js_errors == []
