"""MCP tool calls: agentcell's per-call cost next to pydantic-ai's own MCP client, and a server's start time.

Both variants run the same scripted model (`FunctionModel`: one `get_current_time` call per round, each with
another time zone, ROUNDS rounds, then an answer) against the same server command (PyPI's `mcp-server-time`,
stdio), each with its server started once and kept for every repetition (as a notebook does):

* `raw`: `pydantic_ai.Agent(toolsets=[MCPToolset(StdioTransport(...))])`, `agent.run_stream_events(...)` drained
  (agentcell streams too), with the toolset entered once;
* `agentcell`: `agentcell.complete_async(template, toolsets=[agentcell.mcp(...)])` (journal off);
* `engine_only`: the same call with pydantic-ai's `MCPToolset` (the raw variant's) in `toolsets=`, which splits
  the ratio into the engine's own per-round cost and that of `agentcell.mcp`'s layer.

Per call = run wall time / ROUNDS; the ratio is the median of per-repetition ratios (interleaved, shuffled).
Also per call: this process's CPU time (`time.process_time`; the server is a child process, not counted), whose
ratio a busy machine spoils less than wall time's.
Start time: spawn → tool list, for `registry.ensure` (agentcell) and `MCPToolset.__aenter__` + `list_tools`
(raw), each on a fresh process. `python bench/mcp_calls.py [--reps N] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import zoneinfo
from pathlib import Path
from typing import Any

from _common import interleaved, load_average, median, paired_ratio, table, versions, write_results

COMMAND = [sys.executable, "-m", "mcp_server_time"]
ZONES = sorted(zoneinfo.available_timezones() - {"Factory", "localtime"})[:200]


def scripted(rounds: int) -> Any:
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    async def play(messages: list[Any], info: Any) -> Any:
        done = sum(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", ()))
        if done < rounds:
            zone = ZONES[done % len(ZONES)]  # a new argument each round: no identical-call cache, no loop nudge
            yield {0: DeltaToolCall(name="get_current_time", json_args=json.dumps({"timezone": zone}),
                                    tool_call_id=f"c{done}")}
        else:
            yield "done"

    return FunctionModel(stream_function=play, model_name="bench-mcp")


async def start_raw() -> tuple[Any, float]:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    log = Path(tempfile.mkdtemp()) / "raw.stderr"
    toolset = MCPToolset(StdioTransport(COMMAND[0], COMMAND[1:], log_file=log, keep_alive=True), init_timeout=60)
    t0 = time.perf_counter()
    await toolset.__aenter__()
    await toolset.list_tools()
    return toolset, time.perf_counter() - t0


async def start_agentcell(name: str) -> tuple[Any, float]:
    import agentcell
    from agentcell.mcp_servers import registry

    tools = agentcell.mcp(" ".join(COMMAND), name=name, env={"BENCH_SERVER": name})  # env: a server of its own
    t0 = time.perf_counter()
    await registry.ensure(tools.spec)
    return tools, time.perf_counter() - t0


class Variants:
    """The variants' shared set-up on `loop` (this file's and `mcp_instructions.py`'s): the scripted model, both
    servers started once, the raw agent, the template and its limits. `run(variant)` is one run of `rounds`
    rounds, its answer checked."""

    def __init__(self, loop: asyncio.AbstractEventLoop, rounds: int) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.usage import UsageLimits

        import agentcell

        self.loop = loop
        self.model = scripted(rounds)
        self.raw_toolset, _ = loop.run_until_complete(start_raw())
        self.ours, _ = loop.run_until_complete(start_agentcell("time"))
        self.agent = Agent(self.model, toolsets=[self.raw_toolset])
        self.limits = UsageLimits(request_limit=rounds + 5, tool_calls_limit=rounds + 5)
        self.template = agentcell.compile_template(
            "What time is it? [[answer|use_tools=true, max_iter=100, max_calls=100]]")
        self._complete = agentcell.complete_async

    async def _streamed(self) -> Any:
        async with self.agent.run_stream_events("What time is it?") as events:
            async for event in events:
                last = event
        return last.result.output

    def run(self, variant: str) -> None:
        """`raw`: pydantic-ai's agent drained; `agentcell` / `engine_only`: the engine with `agentcell.mcp`'s
        toolset / with the raw variant's `MCPToolset`."""
        if variant == "raw":
            assert self.loop.run_until_complete(self._streamed()) == "done"
            return
        toolset = self.ours if variant == "agentcell" else self.raw_toolset
        result = self.loop.run_until_complete(self._complete(self.template, model=self.model, toolsets=[toolset],
                                                             journal=False, limits=self.limits))
        assert result.answer == "done", result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()

    from agentcell.mcp_servers import registry

    loop = asyncio.new_event_loop()
    variants = Variants(loop, args.rounds)
    raw_toolset = variants.raw_toolset

    def timed(run: Any) -> dict[str, float]:
        """Wall and this process's CPU time per call (the server is a child process: its CPU is not counted)."""
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        return {"per_call_ms": (time.perf_counter() - t0) / args.rounds * 1000,
                "cpu_ms": (time.process_time() - c0) / args.rounds * 1000}

    def raw() -> dict[str, float]:
        return timed(lambda: variants.run("raw"))

    def through_agentcell() -> dict[str, float]:
        return timed(lambda: variants.run("agentcell"))

    def agentcell_pydantic_client() -> dict[str, float]:
        return timed(lambda: variants.run("engine_only"))

    loads = [load_average()]
    samples = interleaved({"raw": raw, "agentcell": through_agentcell,
                           "engine_only": agentcell_pydantic_client}, reps=args.reps)
    loads.append(load_average())
    ratio = paired_ratio(samples, "agentcell", "raw", "per_call_ms")
    engine = paired_ratio(samples, "engine_only", "raw", "per_call_ms")
    layer = paired_ratio(samples, "agentcell", "engine_only", "per_call_ms")
    cpu = paired_ratio(samples, "agentcell", "raw", "cpu_ms")
    engine_cpu = paired_ratio(samples, "engine_only", "raw", "cpu_ms")

    starts: dict[str, list[float]] = {"raw": [], "agentcell": []}
    for i in range(args.starts):
        toolset, seconds = loop.run_until_complete(start_raw())
        starts["raw"].append(seconds)
        loop.run_until_complete(toolset.__aexit__(None, None, None))
        loop.run_until_complete(toolset.client.transport.close())
        _, seconds = loop.run_until_complete(start_agentcell(f"start{i}"))
        starts["agentcell"].append(seconds)
        loop.run_until_complete(registry.stop(f"start{i}"))

    loop.run_until_complete(raw_toolset.__aexit__(None, None, None))
    loop.run_until_complete(raw_toolset.client.transport.close())
    loop.run_until_complete(registry.stop())
    loop.close()

    rows = [
        ["per call, raw pydantic-ai MCPToolset (ms)", median(s["per_call_ms"] for s in samples["raw"])],
        ["per call, through agentcell (ms)", median(s["per_call_ms"] for s in samples["agentcell"])],
        ["per call, agentcell engine with pydantic-ai's MCPToolset (ms)",
         median(s["per_call_ms"] for s in samples["engine_only"])],
        ["agentcell / raw (median of paired ratios)", ratio],
        ["  of which the engine: engine_only / raw", engine],
        ["  of which agentcell.mcp: agentcell / engine_only", layer],
        ["CPU per call, raw / agentcell / engine_only (ms, median)",
         " / ".join(f"{median(s['cpu_ms'] for s in samples[k]):.3f}" for k in ("raw", "agentcell", "engine_only"))],
        ["CPU: agentcell / raw; engine_only / raw (median of paired ratios)", f"{cpu:.3f}; {engine_cpu:.3f}"],
        ["server start → tool list, raw (s, median)", median(starts["raw"])],
        ["server start → tool list, agentcell (s, median)", median(starts["agentcell"])],
    ]
    print(table(rows, ["measure", "value"]))
    print(f"load average before / after the calls: {loads[0]} / {loads[1]}")
    path = write_results("mcp_calls", {"versions": versions(), "reps": args.reps, "rounds": args.rounds,
                                       "samples": samples, "starts": starts, "ratio": ratio,
                                       "engine_ratio": engine, "mcp_layer_ratio": layer,
                                       "cpu_ratio": cpu, "engine_cpu_ratio": engine_cpu,
                                       "load_average": loads})
    print(f"written: {path}")


if __name__ == "__main__":
    main()
