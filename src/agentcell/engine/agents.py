"""The pydantic-ai `Agent`s of one prepared run, built once per slot shape and reused by every run of it.

Building an `Agent` costs about as much CPU as a short model round (its capability tree, toolset and
output schema: ~0.4–0.6 ms here), and a batch built one per row and slot. What differs between two
runs of the same slot is per-run state, so the shared agent carries none:

* the model, the instructions and a typed slot's output type are `agent.run(...)` arguments; the model
  is the run's `SlotModel` (`slotmodel.py`), which carries the request hooks (compaction, events,
  journal) around every request;
* the slot's tool calls (`SlotCalls`) and, for checked text, its output check are read from a context
  variable the slot sets around its run (`bound`).

Tools reach pydantic-ai through its public API only: the slot's own tools are the agent's `tools=`, the
run's `toolsets=` (any pydantic-ai toolset: a `FunctionToolset`, an MCP server, a custom `AbstractToolset`)
are the agent's `toolsets=`, and one capability (`_SlotTools`) wraps them all in a `SlotToolset` through
pydantic-ai's `get_wrapper_toolset` hook. So every call, whichever toolset offers it, goes through the
run's `SlotCalls` (events, the identical-call cache, timeouts, guards, `max_calls`), and every deferred
call through the run's approvals (`handle_deferred_tool_calls`: pydantic-ai resolves deferred calls only
through a capability, or its result's `DeferredToolRequests`, which would end the slot's run).

One capability, and only on an agent with tools or toolsets: pydantic-ai's combined capability copies
the run context for every capability on every hook it dispatches (node runs, the event stream, tool
preparation, output processing, ...), whether the capability overrides the hook or not, so a text
slot's agent carries none. Nor does an agent whose calls can never be deferred (`_defers_nothing`: only
MCP servers' toolsets, no tools of its own, no `approve_writes`): it takes the `SlotToolset` as its one
toolset instead, which saves ~0.6 M instructions a round of an MCP tool call, a quarter of the engine's cost
over raw pydantic-ai there (`bench/mcp_calls.py`). The wrapper is not a second toolset beside the agent's own:
pydantic-ai gathers two or more toolsets in new tasks on every step, which cost more than the capability does
(`tests/engine/test_round_costs.py` pins both).

What stays on the agent, and so makes up the key, is what pydantic-ai fixes at construction: the tools
(by identity: a prepared run's registry hands out the same `Tool` objects to all its runs) and the
run's toolsets (by identity too), the deps type, the slot's name, the retry count, and whether the slot
answers checked text, plain text or a type. The cache belongs to one `Prepared` (one run with its
resumed segments, or one batch) and dies with it: no agent, tool or model outlives the run that built it.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from ..formats.frozen import faster_init
from ..formats.scoped import ScopedVar
from ..mcp_servers.group import McpGroup
from ..mcp_servers.toolset import McpTools

Answers = Literal["text", "checked", "typed"]
"""What the slot answers: plain free text, free text with an output check, or a typed value."""


class ToolCalls(Protocol):
    """A run's tool calls as the shared toolset uses them (`calls.SlotCalls`; typed by this protocol because
    `calls.py` needs the run state, which holds these agents)."""

    def poll_guards(self) -> None: ...

    def tools_allowed(self, step: int) -> bool: ...

    def offered(self, tools: dict[str, ToolsetTool[Any]]) -> dict[str, ToolsetTool[Any]]: ...

    def settled(self, results: DeferredToolResults) -> None: ...

    async def call(
        self, name: str, args: dict[str, Any], ctx: RunContext[Any], run: Callable[[], Awaitable[Any]]
    ) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """What one run of a shared agent brings besides its model: its tool calls, approvals and output check."""

    calls: ToolCalls | None = None
    approve: Callable[[DeferredToolRequests], Awaitable[DeferredToolResults]] | None = None
    """The run's approval resolver (`approvals.resolve_approvals` for its state and slot)."""
    validate: Callable[[str], str] | None = None


_binding: ContextVar[Binding | None] = ContextVar("agentcell_slot_binding", default=None)


class bound(ScopedVar[Binding | None]):  # lower case: used as a function, `with bound(binding):`
    """Agent runs started inside (their tasks copy this context) take `binding` as their per-run state."""

    __slots__ = ()

    def __init__(self, binding: Binding) -> None:
        super().__init__(_binding, binding)


def _current() -> Binding:
    binding = _binding.get()
    if binding is None:  # a shared agent run outside `bound`: a bug in the engine, not the user's
        raise RuntimeError("agentcell: a slot agent ran without its per-run binding")
    return binding


def _calls() -> ToolCalls:
    calls = _current().calls
    if calls is None:  # an agent with tools bound for a run without: a bug in the engine too
        raise RuntimeError("agentcell: a slot agent with tools ran without its tool calls")
    return calls


@dataclass
class SlotToolset(WrapperToolset[Any]):
    """All the slot's toolsets, offered only on requests that may gather, and called through the run's `SlotCalls`.

    Made per run by the agent's `_SlotTools` capability around the toolset pydantic-ai assembled (the
    agent's own tools and the run's toolsets); each step and call finds the current run's calls in the
    binding."""

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        calls = _calls()
        calls.poll_guards()  # before each request: a tripped guard should not cost another one
        if not calls.tools_allowed(ctx.run_step):
            return {}
        return calls.offered(await self.wrapped.get_tools(ctx))

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return await _calls().call(name, tool_args, ctx, lambda: self.wrapped.call_tool(name, tool_args, ctx, tool))


class _SlotTools(AbstractCapability[Any]):
    """The one capability of an agent with tools: it wraps all of them in a `SlotToolset`, and hands deferred
    calls (approvals) to the run's resolver.

    Nothing else: every capability costs a run-context copy per hook pydantic-ai dispatches (see the
    module docstring). Process exits in the approval callback are contained where it is awaited
    (`approvals.py`)."""

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        return SlotToolset(toolset)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        binding = _current()
        if binding.approve is None:
            return None
        results = await binding.approve(requests)
        if binding.calls is not None:
            binding.calls.settled(results)
        return results


def _validate(text: Any) -> Any:
    binding = _binding.get()
    if binding is None or binding.validate is None or not isinstance(text, str):
        return text
    return binding.validate(text)


CACHE_SIZE = 64
"""Agents one prepared run keeps (slot shapes are few; a bound, so a template that varies its retry
count per loop iteration cannot grow it without end)."""


class SlotAgents:
    """The agents of one prepared run, one per slot shape (see the module docstring)."""

    def __init__(self) -> None:
        self._agents: dict[tuple[Any, ...], Agent[Any, Any]] = {}
        self.built = 0
        """How many agents were built (for tests)."""

    def agent_for(
        self,
        *,
        tools: Sequence[Tool[Any]],
        toolsets: Sequence[AbstractToolset[Any]] = (),
        deps_type: type[Any],
        name: str | None,
        retries: int,
        answers: Answers,
        approve_writes: bool = False,
    ) -> Agent[Any, Any]:
        key = (tuple(map(id, tools)), tuple(map(id, toolsets)), deps_type, name, retries, answers,  # the run holds them
               approve_writes)
        agent = self._agents.get(key)
        if agent is not None:
            return agent
        agent = _build(tools, toolsets, deps_type=deps_type, name=name, retries=retries, approve_writes=approve_writes)
        if answers == "checked":
            agent.output_validator(_validate)
        if len(self._agents) >= CACHE_SIZE:
            self._agents.pop(next(iter(self._agents)))
        self._agents[key] = agent
        self.built += 1
        return agent


def _defers_nothing(
    tools: Sequence[Tool[Any]], toolsets: Sequence[AbstractToolset[Any]], *, approve_writes: bool
) -> bool:
    """Whether no call of the agent can be deferred, so it needs no `handle_deferred_tool_calls` (no capability).

    Only toolsets whose calls go to an MCP server and never ask for approval from inside: agentcell's
    (`McpTools`, `McpGroup`) and pydantic-ai's `MCPToolset`, by exact type (a subclass may defer). Not with tools
    of the slot's own (one may need approval, or raise `ApprovalRequired` from its body), nor under
    `approve_writes` (it defers an MCP server's write tools, `calls.SlotCalls.offered`)."""
    if tools or not toolsets or approve_writes:
        return False
    mcp = sys.modules.get("pydantic_ai.mcp")  # not imported: no toolset of the run is one of its `MCPToolset`s
    plain = (McpTools, McpGroup, getattr(mcp, "MCPToolset", McpTools))
    return all(type(toolset) in plain for toolset in toolsets)


def _build(
    tools: Sequence[Tool[Any]], toolsets: Sequence[AbstractToolset[Any]], *, deps_type: type[Any], name: str | None,
    retries: int, approve_writes: bool = False,
) -> Agent[Any, Any]:
    if _defers_nothing(tools, toolsets, approve_writes=approve_writes):
        # The one wrapper `_SlotTools` would add, as the agent's one toolset (two would be gathered in new tasks).
        wrapped = toolsets[0] if len(toolsets) == 1 else CombinedToolset(list(toolsets))
        return Agent(None, output_type=str, deps_type=deps_type, name=name, retries=retries,
                     toolsets=[SlotToolset(wrapped)])
    return Agent(  # each run passes its model (`SlotModel`)
        None,
        output_type=str,  # a typed slot passes its own to `run` (it can depend on the run's time and text)
        deps_type=deps_type,
        name=name,
        retries=retries,
        tools=list(tools),
        toolsets=list(toolsets) or None,
        capabilities=[_SlotTools()] if tools or toolsets else None,
    )


faster_init(Binding)  # one per slot run (`formats/frozen.py`)
