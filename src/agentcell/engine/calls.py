"""Running one slot's tool calls: events, guard joins, the identical-call cache, errors as strings,
timeouts, `max_calls` and loop detection.

Every toolset of the slot's agent (its own tools and the run's `toolsets=`) is wrapped, per run, in a
toolset that finds the run's `SlotCalls` per step and per call (`agents.SlotToolset`), so pydantic-ai
still owns schemas, argument validation, concurrency (`sequential` tools excepted) and approvals. A tool
of the run's `toolsets=` gets its policy from its definition when it is offered (`toolbox.foreign_policy`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ToolFailed
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.tools import DeferredToolResults, ToolDenied
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import to_jsonable_python

from ..events import ToolCompleted, ToolsListed, ToolStarted
from ..tools import ToolPolicy
from .budget import SlotBudget
from .lesson import InjectedCall, injected_timeout, labelled
from .media import ToolMedia, announce, tool_result
from .results import convert_result
from .state import RunState, SlotEnded
from .toolbox import foreign_policy, offered_tool
from .tooltask import Outcome, execute, run_isolated

NUDGE = (
    "[agentcell] You made exactly the same calls as in your previous round and got the same results. "
    "Answer with what you have, or try something different."
)


def _canonical(value: Any) -> str:
    return json.dumps(to_jsonable_python(value, fallback=repr), sort_keys=True, ensure_ascii=False)


def _converted(value: Any) -> Outcome:
    """The tool's value made JSON-safe, bounded and valid UTF-8 (`results.py`), before the call is shown done;
    a picture or a table was already made what the model reads (`media.py`)."""
    if isinstance(value, ToolMedia):
        return Outcome(ok=True, value=value.for_model, text=value.text, media=value.media)
    result = convert_result(value)
    return Outcome(ok=True, value=result.value, text=result.text, replaced=result.replaced)


def _described(name: str, tool: ToolsetTool[Any], server: object) -> dict[str, Any]:
    """A toolset tool as `RunStarted.tool_schemas` describes a notebook tool, with its MCP server if it has one."""
    out: dict[str, Any] = {"name": name, "description": tool.tool_def.description or "",
                           "parameters_json_schema": to_jsonable_python(tool.tool_def.parameters_json_schema,
                                                                        fallback=repr)}
    if isinstance(server, str):
        out["server"] = server
    return out


class SlotCalls:
    """Per-slot call state; a second slot starts with a fresh one (nothing cached between slots)."""

    def __init__(
        self,
        state: RunState,
        slot: str,
        policies: Mapping[str, ToolPolicy],
        budget: SlotBudget,
        *,
        foreign: bool = False,
        allowed: frozenset[str] | None = None,
    ) -> None:
        """`policies`: the slot's own tools (the registry's). `foreign`: the agent also has the run's `toolsets=`,
        whose tools are adopted as offered; `allowed`: the slot's `tools=` names, which restrict those too."""
        self._state = state
        self._slot = slot
        self._policies = dict(policies)
        self._own = frozenset(policies)
        self._foreign = foreign
        self._allowed = allowed
        self._budget = budget
        self._cache: dict[str, asyncio.Future[Outcome]] = {}
        self._calls = 0
        self._tool_free_steps: set[int] = set()
        self._repeats_by_step: dict[int, int] = {}
        self._last_round: tuple[tuple[str, str], ...] | None = None
        self._repeats = 0
        self._refused: set[str] = set()
        self._servers: dict[str, str] = {}
        """Tool name → the MCP server it comes from (shown on its tool card)."""
        self._listed: set[str] = set()
        """Toolset tools already described to the views (`ToolsListed`), once per slot."""
        self._deferred: dict[str, tuple[str, int]] = {}
        """Shown calls the toolset deferred from inside (`ApprovalRequired`): call id → (tool, round)."""

    def tools_allowed(self, step: int) -> bool:
        """False for the request that must answer: last of `max_iter`, `max_calls` spent, or a loop."""
        max_iter, max_calls = self._budget.max_iter, self._budget.max_calls
        if max_iter is not None and step >= max_iter:
            return False
        if max_calls is not None and self._calls >= max_calls:
            return False
        return step not in self._tool_free_steps

    def offered(self, tools: dict[str, ToolsetTool[Any]]) -> dict[str, ToolsetTool[Any]]:
        """The tools pydantic-ai assembled for a step, as the model may see them.

        The slot's own tools pass unchanged. A tool of the run's `toolsets=` gets its policy from its
        definition (`toolbox.foreign_policy`), so its calls are timed out, guarded and approved like the
        slot's own; a slot's `tools=` list restricts them as it restricts the registry's."""
        if not self._foreign:
            return tools
        shown: dict[str, ToolsetTool[Any]] = {}
        listed: list[dict[str, Any]] = []
        for name, tool in tools.items():
            if name in self._own:
                shown[name] = tool
            elif tool.tool_def.kind == "external":
                self._refuse_external(name)
            elif self._allowed is None or name in self._allowed:
                policy = foreign_policy(tool.tool_def, approve_writes=self._state.approve_writes)
                self._policies[name] = policy
                server = (tool.tool_def.metadata or {}).get("mcp_server")
                if isinstance(server, str):
                    self._servers[name] = server
                shown[name] = offered_tool(tool, policy)
                if name not in self._listed:
                    self._listed.add(name)
                    listed.append(_described(name, tool, server))
        if listed:
            self._state.emit(ToolsListed(run_id=self._state.run_id, slot=self._slot, tool_schemas=tuple(listed)))
        return shown

    def server_of(self, name: str) -> str | None:
        """The MCP server the tool `name` comes from (`None` for any other tool): the approval card names it."""
        return self._servers.get(name)

    def _refuse_external(self, name: str) -> None:
        """An external tool's calls are left to the caller of the agent run, which a slot has none for."""
        if name not in self._refused:  # warned once per slot
            self._refused.add(name)
            self._state.warn(
                self._slot,
                f"the toolset tool {name!r} is external (its calls are deferred to whoever runs the agent), "
                "which a run has no way to answer; it is not offered to the model",
            )

    def poll_guards(self) -> None:
        """Settle guards that already finished (raises `GuardTrip` on a trip)."""
        self._state.guards.poll()

    async def call(
        self, name: str, args: dict[str, Any], ctx: RunContext[Any], run: Callable[[], Awaitable[Any]]
    ) -> Any:
        policy = self._policies.get(name, ToolPolicy())
        if policy.readonly:
            self._state.guards.poll()
        else:
            await self._state.guards.join()  # never run a side effect on input a guard may reject
        repeated = self._note_round(ctx)
        call_id, step = ctx.tool_call_id or "", ctx.run_step
        lesson = self._state.lesson
        if lesson is not None:  # a step pause before the call: nothing runs meanwhile
            await lesson.before_tool(self._slot, step, call_id, name, to_jsonable_python(args, fallback=repr))
            run = lesson.tool_call(self._slot, step, call_id, name, run)
        self._calls += 1
        self._state.emit(
            ToolStarted(
                run_id=self._state.run_id,
                slot=self._slot,
                call_id=call_id,
                tool_name=name,
                args=to_jsonable_python(args, fallback=repr),
                round=step,
                server=self._servers.get(name),
            )
        )
        started = time.monotonic()
        try:
            outcome, cached = await self._run(name, args, policy, run)
        except (ApprovalRequired, CallDeferred):
            # The toolset asked for approval from inside its call (pydantic-ai's `ApprovalRequiredToolset` does):
            # the call did not run. pydantic-ai calls it again once approved; a denial ends it (`settled`).
            self._calls -= 1
            self._deferred[call_id] = (name, step)
            raise
        elapsed_ms = (time.monotonic() - started) * 1000
        self._completed(call_id, name, step, ok=outcome.ok, text=outcome.text, was_cached=cached, elapsed_ms=elapsed_ms)
        if outcome.media:
            await announce(self._state, self._slot, outcome.media, call_id=call_id, round=step)
        if outcome.replaced:
            self._state.warn(
                self._slot,
                f"the tool {name!r} returned {outcome.replaced} lone surrogate(s) (text that is not valid UTF-8); "
                "they were replaced with U+FFFD",
            )
        if outcome.fatal is not None:
            raise SlotEnded("failed", outcome.fatal)
        return self._for_model(outcome, repeated)

    def settled(self, results: DeferredToolResults) -> None:
        """Approvals were answered: a shown call its toolset deferred and a person denied ends with the reason."""
        for call_id, answer in results.approvals.items():
            shown = self._deferred.pop(call_id, None)
            if shown is None or not isinstance(answer, ToolDenied):
                continue
            name, step = shown
            self._completed(call_id, name, step, ok=False, text=answer.message)

    def _completed(
        self, call_id: str, name: str, step: int, *, ok: bool, text: str, was_cached: bool = False,
        elapsed_ms: float = 0.0,
    ) -> None:
        """The call ended: `text` is what the model reads, and its error as well when the call failed."""
        self._state.emit(
            ToolCompleted(
                run_id=self._state.run_id,
                slot=self._slot,
                call_id=call_id,
                tool_name=name,
                ok=ok,
                result=text,
                error=None if ok else text,
                was_cached=was_cached,
                elapsed_ms=elapsed_ms,
                round=step,
            )
        )

    async def _run(
        self, name: str, args: dict[str, Any], policy: ToolPolicy, run: Callable[[], Awaitable[Any]]
    ) -> tuple[Outcome, bool]:
        max_calls = self._budget.max_calls
        if max_calls is not None and self._calls > max_calls:
            text = f"not run: this slot's max_calls={max_calls} is spent; answer with what you have"
            return Outcome(ok=False, text=text), False
        fault = run.fault if isinstance(run, InjectedCall) else None
        key = f"{name}:{_canonical(args)}" + ("" if fault is None else f":{id(run)}")  # an injected call runs
        if (shared := self._cache.get(key)) is not None:
            return await asyncio.shield(shared), True
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._cache[key] = future
        async def run_then_media() -> Any:
            return await tool_result(await run())

        call = execute(name, run_then_media, timeout=injected_timeout(fault, policy.timeout), convert=_converted)
        try:
            warn = functools.partial(self._state.warn, self._slot)
            outcome = labelled(fault, await run_isolated(name, call, warn=warn))
        except (ApprovalRequired, CallDeferred) as deferred:  # an identical call waiting on this one is deferred too
            future.set_exception(deferred)
            future.exception()  # retrieved: the waiting calls re-raise it, and none may be waiting
            self._cache.pop(key, None)
            raise
        except BaseException:
            future.cancel()
            self._cache.pop(key, None)
            raise
        future.set_result(outcome)
        if not outcome.ok:
            self._cache.pop(key, None)  # a failure is shared within its round, retried in a later one
        return outcome, False

    def _note_round(self, ctx: RunContext[Any]) -> bool:
        step = ctx.run_step
        if step not in self._repeats_by_step:
            calls = _round_calls(ctx, self._policies)
            self._repeats = self._repeats + 1 if calls == self._last_round else 0
            self._last_round = calls
            self._repeats_by_step[step] = self._repeats
            if self._repeats >= 2:
                self._tool_free_steps.add(step + 1)
        return self._repeats_by_step[step] >= 1

    @staticmethod
    def _for_model(outcome: Outcome, repeated: bool) -> Any:
        if outcome.retry is not None:
            raise outcome.retry
        if not outcome.ok:
            raise ToolFailed(f"{outcome.text}\n\n{NUDGE}" if repeated else outcome.text)
        return f"{outcome.text}\n\n{NUDGE}" if repeated else outcome.value


def _round_calls(ctx: RunContext[Any], policies: Mapping[str, ToolPolicy]) -> tuple[tuple[str, str], ...]:
    response = next((m for m in reversed(ctx.messages) if isinstance(m, ModelResponse)), None)
    if response is None:
        return ()
    parts = [p for p in response.parts if isinstance(p, ToolCallPart) and p.tool_name in policies]
    return tuple(sorted((p.tool_name, _canonical(p.args_as_dict())) for p in parts))
