"""The engine leans on three private pydantic-ai names (checked in 2.60–2.68); without them it still runs.

`Agent._function_toolset` (the slot's tool wrapper goes in place of the agent's own toolset),
`_genai_prices.fill_response_cost` (a request's event carries its cost) and
`models._continuation.merge_responses` (a provider's suspended response is joined). A pydantic-ai release
that moves one must not stop every run: each is used where found and replaced where not. Checked in a
fresh process in which those names are absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, sys
import pydantic_ai  # imported first: only agentcell's own imports of the private modules are refused
for name in ("pydantic_ai._genai_prices", "pydantic_ai.models._continuation"):
    sys.modules[name] = None  # `import` of it now raises ImportError
from pydantic_ai.usage import UsageLimits
from agentcell.engine import agents, slotmodel, start_run
from tests.tool_rounds import lookup, rounds_model

agents.OWN_TOOLSET = "_not_there"  # as if pydantic-ai kept the agent's function toolset elsewhere
assert slotmodel.fill_response_cost.__module__ == "agentcell.engine.slotmodel"
assert slotmodel.merge_responses.__module__ == "agentcell.engine.slotmodel"

async def main():
    run = start_run("Go [[answer|use_tools]]", model=rounds_model(3), tools=[lookup],
                    limits=UsageLimits(request_limit=20), journal=False)
    result = await run.wait()
    tools = sum(event.kind == "tool_completed" for event in run.events_so_far)  # SlotCalls emits these
    print(result.status, result.results["answer"], tools)

asyncio.run(main())
"""


def test_a_run_with_tools_works_without_the_private_names() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": f"{ROOT}:{ROOT / 'src'}", "PATH": "/usr/bin:/bin", "AGENTCELL_JOURNAL": "off"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["completed", "done", "3"], done.stdout
