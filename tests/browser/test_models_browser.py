"""Scores per model in JupyterLab + Chromium: `--models a,b --over rows --expect` shows the model-selection
table with each model's exact pass rate and each row's marks side by side; the saved twin is hidden beside it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done

pytestmark = pytest.mark.browser
expect = sync_api.expect

SETUP = """%load_ext agentcell
import asyncio, re
from pydantic_ai.models.function import FunctionModel

def scripted(right, name):
    async def stream(messages, info):
        qid = int(re.search(r"Question (\\d+)", messages[-1].parts[-1].content).group(1))
        await asyncio.sleep(0.01)
        yield str(2 * qid) if qid in right else str(2 * qid + 1)
    return FunctionModel(stream_function=stream, model_name=name)

qs = [{"qid": i, "gold": str(2 * i)} for i in range(30)]
a = scripted({i for i in range(30) if i % 3 != 2}, "a")  # right on 20
b = scripted(set(range(6, 30)), "b")  # right on 24"""


def test_the_model_selection_table_shows_each_models_pass_rate(lab: Lab, page: Any) -> None:
    lab.write_notebook("models.ipynb", [
        SETUP, "%%agent --over qs --models a,b --expect answer=gold -o c\nQuestion {{ qid }}: double it [[answer]]"])
    open_notebook(page, lab, "models.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    view = cell(page, 1).locator(".agentcell-models")
    expect(view).to_have_attribute("data-status", "completed", timeout=60_000)
    rows = view.locator(".agentcell-models-selection tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("20/30 (66.7%)")
    expect(rows.nth(1)).to_contain_text("24/30 (80.0%)")
    expect(rows.nth(1)).to_have_attribute("data-best", "true")  # b has the best pass rate
    row2 = view.locator('.agentcell-models-rows tbody tr[data-row="2"]')
    expect(row2.locator('[data-model="a"]')).to_have_text("✗ 5")
    expect(row2.locator('[data-model="b"]')).to_have_text("✗ 5")
    view.get_by_label("show rows").select_option("disagree")
    expect(view.locator(".agentcell-models-rows tbody tr")).to_have_count(len(
        [i for i in range(30) if (i % 3 != 2) != (i >= 6)]))
    twin = cell(page, 1).locator(".agentcell-static").first
    expect(twin).to_have_attribute("data-status", "completed", timeout=10_000)
    expect(twin).to_be_hidden()
    screenshot(page, "models-in-browser.png")
    assert page.js_errors == []
