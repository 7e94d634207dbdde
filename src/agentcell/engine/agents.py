"""The pydantic-ai `Agent`s of one prepared run, built once per slot shape and reused by every run of it.

Building an `Agent` costs about as much CPU as a short model round (its capability tree, toolset and
output schema: ~0.4–0.6 ms here), and a batch built one per row and slot. What differs between two
runs of the same slot is per-run state, so the shared agent carries none:

* the model, the instructions and a typed slot's output type are `agent.run(...)` arguments; the model
  is the run's `SlotModel` (`slotmodel.py`), which carries the request hooks (compaction, events,
  journal) around every request;
* the slot's tool calls (`SlotCalls`) and, for checked text, its output check are read from a context
  variable the slot sets around its run (`bound`): the agent's own toolset is wrapped once, at build
  time, in a `SlotToolset` that looks up the run's calls per step and per call.

No capability on the common path. pydantic-ai's combined capability copies the run context for every
capability on every hook it dispatches (node runs, the event stream, tool preparation, output
processing, ...), whether the capability overrides the hook or not: ~970 Python calls per batch row
and ~185 per tool round went to the one capability that forwarded four hooks. Only an agent whose tools
need approval has one (`_Approvals`): pydantic-ai resolves deferred calls only through a capability's
`handle_deferred_tool_calls` (or its result's `DeferredToolRequests`, which would end the slot's run).

What stays on the agent, and so makes up the key, is what pydantic-ai fixes at construction: the tools
(by identity: a prepared run's registry hands out the same `Tool` objects to all its runs), whether any
of them needs approval, the deps type, the slot's name, the retry count, and whether the slot answers
checked text, plain text or a type. The cache belongs to one `Prepared` (one run with its resumed
segments, or one batch) and dies with it: no agent, tool or model outlives the run that built it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import FunctionToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

Answers = Literal["text", "checked", "typed"]
"""What the slot answers: plain free text, free text with an output check, or a typed value."""


class ToolCalls(Protocol):
    """A run's tool calls as the shared toolset uses them (`calls.SlotCalls`; typed by this protocol because
    `calls.py` needs the run state, which holds these agents)."""

    def poll_guards(self) -> None: ...

    def tools_allowed(self, step: int) -> bool: ...

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


@contextmanager
def bound(binding: Binding) -> Iterator[None]:
    """Agent runs started inside (their tasks copy this context) take `binding` as their per-run state."""
    token = _binding.set(binding)
    try:
        yield
    finally:
        _binding.reset(token)


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
    """The slot's tools, offered only on requests that may gather, and called through the run's `SlotCalls`.

    Built once per agent around its own function toolset; each step and call finds the current run's
    calls in the binding."""

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        calls = _calls()
        calls.poll_guards()  # before each request: a tripped guard should not cost another one
        if not calls.tools_allowed(ctx.run_step):
            return {}
        return await self.wrapped.get_tools(ctx)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return await _calls().call(name, tool_args, ctx, lambda: self.wrapped.call_tool(name, tool_args, ctx, tool))


class _Approvals(AbstractCapability[Any]):
    """The capability of an agent whose tools need approval: deferred calls go to the run's resolver.

    It has no other hook: every capability costs a run-context copy per hook pydantic-ai dispatches, so
    agents without approvals carry none (see the module docstring). Process exits in the approval
    callback are contained where it is awaited (`approvals.py`)."""

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        approve = _current().approve
        return None if approve is None else await approve(requests)


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
        self, *, tools: Sequence[Tool[Any]], deps_type: type[Any], name: str | None, retries: int, answers: Answers
    ) -> Agent[Any, Any]:
        approvals = any(tool.requires_approval for tool in tools)
        key = (tuple(map(id, tools)), approvals, deps_type, name, retries, answers)  # the registry holds the tools
        agent = self._agents.get(key)
        if agent is not None:
            return agent
        agent = _build(tools, deps_type=deps_type, name=name, retries=retries, approvals=approvals)
        if answers == "checked":
            agent.output_validator(_validate)
        if len(self._agents) >= CACHE_SIZE:
            self._agents.pop(next(iter(self._agents)))
        self._agents[key] = agent
        self.built += 1
        return agent


OWN_TOOLSET = "_function_toolset"
"""pydantic-ai's private attribute for an agent's own function toolset (2.60–2.68 checked)."""


def _build(
    tools: Sequence[Tool[Any]], *, deps_type: type[Any], name: str | None, retries: int, approvals: bool
) -> Agent[Any, Any]:
    settings: dict[str, Any] = {
        "output_type": str,  # a typed slot passes its own to `run` (it can depend on the run's time and text)
        "deps_type": deps_type,
        "name": name,
        "retries": retries,
        "capabilities": [_Approvals()] if approvals else None,
    }
    agent: Agent[Any, Any] = Agent(None, tools=list(tools), **settings)  # each run passes its model (`SlotModel`)
    if not tools:
        return agent
    # The agent's own function toolset, wrapped in place: pydantic-ai combines the agent's toolsets (its function
    # toolset first, always) and gathers two or more in new tasks on every step, so the wrapper cannot be a second
    # toolset beside an empty function toolset. tests/engine/test_round_costs.py pins that calls still reach
    # `SlotCalls` through it and that no task per step comes back.
    own = getattr(agent, OWN_TOOLSET, None)
    if isinstance(own, FunctionToolset):
        setattr(agent, OWN_TOOLSET, SlotToolset(own))
        return agent
    # A pydantic-ai that keeps it elsewhere: the same wrapper as a toolset of its own (a task more per step).
    return Agent(None, toolsets=[SlotToolset(FunctionToolset(list(tools), max_retries=retries))], **settings)
