"""One slot = one pydantic-ai agent run over the conversation so far.

The slot's type becomes the run's output type (`outputs.plan`): free text streams as plain text,
checked by an output validator when it has constraints; every other type is a one-field model
`{response: T}` answered through pydantic-ai's output tool, and `halt` asks for `{triggered, reason}`.
A temporal slot's instructions carry the run's reference time, so "next Tuesday" has one meaning.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic_ai import Agent, AgentRunResult, ModelRetry, Tool
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, UserContent
from pydantic_ai.settings import ModelSettings
from pydantic_ai.toolsets import AbstractToolset
from pydantic_core import to_json

from ..events import Retrying, RunStatus, SlotCompleted, SlotFailed, SlotStarted
from ..formats.frozen import faster_init
from ..formats.jsonsafe import scrub
from ..providers.hooks import RetryNotice, request_scope
from ..providers.known_secrets import model_secrets
from ..providers.models import resolve_model
from ..providers.wire_capture import capturing
from ..template.program import TEMPORAL_TYPES, RenderedSlot, SlotOptions, SlotSpec
from ..usage import MAX_REQUESTS
from .again import Again, no_tool_calls
from .again import resumable as resumable
from .agents import Answers, Binding, bound
from .answer_checks import AnswerProblem
from .approvals import resolve_approvals
from .budget import OutputMeter, SlotBudget, exhausted_message, slot_budget, slot_limits
from .calls import SlotCalls
from .contain import cancel_cooperatively, describe, stop_requested
from .conversation import split_turns, visible_text
from .guard import GuardTrip
from .media import announce, check_model_reads, describing, prompt_media
from .output_modes import chosen_mode, typed_output
from .outputs import Check, Output, plan, reads_seen
from .requests import SlotRequests
from .slot_failure import failure_message
from .slotmodel import SlotModel
from .state import RunState, SlotEnded
from .streaming import SlotStream
from .temporal import reference_note


def answer_text(value: Any) -> str:
    """The answer as the conversation (and `SlotCompleted.text`) carries it."""
    return value if isinstance(value, str) else to_json(value, fallback=repr).decode()


def _settings(options: SlotOptions) -> ModelSettings:
    settings = ModelSettings()
    if options.seed is not None:
        settings["seed"] = options.seed
    if options.temperature is not None:
        settings["temperature"] = options.temperature
    if options.max_tokens is not None:
        settings["max_tokens"] = options.max_tokens
    if options.thinking is not None:
        settings["thinking"] = options.thinking  # type: ignore[typeddict-item]
    return settings


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotOutcome:
    value: Any
    text: str
    messages: tuple[ModelMessage, ...]


async def run_slot(
    state: RunState,
    spec: SlotSpec,
    index: int,
    rendered: RenderedSlot,
    history: Sequence[ModelMessage],
    *,
    resume: Sequence[ModelMessage] = (),
    key: str | None = None,
) -> SlotOutcome:
    """Run one slot to its value, emitting its events; raise `SlotEnded`/`GuardTrip`/`CancelledError`.

    `resume`: the finished rounds of this slot from a stopped segment (see `resumable`); the slot goes
    on from them instead of sending its prompt again. `key`: the name events and the transcript use
    for this run of the slot (`summary[2]` in a loop; `spec.key` by default).
    """
    name = key or spec.key
    seen = visible_text(history, rendered) if reads_seen(spec) else ""
    output = plan(spec, rendered.options, now=state.reference_time, seen=seen)
    limits = slot_limits(state.ceiling, max_iter=rendered.options.max_iter, max_calls=rendered.options.max_calls)
    state.emit(SlotStarted(run_id=state.run_id, slot=name, slot_type=spec.type_label, index=index, limits=limits))
    stream = SlotStream(state, name, streams_text=output.streams_text)
    attempts = _Attempts(state, spec, rendered, history, stream, output)
    result: AgentRunResult[Any] | None = None
    try:
        result = await attempts.run(tuple(resume))
    except UsageLimitExceeded as exc:
        message = exhausted_message(name, exc, max_iter_set=rendered.options.max_iter is not None)
        message += no_tool_calls(attempts.requests)
        _fail(state, stream, attempts.call, "budget_exhausted", message, None)
        raise SlotEnded("budget_exhausted", message) from exc
    except GuardTrip as trip:
        _fail(state, stream, attempts.call, "halted", str(trip), "halted")
        raise
    except asyncio.CancelledError as exc:
        if not stop_requested():  # raised by a model or a hook, not by Stop: a failure like any other
            message = f"{describe(exc)} raised inside the slot (nobody pressed Stop)"
            _fail(state, stream, attempts.call, "failed", message, "errored")
            raise SlotEnded("failed", message) from exc
        _fail(state, stream, attempts.call, "stopped", "stopped", None, keep_partial=True)
        raise
    except SlotEnded as ended:  # a guard this slot joined failed, or a tool ended the run
        _fail(state, stream, attempts.call, "failed", ended.message, "errored")
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit too: the run fails, the loop lives
        message = failure_message(name, exc, stream) + no_tool_calls(attempts.requests)
        _fail(state, stream, attempts.call, "failed", message, "errored")
        raise SlotEnded("failed", message) from exc
    finally:
        if result is None:  # kept whatever way the slot ends (a finished slot's just below)
            state.transcript[name] = stream.new_messages()
    state.usage.update(name, result.usage)
    state.transcript[name] = (*stream.resumed, *result.new_messages())
    value, _ = scrub(output.value(result.output))  # valid UTF-8 for every view (the deltas were warned about)
    value = state.secrets.mask_value(value)  # a model repeating the run's key (its response parts were masked too)
    text = answer_text(value)
    state.emit(SlotCompleted(run_id=state.run_id, slot=name, value=value, text=text))
    return SlotOutcome(value=value, text=text, messages=state.transcript[name])


@dataclass(frozen=True, slots=True, kw_only=True)
class _AgentCall:
    """One slot's pydantic-ai agent run, built and ready to start."""

    agent: Agent[Any, Any]
    """Shared by every run of the same slot shape in the prepared run (`agents.py`); this run's own parts follow."""
    binding: Binding
    model: SlotModel
    """The run's model with its request hooks (`slotmodel.py`)."""
    output_type: Any
    """`None` for free text (the agent's `str`), else the typed slot's one-field model."""
    instructions: str | None
    prompt: str | list[UserContent] | None
    past: list[ModelMessage]
    budget: SlotBudget
    requests: SlotRequests
    """The request hooks, told when the slot ends with a request in flight."""
    stream: SlotStream
    settings: ModelSettings
    state: RunState
    owns_model: bool = False
    """The slot's `model=` string was resolved for this run: its HTTP client is closed when the run ends."""

    async def run(self) -> AgentRunResult[Any]:
        state, name = self.state, self.requests.slot
        async with self.model.wrapped if self.owns_model else nullcontext():
            return await self._run(state, name)

    async def _run(self, state: RunState, name: str) -> AgentRunResult[Any]:
        with (
            request_scope(name, on_retry=functools.partial(_report_retry, state, name)),
            capturing(self.requests.model, emit=state.emit, warn=functools.partial(_warn_once, state, name),
                      run_id=state.run_id, slot=name),  # the wire view
            bound(self.binding),  # the shared agent's per-run state, read by its run's tasks (copies of this context)
        ):
            run = functools.partial(
                self.agent.run,
                self.prompt,
                model=self.model,
                output_type=self.output_type,
                instructions=self.instructions,
                message_history=self.past,
                deps=state.deps,
                usage_limits=self.budget.limits,
                event_stream_handler=self.stream,
                model_settings=self.settings,
                capabilities=describing(state.describe_media),
            )
            warn = functools.partial(state.warn, name)
            return await cancel_cooperatively(run, what=f"the model request of [[{name}]]", warn=warn)


@dataclass
class _Attempts:
    """A slot's agent runs: one, and one more after each `AnswerProblem`, going on from the last request
    (`again.py`: the server's state, not the model's answer)."""

    state: RunState
    spec: SlotSpec
    rendered: RenderedSlot
    history: Sequence[ModelMessage]
    stream: SlotStream
    output: Output
    call: _AgentCall | None = None
    """The agent run under way (or that ended the slot)."""

    @property
    def requests(self) -> SlotRequests | None:
        return None if self.call is None else self.call.requests

    async def run(self, resume: tuple[ModelMessage, ...]) -> AgentRunResult[Any]:
        again = Again()
        while True:
            first = self.call is None
            self.call = _agent_call(self.state, self.spec, self.rendered, self.history, self.stream, resume,
                                    self.output, previous=self.call)
            media = prompt_media(self.rendered.turns) if first else ()
            if media:  # the prompt's images, once per slot, before its first request (`media.py`)
                await announce(self.state, self.stream.slot, media)
            try:
                return await self.call.run()
            except AnswerProblem as problem:
                resume = await again(self.state, self.stream, self.call.requests, self.call.model.wrapped, problem)


def _warn_once(state: RunState, slot: str, message: str) -> None:
    """A warning said once per run (the wire capture's: every request of every slot would repeat it)."""
    if message not in state.warnings:
        state.warn(slot, message)


def _agent_call(
    state: RunState,
    spec: SlotSpec,
    rendered: RenderedSlot,
    history: Sequence[ModelMessage],
    stream: SlotStream,
    resume: tuple[ModelMessage, ...],
    output: Output,
    *,
    previous: _AgentCall | None = None,
) -> _AgentCall:
    """The slot's agent run; `previous`: the run it goes on from after an `AnswerProblem` (its request hooks
    and output meter are kept, so requests are numbered and tokens counted across both)."""
    options, name = rendered.options, stream.slot
    budget = slot_budget(state.ceiling, slot=name, max_iter=options.max_iter, max_calls=options.max_calls)
    for warning in budget.warnings:
        state.warn(name, warning)
    if previous is None:
        stream.meter = OutputMeter(budget.output_tokens)
    tools, calls, toolsets = _slot_tools(state, options, name, budget)
    resolved = state.model if options.model is None else resolve_model(options.model)
    model, owned = resolved.model, resolved.owned and options.model is not None
    if state.describe_media is None:  # else pydantic-ai's FileUnderstanding describes what it cannot read
        check_model_reads(model, prompt_media(rendered.turns), slot=name)  # before any request (`media.py`)
    # The request hooks ride on the run's model; the tool calls and approvals on the binding the shared agent's
    # one capability (only with tools, `agents.py`) reads.
    state.secrets.add(model_secrets(model))  # masked wherever the run keeps the model's text
    requests = previous.requests if previous is not None else SlotRequests(state=state, slot=name, stream=stream,
                                                                            model=model)
    answers: Answers = "typed" if output.type is not str else "text" if output.check is None else "checked"
    mode = chosen_mode(options.output_mode, state.output_mode, model, state.server) if answers == "typed" else "tool"
    auto_tool = answers == "typed" and mode == "tool" and (options.output_mode or state.output_mode) == "auto"
    agent = state.agents.agent_for(tools=tools, toolsets=toolsets, deps_type=state.deps_type, name=spec.name,
                                   retries=retry_budget(options, budget), answers=answers,
                                   approve_writes=state.approve_writes)
    validate = None if output.check is None else _validator(output.check, stream)
    prompt: str | list[UserContent] | None
    prompt, past = split_turns(history, rendered.turns)
    if resume:  # the slot's own finished rounds go on as history that counts as its record
        prompt, past = None, [*past, *resume]
        stream.resumed = resume
    return _AgentCall(
        agent=agent,
        binding=Binding(calls=calls, approve=functools.partial(
            resolve_approvals, state, name, server_of=None if calls is None else calls.server_of), validate=validate),
        model=SlotModel(model, requests, auto_tool=auto_tool),
        output_type=None if answers != "typed" else typed_output(output.type, mode),
        instructions=_instructions(spec, rendered, state.reference_time),
        prompt=prompt,
        past=past,
        budget=budget,
        requests=requests,
        stream=stream,
        settings=_settings(options),
        state=state,
        owns_model=owned,
    )


def _slot_tools(
    state: RunState, options: SlotOptions, name: str, budget: SlotBudget
) -> tuple[list[Tool[Any]], SlotCalls | None, tuple[AbstractToolset[Any], ...]]:
    """The slot's tools, its tool calls and the run's toolsets it offers (none without `use_tools`)."""
    if not options.use_tools:
        return [], None, ()
    toolsets = state.toolsets
    entries = state.registry.select(options.tools, elsewhere=bool(toolsets))
    policies = {tool: entry.policy for tool, entry in entries.items()}
    allowed = None if options.tools is None else frozenset(options.tools)
    calls = SlotCalls(state, name, policies, budget, foreign=bool(toolsets), allowed=allowed)
    return [entry.tool for entry in entries.values()], calls, toolsets


def retry_budget(options: SlotOptions, budget: SlotBudget) -> int:
    """How many invalid tool calls / typed answers are fed back before the slot fails: `retries=`, else as
    many as the slot's requests allow (each retry is a request, so the budget still bounds it; pydantic-ai's
    own default of 1 failed whole runs of small models that fumble an argument twice)."""
    if options.retries is not None:
        return options.retries
    return budget.limits.request_limit or MAX_REQUESTS


def _instructions(spec: SlotSpec, rendered: RenderedSlot, now: datetime) -> str | None:
    """The slot's `<system>` text, plus the reference time for a temporal slot."""
    if spec.type not in TEMPORAL_TYPES:
        return rendered.system
    note = reference_note(now)
    return note if rendered.system is None else f"{rendered.system}\n\n{note}"


def _validator(check: Check, stream: SlotStream) -> Any:
    """An output validator: a free-text answer that fails `check` is retried, its shown text withdrawn."""

    def validate(text: str) -> str:
        problem = check(text)
        if problem is None:
            return text
        stream.retract("errored")
        raise ModelRetry(problem)

    return validate


def _report_retry(state: RunState, slot: str, notice: RetryNotice) -> None:
    """A provider request of this slot failed transiently and will be retried after `notice.delay_s`."""
    state.emit(
        Retrying(run_id=state.run_id, slot=slot, attempt=notice.attempt, delay_s=notice.delay_s, reason=notice.reason)
    )


def _fail(
    state: RunState,
    stream: SlotStream,
    call: _AgentCall | None,
    status: RunStatus,
    error: str,
    retract: Literal["halted", "errored"] | None,
    *,
    keep_partial: bool = False,
) -> None:
    slot = stream.slot
    if call is not None:
        call.requests.abandon("stopped" if status == "stopped" else "failed")
    if stream.usage is not None:
        state.usage.update(slot, stream.usage)  # what a failed slot spent still counts
    partial = stream.shown
    if partial:
        state.partial[slot] = partial  # kept even when retracted below: a failed request's text is not lost
    if retract is not None:
        stream.retract(retract)
    state.emit(
        SlotFailed(
            run_id=state.run_id,
            slot=slot,
            status=status,
            error=error,
            partial=partial if keep_partial else "",
        )
    )


faster_init(SlotOutcome, _AgentCall)  # one each per slot run (`formats/frozen.py`)
