"""The output-token ceiling, enforced by agentcell at O(1) per token (issue 18).

pydantic-ai checks a token limit after every streamed event; agentcell hands it no output-token
limit and counts itself (`engine/budget.py`'s `OutputMeter`), so these tests pin both the meaning
(a backstop that ends the slot `budget_exhausted`) and that pydantic-ai no longer gets the limit.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import UsageLimits

from agentcell.engine import complete_async, stream
from agentcell.engine.budget import OutputMeter, ceiling_from, slot_budget
from agentcell.errors import BudgetExhausted
from agentcell.events import SlotFailed, TokenDelta

from .conftest import slot, template

pytestmark = pytest.mark.anyio


def words(n: int) -> FunctionModel:
    async def fn(_messages: list[Any], _info: AgentInfo) -> Any:
        for i in range(n):
            yield f"w{i} "

    return FunctionModel(stream_function=fn)


def test_pydantic_ai_gets_no_output_token_limit() -> None:
    budget = slot_budget(ceiling_from(UsageLimits(output_tokens_limit=500)), slot="s", max_iter=None, max_calls=None)
    assert budget.limits.output_tokens_limit is None and budget.output_tokens == 500
    assert not budget.limits.has_token_limits()  # so pydantic-ai skips its per-event check entirely


def test_the_meter_counts_deltas_then_gives_way_to_the_provider() -> None:
    meter = OutputMeter(100)
    for _ in range(10):
        meter.add("four")  # one token a delta
    meter.add("")  # an empty delta is no token
    meter.add("x" * 40)  # a lower bound: still one
    assert meter.used == 11
    meter.settle(7)  # the provider said 7: its figure wins over the count
    assert (meter.reported, meter.streaming) == (7, 0)
    meter.add("abcdefgh")
    meter.add("ij")
    meter.settle(0)  # no usage reported: the count stays
    assert meter.used == 9
    with pytest.raises(Exception, match=r"Exceeded the output_tokens_limit of 100 \(output_tokens=101\)"):
        meter.settle(92)


async def test_a_runaway_answer_ends_the_slot_budget_exhausted_mid_stream() -> None:
    limits = UsageLimits(output_tokens_limit=50)
    events = [e async for e in stream(template(slot("answer")), model=words(10_000), limits=limits)]
    shown = "".join(e.text for e in events if isinstance(e, TokenDelta)).split()  # one word a token
    assert 40 <= len(shown) <= 50  # stopped at the ceiling, not after the whole answer
    failed = next(e for e in events if isinstance(e, SlotFailed))
    assert failed.status == "budget_exhausted"
    assert failed.error.startswith("slot 'answer' ran out of budget: Exceeded the output_tokens_limit of 50")
    assert events[-1].status == "budget_exhausted"
    with pytest.raises(BudgetExhausted, match="output_tokens_limit of 50"):
        await complete_async(template(slot("answer")), model=words(10_000), limits=limits)


async def test_a_ceiling_as_high_as_the_answer_lets_it_complete() -> None:
    events = [e async for e in stream(template(slot("answer")), model=words(200),
                                      limits=UsageLimits(output_tokens_limit=200))]
    assert events[-1].status == "completed"
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "".join(f"w{i} " for i in range(200))


async def test_tool_arguments_count_too() -> None:
    """Output tokens spent streaming tool arguments count against the ceiling, mid-stream."""

    async def fn(messages: list[Any], _info: AgentInfo) -> Any:
        yield {0: DeltaToolCall(name="echo", json_args='{"text": "', tool_call_id="c1")}
        for _ in range(500):
            yield {0: DeltaToolCall(json_args="xxxx")}
        yield {0: DeltaToolCall(json_args='"}')}

    model = FunctionModel(stream_function=fn)

    def echo(text: str) -> str:
        """Echo."""
        return "ok"

    with pytest.raises(BudgetExhausted, match="output_tokens_limit of 100") as raised:
        await complete_async(template(slot("answer", use_tools=True)), model=model, tools=[echo],
                             limits=UsageLimits(output_tokens_limit=100))
    assert raised.value.result.usage.tool_calls == 0  # ended before the call ran
