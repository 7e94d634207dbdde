"""The pydantic-ai `Agent`s of one prepared run, built once per slot shape and reused by every run of it.

Building an `Agent` costs about as much CPU as a short model round (its capability tree, toolset and
output schema: ~0.4–0.6 ms here), and a batch built one per row and slot. What differs between two
runs of the same slot is per-run state, so the shared agent carries none:

* the model, the instructions and a typed slot's output type are `agent.run(...)` arguments;
* the slot's capability (`SlotRequests`: events, journal, approvals, tool calls) is reached through a
  context variable the slot sets around its run (`bound`); the agent's own capability, `_PerRun`,
  forwards each hook to it. It is *not* handed over by pydantic-ai's `for_run`: a capability that
  `for_run` replaces makes pydantic-ai compose the run's capability tree anew, which costs what
  building the agent did;
* a free-text slot's output check is read by one output validator from the same binding.

What stays on the agent, and so makes up the key, is what pydantic-ai fixes at construction: the tools
(by identity: a prepared run's registry hands out the same `Tool` objects to all its runs), the deps
type, the slot's name, the retry count, and whether the slot answers checked text, plain text or a
type. The cache belongs to one `Prepared` (one run with its resumed segments, or one batch) and dies
with it: no agent, tool or model outlives the run that built it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import AbstractToolset

Answers = Literal["text", "checked", "typed"]
"""What the slot answers: plain free text, free text with an output check, or a typed value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """What one run of a shared agent brings: its capability and, for checked text, its output check."""

    requests: AbstractCapability[Any]
    """The run's `SlotRequests` (typed by its base: `requests.py` needs the run state, which holds these agents)."""
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


def _requests() -> AbstractCapability[Any]:
    binding = _binding.get()
    if binding is None:  # a shared agent run outside `bound`: a bug in the engine, not the user's
        raise RuntimeError("agentcell: a slot agent ran without its per-run binding")
    return binding.requests


class _PerRun(AbstractCapability[Any]):
    """The shared agent's one capability: every hook forwarded to the run's own `SlotRequests`.

    It has no `wrap_node_run`: pydantic-ai runs every node through one more layer of calls and context
    copies for a capability that has one (~30 calls a node), so process exits are contained where the
    run's foreign code is called instead (contain.py)."""

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        binding = _binding.get()  # asked per run; unbound (pydantic-ai looking at the agent): no wrapper
        return None if binding is None else binding.requests.get_wrapper_toolset(toolset)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        return await _requests().handle_deferred_tool_calls(ctx, requests=requests)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        return await _requests().before_model_request(ctx, request_context)

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        return await _requests().after_model_request(ctx, request_context=request_context, response=response)


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
        key = (tuple(map(id, tools)), deps_type, name, retries, answers)  # the tools are held by the registry
        agent = self._agents.get(key)
        if agent is not None:
            return agent
        agent = Agent(
            None,  # each run passes its model
            tools=list(tools),  # the agent's own toolset, one child: a second one costs tasks per step
            output_type=str,  # a typed slot passes its own to `run` (it can depend on the run's time and text)
            deps_type=deps_type,
            name=name,
            retries=retries,
            capabilities=[_PerRun()],
        )
        if answers == "checked":
            agent.output_validator(_validate)
        if len(self._agents) >= CACHE_SIZE:
            self._agents.pop(next(iter(self._agents)))
        self._agents[key] = agent
        self.built += 1
        return agent
