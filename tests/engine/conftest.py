"""Scripted models and hand-built templates for the engine tests.

`Script` is a streamed `FunctionModel` whose responses are listed up front and which records what each
request carried (tool names, output tools, messages), so tests can assert exact requests.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

from agentcell.errors import TemplateRenderError, UndefinedVariableError
from agentcell.events import Event
from agentcell.template.program import (
    CheckpointStep,
    RenderedSlot,
    SlotOptions,
    SlotSpec,
    SlotStep,
    Step,
    TemplateWarning,
    Turn,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ---- scripted model -------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Final:
    """Answer a typed slot through its output tool (`raw`: the tool's whole argument object)."""

    value: Any
    raw: bool = False


@dataclass(frozen=True)
class Think:
    text: str


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Until:
    """Hold the response until `check()` holds (an order of events made certain, not timed)."""

    check: Callable[[], bool]


@dataclass(frozen=True)
class Raise:
    error: BaseException


Item = str | Call | Final | Think | Sleep | Until | Raise
Response = Sequence[Item] | Callable[[list[ModelMessage], AgentInfo], Sequence[Item]]


@dataclass
class Request:
    tools: list[str]
    outputs: list[str]
    messages: list[ModelMessage]
    instructions: str | None

    @property
    def last(self) -> ModelMessage:
        return self.messages[-1]


class Script:
    """A streamed FunctionModel answering from a list of responses, one per request."""

    def __init__(self, *responses: Response, repeat_last: bool = False) -> None:
        self.responses = list(responses)
        self.repeat_last = repeat_last
        self.requests: list[Request] = []
        self.model = FunctionModel(stream_function=self._stream, model_name="script")
        self._cancelled: set[int] = set()

    @property
    def tools_per_request(self) -> list[list[str]]:
        return [r.tools for r in self.requests]

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        index = len(self.requests)
        self.requests.append(
            Request(
                tools=[t.name for t in info.function_tools],
                outputs=[t.name for t in info.output_tools],
                messages=list(messages),
                instructions=info.instructions,
            )
        )
        if index >= len(self.responses):
            if not self.repeat_last:
                raise AssertionError(f"unexpected request #{index + 1}")
            index = len(self.responses) - 1
        response = self.responses[index]
        items = response(messages, info) if callable(response) else response
        finished = False
        try:
            async for delta in _deltas(items, info, index, functools.partial(self._sleep, index)):
                yield delta
            finished = True
        finally:
            # A cancelled stream sees CancelledError (in a sleep) or GeneratorExit (closed while
            # suspended at a yield, possibly later, by the event loop's async-generator finalizer).
            if not finished:
                self._cancelled.add(index)

    async def _sleep(self, request: int, seconds: float) -> None:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self._cancelled.add(request)
            raise

    @property
    def cancelled(self) -> int:
        """How many requests were cancelled while streaming."""
        return len(self._cancelled)


async def _deltas(
    items: Sequence[Item], info: AgentInfo, request: int, sleep: Callable[[float], Any]
) -> AsyncIterator[Any]:
    part = -1
    last_kind = ""
    for n, item in enumerate(items):
        if isinstance(item, Sleep):
            await sleep(item.seconds)
            continue
        if isinstance(item, Until):
            waited = 0.0
            while not item.check():
                if waited > 30:  # a hang guard: the awaited event never came
                    raise AssertionError("the event this response waits for never happened")
                await sleep(0.01)
                waited += 0.01
            continue
        if isinstance(item, Raise):
            raise item.error
        kind = type(item).__name__
        if kind != last_kind or kind in ("Call", "Final"):
            part += 1
        last_kind = kind
        if isinstance(item, str):
            yield item
        elif isinstance(item, Think):
            yield {part: DeltaThinkingPart(content=item.text)}
        elif isinstance(item, Call):
            call_id = item.id or f"r{request + 1}c{n}"
            yield {part: DeltaToolCall(name=item.name, json_args=json.dumps(item.args), tool_call_id=call_id)}
        else:
            name = info.output_tools[0].name
            args = json.dumps(item.value if item.raw else {"response": item.value})
            yield {part: DeltaToolCall(name=name, json_args=args, tool_call_id=f"o{request + 1}")}
        await asyncio.sleep(0)


def verdict(triggered: bool, reason: str = "judged", *, after: float = 0.0) -> list[Item]:
    """A guard's answer, optionally after a delay."""
    return [Sleep(after), Final({"triggered": triggered, "reason": reason}, raw=True)]


def routed(guard: Script, main: Script) -> FunctionModel:
    """One model that sends guard requests (a `triggered` output) to `guard` and the rest to `main`."""

    async def route(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        is_guard = any("triggered" in t.parameters_json_schema.get("properties", {}) for t in info.output_tools)
        async for delta in (guard if is_guard else main)._stream(messages, info):
            yield delta

    return FunctionModel(stream_function=route, model_name="routed")


# ---- hand-built templates -------------------------------------------------------------------

Prompt = str | Callable[[Mapping[str, Any]], str]


def slot(
    name: str,
    type: str = "text",
    *,
    prompt: Prompt = "Q",
    system: str | None = None,
    required: bool = False,
    segment: int = 0,
    turns: Sequence[Turn] = (),
    **options: Any,
) -> SlotStep:
    """A slot whose render gives `turns` + the prompt (rendered against the context when callable)."""
    opts = SlotOptions(**options)
    spec = SlotSpec(name=name, type=type, required=required)  # type: ignore[arg-type]

    def render(context: Mapping[str, Any]) -> RenderedSlot:
        try:
            text = prompt(context) if callable(prompt) else prompt
        except KeyError as exc:  # as the compiler does: a failed render is a TemplateRenderError
            raise TemplateRenderError(f"undefined: {exc}") from exc
        return RenderedSlot(system=system, turns=(*turns, Turn(role="user", text=text)), options=opts)

    return SlotStep(slot=spec, segment=segment, render=render)


def checkpoint(name: str | None = None, segment: int = 1) -> CheckpointStep:
    return CheckpointStep(name=name, segment=segment)


@dataclass(frozen=True)
class FakeTemplate:
    steps: tuple[Step, ...]
    variables: frozenset[str] = frozenset()
    warnings: tuple[TemplateWarning, ...] = ()
    name: str = "<test>"
    source: str = ""
    sha256: str = "0" * 64

    @property
    def slots(self) -> tuple[SlotSpec, ...]:
        return tuple(s.slot for s in self.steps if isinstance(s, SlotStep))

    def check_context(self, names: Any, /) -> None:
        for variable in sorted(self.variables):
            if variable not in set(names):
                raise UndefinedVariableError(f"undefined variable {variable!r}", variable=variable, line=1, col=1)


def template(*steps: Step, variables: Sequence[str] = ()) -> FakeTemplate:
    return FakeTemplate(steps=tuple(steps), variables=frozenset(variables))


# ---- event helpers --------------------------------------------------------------------------


def kinds(events: Sequence[Event]) -> list[str]:
    return [e.kind for e in events]


def brief(events: Sequence[Event]) -> list[tuple[Any, ...]]:
    """Events as small tuples of their key fields, for exact sequence asserts.

    Consecutive text deltas of one slot, round and kind are one tuple: how the run's coalescer splits a
    stream into deltas (its first piece at once, the rest in batches) is pinned in `test_coalesce.py`.
    """
    out: list[tuple[Any, ...]] = []
    last: Event | None = None
    for e in events:
        match e.kind:
            case "token_delta" | "thinking_delta":
                if last is not None and last.kind == e.kind and last.slot == e.slot and last.round == e.round:  # type: ignore[attr-defined]
                    out[-1] = (*out[-1][:2], out[-1][2] + e.text)  # type: ignore[attr-defined]
                else:
                    out.append((e.kind, e.slot, e.text))  # type: ignore[union-attr]
            case "tool_started":
                out.append((e.kind, e.tool_name, e.args))  # type: ignore[union-attr]
            case "tool_completed":
                out.append((e.kind, e.tool_name, e.ok, e.result, e.was_cached))  # type: ignore[union-attr]
            case "slot_retracted":
                out.append((e.kind, e.slot, e.reason, e.text))  # type: ignore[union-attr]
            case "slot_started":
                out.append((e.kind, e.slot))
            case "slot_completed":
                out.append((e.kind, e.slot, e.value))  # type: ignore[union-attr]
            case "slot_failed":
                out.append((e.kind, e.slot, e.status))  # type: ignore[union-attr]
            case "processing_complete":
                out.append((e.kind, e.status, e.early_termination))  # type: ignore[union-attr]
            case "guard_tripped":
                out.append((e.kind, e.slot, e.reason))  # type: ignore[union-attr]
            case "approval_requested":
                out.append((e.kind, e.tool_name, e.args))  # type: ignore[union-attr]
            case "approval_resolved":
                out.append((e.kind, e.approved, e.reason))  # type: ignore[union-attr]
            case "run_warning":
                out.append((e.kind, e.message))  # type: ignore[union-attr]
            case "checkpoint_reached":
                out.append((e.kind, e.name))  # type: ignore[union-attr]
            case "usage_updated" | "request_completed" | "context_updated" | "model_request" | "model_response":
                pass  # bookkeeping after every request; asserted in tests/longrun
            case _:
                out.append((e.kind,))
        last = e
    return out


def texts(message: ModelMessage) -> list[Any]:
    """A message's parts as short tuples (role, content) for exact request asserts."""
    out: list[Any] = []
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            out.append(("user", part.content))
        elif isinstance(part, TextPart):
            out.append(("assistant", part.content))
        elif isinstance(part, ToolCallPart):
            out.append(("call", part.tool_name, part.args_as_dict()))
        elif isinstance(part, ToolReturnPart):
            out.append(("return", part.tool_name, part.content))
        else:
            out.append((part.part_kind, getattr(part, "content", None)))
    return out


def conversation(messages: Sequence[ModelMessage]) -> list[Any]:
    return [texts(m) for m in messages]


__all__ = [
    "Call",
    "Final",
    "ModelRequest",
    "ModelResponse",
    "Raise",
    "Script",
    "Sleep",
    "Think",
    "Until",
    "brief",
    "checkpoint",
    "conversation",
    "kinds",
    "slot",
    "template",
    "texts",
]


async def eventually(check: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll `check` until it holds (for effects the event loop finishes in the background).

    `timeout` is a hang guard, generous for a loaded machine: a check that holds returns at once."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def tasks_now() -> set[asyncio.Task[Any]]:
    """The tasks alive now (the test runner's own), to compare with after a run."""
    return set(asyncio.all_tasks())


async def leftover_tasks(baseline: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    """Tasks started since `baseline` that are still pending (after letting callbacks run)."""
    for _ in range(3):
        await asyncio.sleep(0)
    return [t for t in asyncio.all_tasks() - baseline if not t.done() and t is not asyncio.current_task()]
