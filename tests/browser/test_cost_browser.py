"""A run against the local OpenAI-compatible server under a priced model name shows its cost in dollars — the one
genai-prices computes — live in the widget header and in the saved view; an unpriced model shows "—"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from genai_prices import calc_price
from pydantic_ai.usage import RequestUsage

from agentcell.usage import cost_exact, format_cost
from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done
from tests.openai_server import FakeOpenAI, Reply, Text, Usage

pytestmark = pytest.mark.browser
expect = sync_api.expect


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def test_a_priced_run_shows_its_dollar_cost_live_and_saved_and_an_unpriced_one_a_dash(
    lab: Lab, page: Any, server: FakeOpenAI
) -> None:
    server.script(
        Reply(Text("Dr Ada Byron leads PSYC605.", pieces=4), Usage(10, 5), model="gpt-4o-mini"),
        Reply(Text("Dr Ada Byron leads PSYC605.", pieces=4), Usage(10, 5), model="my-local-model"),
    )
    cost = float(calc_price(RequestUsage(input_tokens=10, output_tokens=5), "gpt-4o-mini", provider_id="openai").total_price)
    shown = format_cost(cost)
    assert cost > 0 and shown == "$0.0000045"
    lab.write_notebook("cost.ipynb", [
        "%load_ext agentcell",
        f"%%agent -m openai-compat:gpt-4o-mini@{server.base_url}\nWho leads PSYC605? [[answer]]",
        f"%%agent -m openai-compat:my-local-model@{server.base_url}\nWho leads PSYC605? [[answer]]",
    ])
    open_notebook(page, lab, "cost.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    priced = cell(page, 1).locator(".agentcell")
    expect(priced).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(priced.locator(".agentcell-cost")).to_have_text(f"cost {shown}")
    expect(priced.locator(".agentcell-cost")).to_have_attribute("title", f"cost of the whole run: {cost_exact(cost)}")
    assert float(priced.locator(".agentcell-cost").get_attribute("data-cost") or "nan") == pytest.approx(cost)
    run_cell(page, 2)
    unpriced = cell(page, 2).locator(".agentcell")
    expect(unpriced).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(unpriced.locator(".agentcell-cost")).to_have_text("cost —")
    screenshot(page, "cost-live.png")

    # The saved view: the static twin each run writes beside its live view, as the notebook file keeps it.
    for i in (1, 2):
        expect(cell(page, i).locator(".agentcell-static")).to_have_attribute("data-status", "completed")
    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    saved = nbformat.read(lab.root / "cost.ipynb", as_version=4)
    priced_out = next(o for o in saved.cells[1].outputs if "text/html" in o.get("data", {}))
    unpriced_out = next(o for o in saved.cells[2].outputs if "text/html" in o.get("data", {}))
    assert f"cost {shown}" in priced_out.data["text/plain"] and f"cost {shown}" in priced_out.data["text/html"]
    assert priced_out.metadata["agentcell"]["usage"]["cost"] == pytest.approx(cost)
    assert "cost —" in unpriced_out.data["text/plain"] and "$0" not in unpriced_out.data["text/html"]
    assert page.js_errors == []
