"""Re-record the cassettes the notebooks replay: `python notebooks/cassettes/record_cassettes.py`.

`module-question.json` is recorded from a scripted model written to behave like a real one (it thinks,
calls two tools in one round, then streams a Markdown answer), so the workshop's replay section runs
offline and deterministically. To record a real model instead, pass its name, e.g.
`python notebooks/cassettes/record_cassettes.py openai:gpt-4o-mini` (needs its API key). The template
and tools below must stay identical to the workshop notebook's replay cell, or replay diverges.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

from agentcell import complete_async, readonly
from agentcell import record

HERE = Path(__file__).resolve().parent
MODULES = {
    "PSYC605": "Cognition and Emotion, led by Dr Ada Byron",
    "PSYC612": "Research Methods, led by Prof Alan Turing",
}
ROOMS = {"PSYC605": "Fylde B12", "PSYC612": "Bowland LT3"}

TEMPLATE = """<system>You answer questions about university modules. Use the tools; be brief.</system>
Who leads PSYC605, and where is it taught?
[[answer|use_tools=true, max_iter=4]]"""


@readonly
def lookup_module(module_code: str) -> str:
    """Look a module up by its code. Returns its title and who leads it."""
    return MODULES.get(module_code, "no such module")


@readonly
def room_for(module_code: str) -> str:
    """The room a module is taught in (a slow lookup)."""
    time.sleep(0.5)
    return ROOMS.get(module_code, "unknown")


ANSWER = (
    "**PSYC605 — Cognition and Emotion** is led by **Dr Ada Byron**.\n\n"
    "It is taught in **Fylde B12**. If you need the timetable as well, ask and I will look it up."
)


async def realistic(messages, info: AgentInfo):
    """Round 1: think, then call both tools at once. Round 2: stream a short Markdown answer."""
    returned = isinstance(messages[-1], ModelRequest) and any(
        isinstance(p, ToolReturnPart) for p in messages[-1].parts)
    if info.function_tools and not returned:
        yield {99: DeltaThinkingPart(content="The question has two parts: who leads the module and where it "
                                             "is taught. Both lookups are independent, so I can ask for both.")}
        args = json.dumps({"module_code": "PSYC605"})
        yield {0: DeltaToolCall(name="lookup_module", json_args=args, tool_call_id="call_lookup"),
               1: DeltaToolCall(name="room_for", json_args=args, tool_call_id="call_room")}
        return
    yield {99: DeltaThinkingPart(content="I have both facts; answer in two sentences.")}
    for word in ANSWER.split(" "):
        yield word + " "


async def main(model_name: str | None) -> None:
    model = model_name or FunctionModel(stream_function=realistic, model_name="scripted-realistic")
    path = HERE / "module-question.json"
    result = await complete_async(TEMPLATE, model=record(path, model), tools=[lookup_module, room_for])
    print(result.status, "->", path)
    print(result.answer)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None))
