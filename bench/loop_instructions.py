"""One loop-overhead variant, for counting its instructions under valgrind (load-independent).

Run: `valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/loop_instructions.py VARIANT ROUNDS [MODEL]`
for VARIANT in `raw` (raw pydantic-ai `agent.run` + `event_stream_handler`), `engine` (journal off) and
`widget` (the notebook path, journal on), ROUNDS 0 (start-up and a 5-round warm-up only) and 200, and
MODEL `function` (the scripted `FunctionModel`, the default) or `openai` (pydantic-ai's `OpenAIChatModel`
against the OpenAI-compatible fixture server on 127.0.0.1, which runs in a child process that valgrind
does not follow: only the client side is counted). valgrind prints `Collected : N` instructions. A
variant's cost is N(ROUNDS) − N(0); machine load does not change it, so before/after and variant/raw
ratios hold on a busy machine (bench/results/HISTORY-sessions-1-17.md §1d).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["AGENTCELL_JOURNAL"] = "off"

import loop_overhead as lo

VARIANTS = {
    "raw": lo.run_raw_handler,
    "engine": lambda m: lo.run_engine(m, journal=False),
    "widget": lo.run_widget,
}


def _serve() -> None:
    """The child: the fixture server answering the tool-round script, the round count read from the model name."""
    import time

    from tests.openai_server import Call, FakeOpenAI, Reply, Text

    def answer(body: dict[str, Any]) -> Any:
        rounds = int(str(body.get("model", "fake-0")).rsplit("-", 1)[-1])
        k = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        return Reply(Call("lookup", {"q": f"item {k}"}, id=f"c{k}")) if k < rounds else Reply(Text("done"))

    server = FakeOpenAI(default=answer).start()
    print(server.base_url, flush=True)
    while True:
        time.sleep(3600)


class _OpenAI:
    """`OpenAIChatModel`s pointed at a fixture server in a child process."""

    def __init__(self) -> None:
        root = Path(__file__).resolve().parent.parent
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "src")])}
        self.child = subprocess.Popen([sys.executable, __file__, "serve"], stdout=subprocess.PIPE, text=True, env=env)
        assert self.child.stdout is not None
        self.base_url = self.child.stdout.readline().strip()

    def model(self, rounds: int) -> Any:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        return OpenAIChatModel(f"fake-{rounds}", provider=OpenAIProvider(base_url=self.base_url, api_key="x"))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        _serve()
    variant, rounds = sys.argv[1], int(sys.argv[2])
    path = sys.argv[3] if len(sys.argv) > 3 else "function"
    openai = _OpenAI() if path == "openai" else None
    try:
        make = openai.model if openai is not None else lo.tool_model
        asyncio.run(VARIANTS[variant](make(5)))
        if rounds:
            asyncio.run(VARIANTS[variant](make(rounds)))
    finally:
        if openai is not None:
            openai.child.kill()
