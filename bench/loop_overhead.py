"""Loop overhead: the same scripted FunctionModel run through raw pydantic-ai and through agentcell.

Run: `/work/venv/bin/python bench/loop_overhead.py` (about 20 minutes on 2 cores, most of it the
100k-token stream: 5 variants x 4 runs of ~25 s; `--no-scaling --stream-reps 2` takes ~12 minutes,
`--only tools` ~6 minutes, `--quick` is a one-minute smoke run). Writes
`bench/results/loop_overhead.json` (`--only` replaces one scenario in it) and prints a table.

Scenarios (each a fresh FunctionModel per run, so the model's own cost is identical everywhere):

* `tools` — N rounds (default 200), one tool call each (an async tool returning a short string),
  then a one-word answer;
* `stream` — one round streaming T text tokens (default 100,000, `"t123 "` each).

Variants, interleaved in a shuffled order every repetition:

* `raw` — the baseline: `Agent(model, tools=[lookup]).run_stream_events(...)`, every event consumed;
* `raw-handler` — a second raw baseline: `agent.run(..., event_stream_handler=...)`, the mechanism the
  engine itself uses (`run_stream_events` adds a task and a memory stream per event on top of it);
* `engine` — `agentcell.engine.complete_async(...)` with the journal off (`journal=False`);
* `engine+journal` — the same with the journal on (a temp folder), which is the default for users;
* `engine-nocompact` — journal off and `compaction=None` (no context accounting/compaction pass);
  tools scenario only (in a one-request stream it has nothing to do);
* `widget` — the notebook path `agentcell.frontends.handle.launch(...)`: the engine (journal on, as by default)
  plus the consumer task feeding an `AgentWidget` whose `send` is captured (message count and bytes),
  until the widget has shown the end (final trait, static transcript).

Model paths (`--model`, default `both`; issue 18 asks for every loop figure on both):

* `function` — the scripted `FunctionModel` above (the model itself costs nothing);
* `openai` — pydantic-ai's real `OpenAIChatModel` (OpenAI SDK, httpx, SSE parsing, usage from the
  provider) against the scripted OpenAI-compatible server `tests/openai_server.py` on 127.0.0.1 (its
  own thread in this process), answering the same script: a tool call per round, then `done`; or the
  stream as `--tokens` content deltas. Scenario keys in the JSON get an `-openai` suffix.

Ratios are the median of per-repetition ratios against `raw`. A cProfile pass of the `widget`
variant (not timed) attributes the cost by package and names the top functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from pydantic_ai import Agent
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import UsageLimits

from agentcell.engine import complete_async
from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.options import RunOptions
from agentcell.template import compile_template

LIMITS = UsageLimits(request_limit=100_000, tool_calls_limit=100_000, output_tokens_limit=10**9)
TEMPLATE = "Go [[answer|use_tools]]"
JOURNAL_DIR = Path(tempfile.mkdtemp(prefix="agentcell-bench-journal-"))


def tool_model(rounds: int) -> FunctionModel:
    async def fn(messages: list[Any], info: AgentInfo) -> Any:
        k = (len(messages) - 1) // 2  # request, then (response, tool-return request) per round
        if k < rounds:
            yield {0: DeltaToolCall(name="lookup", json_args=json.dumps({"q": f"item {k}"}), tool_call_id=f"c{k}")}
        else:
            yield "done"

    return FunctionModel(stream_function=fn)


class OpenAIPath:
    """The scripted OpenAI-compatible server, and a fresh `OpenAIChatModel` pointed at it per run."""

    def __init__(self) -> None:
        from tests.openai_server import FakeOpenAI

        self.rounds = 0
        self.tokens = 0
        self.server = FakeOpenAI(default=self._answer).start()

    def _answer(self, body: dict[str, Any]) -> Any:
        from tests.openai_server import Call, Reply, Text

        if self.tokens:
            return Reply(Text("".join(f"t{i} " for i in range(self.tokens)), pieces=self.tokens))
        k = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        if k < self.rounds:
            return Reply(Call("lookup", {"q": f"item {k}"}, id=f"c{k}"))
        return Reply(Text("done"))

    def model(self, *, rounds: int = 0, tokens: int = 0) -> Any:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        self.rounds, self.tokens = rounds, tokens
        self.server.requests.clear()  # the server records every request; keep memory flat across runs
        return OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=self.server.base_url, api_key="x"))


def text_model(tokens: int) -> FunctionModel:
    async def fn(messages: list[Any], info: AgentInfo) -> Any:
        for i in range(tokens):
            yield f"t{i} "

    return FunctionModel(stream_function=fn)


async def lookup(q: str) -> str:
    """Look `q` up."""
    return f"result for {q}"


# ---- the variants ----------------------------------------------------------------------------


async def run_raw(model: FunctionModel) -> dict[str, float]:
    agent = Agent(model, tools=[lookup])
    events = 0
    async with agent.run_stream_events("Go", usage_limits=LIMITS) as stream:
        async for _ in stream:
            events += 1
    return {"events": events}


async def run_raw_handler(model: FunctionModel) -> dict[str, float]:
    agent = Agent(model, tools=[lookup])
    seen = 0

    async def handler(_ctx: Any, events: Any) -> None:
        nonlocal seen
        async for _ in events:
            seen += 1

    await agent.run("Go", usage_limits=LIMITS, event_stream_handler=handler)
    return {"events": seen}


async def run_engine(model: FunctionModel, *, journal: bool, compaction: bool = True) -> dict[str, float]:
    kwargs: dict[str, Any] = {} if compaction else {"compaction": None}
    result = await complete_async(TEMPLATE, model=model, tools=[lookup], limits=LIMITS,
                                  journal=JOURNAL_DIR if journal else False, **kwargs)
    assert result.status == "completed", result.error
    return {}


class Captured:
    messages = 0
    bytes = 0


def _capture_send(self: AgentWidget, content: dict[str, Any], buffers: Any = None) -> None:
    Captured.messages += 1
    Captured.bytes += len(json.dumps(content))


AgentWidget.send = _capture_send  # type: ignore[method-assign]  # bench only: count what would go on the wire


async def run_widget(model: FunctionModel) -> dict[str, float]:
    os.environ["AGENTCELL_JOURNAL"] = str(JOURNAL_DIR)  # the default (journal on), in a temp folder
    Captured.messages = Captured.bytes = 0
    options = RunOptions(model=model, tools=(lookup,), limits=LIMITS)
    spec = LaunchSpec(template=compile_template(TEMPLATE), options=options)
    handle = launch(spec)
    result = await handle
    assert result.status == "completed", result.error
    assert handle.widget is not None and handle.widget.status == "completed"
    return {"messages": Captured.messages, "bytes": Captured.bytes}


def variants_for(scenario: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "raw": run_raw,
        "raw-handler": run_raw_handler,
        "engine": lambda m: run_engine(m, journal=False),
        "engine+journal": lambda m: run_engine(m, journal=True),
        "engine-nocompact": lambda m: run_engine(m, journal=False, compaction=False),
        "widget": run_widget,
    }
    if scenario == "stream":
        del out["engine-nocompact"]
    return out


def measure(fn: Any, make_model: Any) -> dict[str, float]:
    model = make_model()
    extra, times = _common.timed(lambda: asyncio.run(fn(model)))
    return {**times, **extra}


# ---- attribution -----------------------------------------------------------------------------


def _package(filename: str) -> str:
    if "agentcell" in filename and "site-packages" not in filename:
        part = filename.split("agentcell/", 1)[-1]
        return "agentcell/" + part.split("/")[0].removesuffix(".py")
    for name in ("pydantic_ai", "pydantic_core", "pydantic", "anywidget", "ipywidgets", "traitlets", "json",
                 "asyncio", "anyio", "opentelemetry", "logfire", "typing_extensions", "cProfile", "genai_prices",
                 "dataclasses", "typing", "copy", "uuid", "contextlib", "functools", "weakref", "enum"):
        if f"/{name}/" in filename or filename.endswith(f"/{name}.py"):
            return name
    if filename.endswith("loop_overhead.py"):
        return "bench (scripted model)"
    if filename.startswith("~") or filename == "":
        return "builtins"
    return "other"


def profile(fn: Any, make_model: Any, out: Path, top: int = 18) -> dict[str, Any]:
    model = make_model()
    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(fn(model))
    prof.disable()
    prof.dump_stats(str(out))
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    by_package: dict[str, float] = defaultdict(float)
    rows = []
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        by_package[_package(filename)] += tottime
        rows.append((tottime, cumtime, ncalls, f"{Path(filename).name}:{line}({func})", filename))
    rows.sort(reverse=True)
    own = {f"{Path(fname).name}:{line}({func})": tt
           for (fname, line, func), (_cc, _n, tt, _cum, _c) in stats.stats.items()}  # type: ignore[attr-defined]
    cum_agentcell = sorted(
        ((cum, n, f"{fname.split('src/')[-1]}:{line}({func})")
         for (fname, line, func), (_cc, n, _tt, cum, _c) in stats.stats.items()  # type: ignore[attr-defined]
         if "/src/agentcell/" in fname),
        reverse=True,
    )
    return {
        "profile_file": str(out.relative_to(_common.ROOT)),
        "total_tottime_s": round(total, 3),
        "share_by_package": {k: round(v / total, 3) for k, v in sorted(by_package.items(), key=lambda kv: -kv[1])},
        "top_tottime": [{"tottime_s": round(t, 4), "cumtime_s": round(c, 4), "calls": n, "function": f}
                        for t, c, n, f, _ in rows[:top]],
        "_own": own,
        "top_agentcell_cumtime": [{"cumtime_s": round(c, 4), "calls": n, "function": f}
                                  for c, n, f in cum_agentcell[:top]],
    }


def scaling(tokens: int, machine: _common.Machine) -> list[dict[str, Any]]:
    """Cost per token against stream length (1/8, 1/4, 1/2 of `tokens`): flat is linear, rising is not."""
    sizes = [tokens // 8, tokens // 4, tokens // 2]
    names = {"raw-handler": run_raw_handler, "engine": lambda m: run_engine(m, journal=False),
             "widget": run_widget}
    out = []
    for size in sizes:
        samples = _common.interleaved(
            {name: (lambda fn=fn, size=size: measure(fn, lambda: text_model(size))) for name, fn in names.items()},
            reps=1, warmup=0, on_rep=lambda _r: machine.sample())
        os.environ["AGENTCELL_JOURNAL"] = "off"
        row: dict[str, Any] = {"tokens": size}
        for name in names:
            row[f"{name}_us_per_token"] = round(samples[name][0]["wall"] / size * 1e6, 1)
        out.append(row)
        print(f"  scaling {size:>7} tokens: " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "tokens"),
              flush=True)
    return out


# ---- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=200, help="tool rounds in the `tools` scenario")
    parser.add_argument("--tokens", type=int, default=100_000, help="tokens in the `stream` scenario")
    parser.add_argument("--reps", type=int, default=15, help="repetitions of the `tools` scenario")
    parser.add_argument("--stream-reps", type=int, default=3, help="repetitions of the `stream` scenario")
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions (a smoke run)")
    parser.add_argument("--only", choices=("tools", "stream"),
                        help="run one scenario and replace it in an existing results file")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--no-scaling", action="store_true", help="skip the per-token cost vs stream length table")
    parser.add_argument("--model", choices=("function", "openai", "both"), default="both",
                        help="the scripted FunctionModel, OpenAIChatModel against the local fake server, or both")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.tokens, args.reps, args.stream_reps = 30, 8_000, 2, 2
    os.environ["AGENTCELL_JOURNAL"] = "off"
    machine = _common.Machine()
    scenarios: dict[str, Any] = {}
    if args.model in ("function", "both"):
        scenarios["tools"] = (lambda: tool_model(args.rounds), args.reps, f"{args.rounds} rounds x 1 tool call")
        scenarios["stream"] = (lambda: text_model(args.tokens), args.stream_reps, f"1 round, {args.tokens:,} tokens")
    if args.model in ("openai", "both"):
        path = OpenAIPath()
        scenarios["tools-openai"] = (lambda: path.model(rounds=args.rounds), args.reps,
                                     f"{args.rounds} rounds x 1 tool call, OpenAIChatModel + local server")
        scenarios["stream-openai"] = (lambda: path.model(tokens=args.tokens), args.stream_reps,
                                      f"1 round, {args.tokens:,} tokens, OpenAIChatModel + local server")
    if args.only:
        scenarios = {k: v for k, v in scenarios.items() if k.split("-")[0] == args.only}
    payload: dict[str, Any] = {"benchmark": "loop_overhead", "command": " ".join(["python", *sys.argv]),
                               "scenarios": {}}
    previous = _common.RESULTS / "loop_overhead.json"
    if args.only and previous.exists():
        payload = json.loads(previous.read_text())
        payload.setdefault("reruns", []).append({"command": " ".join(["python", *sys.argv]), "scenario": args.only})
    rows = []
    for scenario, (make, reps, label) in scenarios.items():
        variants = variants_for(scenario.split("-")[0])

        def runner(fn: Any, make: Any = make) -> Any:
            return lambda: measure(fn, make)

        def progress(rep: int, scenario: str = scenario, reps: int = reps) -> None:
            machine.sample()
            print(f"  {scenario}: repetition {rep + 1}/{reps + 1} done (the first is a warm-up)", flush=True)

        samples = _common.interleaved({name: runner(fn) for name, fn in variants.items()}, reps=reps,
                                      warmup=1, on_rep=progress)
        os.environ["AGENTCELL_JOURNAL"] = "off"
        result: dict[str, Any] = {"label": label, "reps": reps, "variants": {}}
        for name in variants:
            wall = _common.median(s["wall"] for s in samples[name])
            cpu = _common.median(s["cpu"] for s in samples[name])
            entry = {
                "median_wall_s": round(wall, 4),
                "median_cpu_s": round(cpu, 4),
                "ratio_wall_vs_raw": round(_common.paired_ratio(samples, name, "raw", "wall"), 4),
                "ratio_cpu_vs_raw": round(_common.paired_ratio(samples, name, "raw", "cpu"), 4),
                "ratio_wall_vs_raw_handler": round(_common.paired_ratio(samples, name, "raw-handler", "wall"), 4),
                "samples": samples[name],
            }
            if name == "widget":
                entry["comm_messages"] = samples[name][-1]["messages"]
                entry["comm_bytes"] = samples[name][-1]["bytes"]
            result["variants"][name] = entry
            rows.append([scenario, name, wall, cpu, f"x{entry['ratio_wall_vs_raw']:.3f}",
                         f"x{entry['ratio_cpu_vs_raw']:.3f}", f"x{entry['ratio_wall_vs_raw_handler']:.3f}",
                         entry.get("comm_messages", "")])
        journal_share = _common.paired_ratio(samples, "engine+journal", "engine", "wall") - 1
        result["journal_share_of_engine_wall"] = round(journal_share, 4)
        result["journal_share_of_engine_cpu"] = round(
            _common.paired_ratio(samples, "engine+journal", "engine", "cpu") - 1, 4)
        if not args.no_profile:
            out = _common.RESULTS / f"loop_overhead_{scenario}.prof"
            _common.RESULTS.mkdir(parents=True, exist_ok=True)
            result["profile_widget"] = profile(run_widget, make, out)
            result["profile_raw"] = profile(run_raw_handler, make,
                                            _common.RESULTS / f"loop_overhead_{scenario}_raw.prof")
            mine, base = result["profile_widget"].pop("_own"), result["profile_raw"].pop("_own")
            delta = sorted(((mine.get(k, 0.0) - base.get(k, 0.0), k) for k in set(mine) | set(base)), reverse=True)
            result["profile_delta_widget_minus_raw_handler"] = [
                {"extra_tottime_s": round(d, 4), "function": k} for d, k in delta[:20]]
            os.environ["AGENTCELL_JOURNAL"] = "off"
        payload["scenarios"][scenario] = result
    if not args.no_scaling and "stream" in scenarios:
        payload["stream_scaling"] = scaling(args.tokens, machine)
    if args.only and "machine" in payload:
        payload[f"machine_{args.only}_rerun"] = machine.facts()
    else:
        payload["machine"] = machine.facts()
    path = _common.write_results("loop_overhead", payload)
    print(_common.table(rows, ["scenario", "variant", "wall s", "cpu s", "wall/raw", "cpu/raw", "wall/raw-handler",
                                "comm msgs"]))
    for scenario, result in payload["scenarios"].items():
        if scenario not in scenarios:
            continue
        print(f"\n{scenario}: journal adds {result['journal_share_of_engine_wall']:+.1%} to the engine's wall time "
              f"({result.get('journal_share_of_engine_cpu', float('nan')):+.1%} CPU)")
        prof = result.get("profile_widget")
        if prof:
            shares = ", ".join(f"{k} {v:.0%}" for k, v in list(prof["share_by_package"].items())[:8])
            print(f"  widget-path profile by package (tottime): {shares}")
            for row in prof["top_agentcell_cumtime"][:8]:
                print(f"    {row['cumtime_s']:8.3f}s cum  {row['calls']:>7}  {row['function']}")
            print("  largest extra self-time vs raw-handler (one profiled run each):")
            for row in result["profile_delta_widget_minus_raw_handler"][:12]:
                print(f"    {row['extra_tottime_s']:+8.3f}s  {row['function']}")
    print(f"\nload average (1 min) during the run: {[load[0] for load in machine.loads if load]}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
