"""A scripted model that calls one tool for a fixed number of rounds, then answers: the workload of the
call-count tests (`tests/engine/test_round_costs.py`, `tests/longrun/test_linear_costs.py`)."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


def rounds_model(rounds: int) -> FunctionModel:
    """Calls `lookup` once a round for `rounds` rounds (a fresh argument and call id each), then says "done"."""

    async def fn(messages: list[Any], _info: AgentInfo) -> Any:
        k = (len(messages) - 1) // 2  # the prompt, then (response, tool results) per round
        if k < rounds:
            yield {0: DeltaToolCall(name="lookup", json_args=json.dumps({"q": f"item {k}"}), tool_call_id=f"c{k}")}
        else:
            yield "done"

    return FunctionModel(stream_function=fn)


async def lookup(q: str) -> str:
    """Look `q` up."""
    return f"result for {q}"
