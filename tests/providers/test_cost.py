"""Cost in dollars against a real HTTP server: a priced model's cost is the one genai-prices computes, shown with
its digits live and in the saved view; an unpriced one is "—", never $0.00; `max_cost` ends a single run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from genai_prices import calc_price
from IPython.core.interactiveshell import InteractiveShell
from pydantic_ai.usage import RequestUsage
from traitlets.config import Config

from agentcell.engine import complete_async, start_run
from agentcell.events.json import to_wire
from agentcell.render.output import static_transcript
from agentcell.usage import format_cost
from tests.openai_server import Call, FakeOpenAI, Reply, Text, Usage

from .conftest import lookup_module

pytestmark = pytest.mark.anyio

PRICED = "gpt-4o-mini"


def compat(server: FakeOpenAI, name: str) -> str:
    return f"openai-compat:{name}@{server.base_url}"


def expected_cost(input_tokens: int, output_tokens: int) -> float:
    """What genai-prices charges for one gpt-4o-mini request on OpenAI (computed here, not copied)."""
    usage = RequestUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return float(calc_price(usage, PRICED, provider_id="openai").total_price)


async def test_a_priced_model_costs_what_genai_prices_computes_live_and_saved(server: FakeOpenAI) -> None:
    server.script(Reply(Text("Dr Ada Byron."), Usage(10, 5), model=PRICED))
    run = start_run("Who leads PSYC605? [[answer]]", model=compat(server, PRICED), journal=False)
    result = await run
    cost = expected_cost(10, 5)

    assert result.status == "completed", result.error
    assert cost > 0
    assert result.usage.cost == pytest.approx(cost)
    # live: what the widget reads as the run streams (the request's row and the run's usage total)
    wire = [to_wire(e, t=0.0) for e in run.events_so_far]
    rows = [w for w in wire if w["kind"] == "request_completed"]
    assert rows[0]["usage"]["cost"] == pytest.approx(cost)
    assert [w["usage"]["cost"] for w in wire if w["kind"] == "usage_updated"][-1] == pytest.approx(cost)
    # saved: the static view names the cost with its digits, not "$0.0000"
    saved = static_transcript(run.transcript)
    assert format_cost(cost) == "$0.0000045"
    assert "cost $0.0000045" in saved.text
    assert "$0.0000045" in saved.html
    assert "$0.0000 " not in saved.text


async def test_an_unpriced_model_shows_a_dash_never_zero_dollars(server: FakeOpenAI) -> None:
    server.script(Reply(Text("Dr Ada Byron."), Usage(10, 5), model="my-local-model"))
    run = start_run("Who leads PSYC605? [[answer]]", model=compat(server, "my-local-model"), journal=False)
    result = await run

    assert result.status == "completed", result.error
    assert result.usage.cost is None
    saved = static_transcript(run.transcript)
    assert "cost —" in saved.text
    assert "$0" not in saved.text
    assert "$0" not in saved.html


async def test_cost_limit_ends_a_single_run_before_its_next_request(server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"}), Usage(1000, 500), model=PRICED),
        Reply(Text("never sent"), Usage(10, 5), model=PRICED),
    )
    result = await start_run(
        "Who leads PSYC605? [[answer|use_tools=true]]", model=compat(server, PRICED), tools=[lookup_module],
        cost_limit=0.0001, journal=False,
    )

    assert result.status == "budget_exhausted"
    assert len(server.requests) == 1
    assert result.error == (
        f"slot 'answer' ran out of budget: The run's cost limit of $0.0001 is reached "
        f"({format_cost(expected_cost(1000, 500))} spent); raise it with cost_limit=USD"
    )


async def test_cost_limit_is_never_reached_by_an_unpriced_model(server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"}), Usage(1000, 500)),
        Reply(Text("Dr Ada Byron."), Usage(10, 5)),
    )
    result = await complete_async(
        "Who leads PSYC605? [[answer|use_tools=true]]", model=compat(server, "fake-model"), tools=[lookup_module],
        cost_limit=0.0001, journal=False,
    )
    assert result.status == "completed", result.error
    assert len(server.requests) == 2


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_JOURNAL", "0")
    config = Config()
    config.HistoryManager.enabled = False
    ip = InteractiveShell(config=config)
    ip.run_line_magic("load_ext", "agentcell")
    ip.user_ns["lookup_module"] = lookup_module
    yield ip
    ip.run_line_magic("agent", "stop")


def test_the_max_cost_flag_ends_a_single_cell_run_in_the_cells_words(shell: InteractiveShell, server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"}), Usage(1000, 500), model=PRICED),
        Reply(Text("never sent"), Usage(10, 5), model=PRICED),
    )
    line = f"-o r -q -t lookup_module --max-cost 0.0001 -m {compat(server, PRICED)}"
    shell.run_cell_magic("agent", line, "Who leads PSYC605?\n[[answer|use_tools=true]]")
    result: Any = shell.user_ns["r"]
    assert result.status == "budget_exhausted"
    assert result.error.endswith("raise it with --max-cost USD on the %%agent line")
    assert len(server.requests) == 1


def test_a_max_cost_of_zero_is_a_usage_error(shell: InteractiveShell) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match=r"--max-cost must be a positive number of US dollars, got 0.0"):
        shell.run_cell_magic("agent", "--max-cost 0", "Hi [[answer]]")
