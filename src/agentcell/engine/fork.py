"""Forking a finished run: keep its rounds 1..N exactly, change one thing, ask the model again from N+1.

`plan_fork` is pure: from the original's `RunResult`, its events and the template's slot order it
works out what the fork keeps — the finished slots before the forked one (their values, not run
again), the forked slot's messages up to the request that carried round N's tool results (with the
edits applied: that request is what the model reads first), and the original's events of that part
(re-tagged with the fork's run id, edited where a tool result was edited) so every view shows the kept
rounds as they happened. The model is never asked for those rounds and no tool of them runs again:
they go to the model as the history it continues from (`execute.ResumePoint`, the same path a resumed
run takes). `setup.fork_run` starts the fork from this plan.

Round numbers are the slot's own (1-based model requests), as every event carries them.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ..errors import ForkError
from ..events import (
    CheckpointReached,
    Event,
    RequestCompleted,
    RunResumed,
    SlotCompleted,
    SlotFailed,
    ToolCompleted,
)
from ..result import RunResult
from .eventlog import EventLog
from .execute import ResumePoint

KEEP_RECENT = 64
"""How many recent runs of this process can be forked: run id → its setup and its segments' logs (older ones
are forgotten; a fork needs the template, tools and options a run started with, which no result holds)."""
_RECENT: OrderedDict[str, tuple[Any, tuple[EventLog, ...]]] = OrderedDict()
_RECENT_LOCK = threading.Lock()


def remember(run_id: str, setup: Any, log: EventLog, *, segment: int) -> None:
    """Keep a starting run's setup (`setup._Setup`) and log; a resumed segment's log joins its run's."""
    with _RECENT_LOCK:  # runs start on more than one thread's loop (kernel subshells)
        earlier = _RECENT.pop(run_id, None)
        logs = (*earlier[1], log) if earlier is not None and segment > 1 else (log,)
        _RECENT[run_id] = (setup, logs)
        while len(_RECENT) > KEEP_RECENT:
            _RECENT.popitem(last=False)


def recent_run(run_id: str) -> tuple[Any, tuple[EventLog, ...]] | None:
    """The setup and segment logs of a recent run of this process, if still kept."""
    with _RECENT_LOCK:
        return _RECENT.get(run_id)


_DROPPED = frozenset({"run_started", "run_resumed", "usage_updated", "processing_complete", "run_warning"})
"""Event kinds never copied into a fork: it announces its own start and totals (its usage is its own requests)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ForkPlan:
    """What a fork keeps of its original, and the one marker that says so."""

    resume: ResumePoint
    """The kept slots' values and messages; the forked slot goes on from its (edited) rounds 1..N."""
    prelude: tuple[Event, ...] = ()
    """The original's events of the kept part, in order, without run id (`retag` sets the fork's)."""
    marker: RunResumed
    """Emitted after the prelude: the fork point (`forked_from`, `fork_round`, `edited`)."""
    edited: tuple[str, ...] = field(default_factory=tuple)


def plan_fork(
    original: RunResult,
    events: Sequence[Event],
    slot_order: Sequence[str],
    *,
    round: int,
    slot: str | None = None,
    tool_results: Mapping[str, Any] | None = None,
    message: str | None = None,
) -> ForkPlan:
    """The fork of `original` at `round` of `slot` (default: its last answer slot), with the edits applied.

    `tool_results` maps a call id, or a tool name (every call of that tool in the round), to the value
    the model reads instead; `message` replaces the slot's user message. `slot_order` is the template's
    slot names in order (the slots before the forked one are kept).

    Raises:
        ForkError: one sentence naming the real cause — a slot or round the run does not have, a round
            that gave the answer, a call id or tool the round did not call, an edit of round 0's results.
    """
    key = _slot_key(original, slot)
    messages = tuple(original.slot_messages.get(key, ()))
    responses = [i for i, m in enumerate(messages) if isinstance(m, ModelResponse)]
    last = _last_forkable(messages, responses, finished=key in original.results)
    if isinstance(round, bool) or not isinstance(round, int) or not 0 <= round <= last:
        raise ForkError(
            f"run {original.run_id} has no round {round!r} to fork [[{key}]] at: "
            + (f"pick a round from 0 to {last}" if last else "it can only be forked at round 0 (its start)")
        )
    if tool_results and round == 0:
        raise ForkError(f"round 0 of [[{key}]] has no tool results to edit; fork at round 1 or later")
    if not tool_results and message is None and not round:
        pass  # a plain re-run of the slot (another model, say) is a fork too
    cut = 1 if round == 0 else responses[round - 1] + 2  # the first request, or up to round N's tool results
    kept = list(messages[:cut])
    edited: list[str] = []
    results_text: dict[str, str] = {}
    if tool_results:
        kept[-1], results_text, edited = _edit_results(kept[-1], tool_results, key, round,
                                                       messages[responses[round - 1]])
    if message is not None:
        kept[0] = _edit_message(kept[0], message, key)
        edited.append("message")
    names_before = _names_before(slot_order, key)
    results = {name: original.results[name] for name in names_before if name in original.results}
    slot_messages = {k: v for k, v in original.slot_messages.items() if k != key and _name(k) in results}
    slot_messages[key] = tuple(kept)
    prelude = tuple(_prelude(events, key, round, set(slot_messages) | set(results), results_text))
    marker = RunResumed(
        run_id="", segment=2, kept=tuple(results), restarting=key,
        forked_from=original.run_id, fork_round=round, edited=tuple(edited),
    )
    return ForkPlan(resume=ResumePoint(results=results, slot_messages=slot_messages), prelude=prelude,
                    marker=marker, edited=tuple(edited))


def retag(event: Event, run_id: str) -> Event:
    """`event` as the fork's own (its run id)."""
    return replace(event, run_id=run_id)


def _slot_key(original: RunResult, slot: str | None) -> str:
    keys = [k for k in original.slot_messages if original.slot_messages[k]]
    if slot is None:
        if not keys:
            raise ForkError(f"run {original.run_id} asked no model anything, so it has no round to fork at")
        return keys[-1]
    if slot not in original.slot_messages:
        known = ", ".join(f"[[{k}]]" for k in keys) or "none"
        raise ForkError(f"run {original.run_id} has no answer slot [[{slot}]] to fork (its answer slots: {known})")
    return slot


def _last_forkable(messages: Sequence[ModelMessage], responses: Sequence[int], *, finished: bool) -> int:
    """The last round a fork can keep: one whose tool results went back (a finished slot's last round answered)."""
    last = 0
    for n, index in enumerate(responses, start=1):
        has_results = index + 1 < len(messages) and isinstance(messages[index + 1], ModelRequest)
        if has_results and not (finished and n == len(responses)):
            last = n
    return last


def _edit_results(
    request: ModelMessage, edits: Mapping[str, Any], key: str, round: int, response: ModelMessage
) -> tuple[ModelRequest, dict[str, str], list[str]]:
    """Round N's tool-results request with the named results replaced; call id → new text; what was edited."""
    assert isinstance(request, ModelRequest) and isinstance(response, ModelResponse)
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    if not calls:
        raise ForkError(f"round {round} of [[{key}]] called no tool, so it has no tool result to edit")
    chosen: dict[str, Any] = {}
    for name, value in edits.items():
        matched = [c for c in calls if c.tool_call_id == name] or [c for c in calls if c.tool_name == name]
        if not matched:
            listed = ", ".join(f"{c.tool_call_id} ({c.tool_name})" for c in calls)
            raise ForkError(f"round {round} of [[{key}]] has no tool call {name!r}; its calls are {listed}")
        for call in matched:
            chosen[call.tool_call_id] = value
    texts = {call_id: _as_text(value) for call_id, value in chosen.items()}
    parts: list[Any] = []
    for part in request.parts:
        if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id in chosen:
            parts.append(ToolReturnPart(tool_name=part.tool_name or "", content=chosen[part.tool_call_id],
                                        tool_call_id=part.tool_call_id))
        else:
            parts.append(part)
    names = {c.tool_call_id: c.tool_name for c in calls}
    edited = [f"{names[call_id]} ({call_id})" for call_id in chosen]
    return replace(request, parts=parts), texts, edited


def _edit_message(request: ModelMessage, message: str, key: str) -> ModelRequest:
    if not isinstance(request, ModelRequest) or not any(isinstance(p, UserPromptPart) for p in request.parts):
        raise ForkError(f"[[{key}]] was sent no user message of its own, so there is no message to edit")
    last = max(i for i, p in enumerate(request.parts) if isinstance(p, UserPromptPart))
    parts = [UserPromptPart(content=message) if i == last else p for i, p in enumerate(request.parts)]
    return replace(request, parts=parts)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)


def _name(key: str) -> str:
    """A slot's name from its event key (`summary[2]` → `summary`)."""
    return key.split("[", 1)[0].split("#", 1)[0]


def _names_before(order: Sequence[str], key: str) -> list[str]:
    name = _name(key)
    return list(order[: order.index(name)]) if name in order else []


def _prelude(
    events: Sequence[Event], key: str, round: int, kept: set[str], results: Mapping[str, str]
) -> list[Event]:
    """The original's events of the kept part, in order: the kept slots', the forked slot's up to round N."""
    out: list[Event] = []
    for event in events:
        if event.kind in _DROPPED:
            continue
        slot = getattr(event, "slot", None)
        if slot == key:
            if isinstance(event, SlotCompleted | SlotFailed) or _round_of(event) > round:
                break  # the rounds after the fork point (and the slot's ending) belong to the original only
            if isinstance(event, ToolCompleted) and event.call_id in results:
                event = replace(event, result=results[event.call_id], ok=True, error=None, was_cached=False)
            out.append(event)
        elif (slot is None and isinstance(event, CheckpointReached)) or slot in kept:
            out.append(event)
    return out


def _round_of(event: Event) -> int:
    if isinstance(event, RequestCompleted):
        return event.request
    value = getattr(event, "round", None)
    if isinstance(value, int):
        return value
    request = getattr(event, "request", None)
    return request if isinstance(request, int) else 0
