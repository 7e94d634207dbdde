"""The engine leans on two private pydantic-ai names (checked in 2.60–2.78); without them it still runs.

`_genai_prices.fill_response_cost` (a request's event carries its cost) and
`models._continuation.merge_responses` (a provider's suspended response is joined). A pydantic-ai release
that moves one must not stop every run: each is used where found and replaced where not. Checked in a
fresh process in which those names are absent.

Tools reach pydantic-ai through its public API (`toolsets=`, a capability's `get_wrapper_toolset`); the agent's
private `_function_toolset`, once replaced in place, is not touched anywhere in the package.
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
from agentcell.engine import slotmodel, start_run
from tests.tool_rounds import lookup, rounds_model

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


def test_no_private_attribute_of_the_agent_is_touched() -> None:
    """No module of the package reads or replaces the agent's own function toolset (or any `agent._...`)."""
    import re

    source = ROOT / "src" / "agentcell"
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted(source.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "_function_toolset" in line or re.search(r"\bagent\._[a-z]", line) or "setattr(agent" in line
    ]
    assert hits == [], hits
