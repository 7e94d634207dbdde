"""`RunResult`: what a finished run produced, whatever way it ended.

It is a plain value: `complete()` returns it, `ProcessingComplete` carries it, the widget shows it and
`Halted`/`BudgetExhausted` errors keep it in `.result`, so nothing a run produced is lost when it is
stopped, halted or fails. It reads by slot name the way struckdown's result does: `result["answer"]`,
`"answer" in result`, `result.keys()`, `result.response` (the last slot's value), `result.outputs`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, KeysView, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import to_jsonable_python

from .formats.frozen import faster_init
from .formats.openai import to_openai as openai_messages
from .usage import Limits, RunStatus, Usage

FORKERS: list[Callable[..., Any]] = []
"""Who starts a fork: the engine registers itself here when it is imported (this value sits below it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """The outcome of one run."""

    run_id: str
    status: RunStatus
    """`completed | stopped | halted | budget_exhausted | failed`."""
    results: Mapping[str, Any] = field(default_factory=dict)
    """Slot name → value, for every slot that finished (on a halt: only slots before the guard)."""
    answer: Any = None
    """The value of the template's last answer slot, or `None` if it did not finish."""
    usage: Usage = field(default_factory=Usage)
    """Totals over every model request of the run, guards included."""
    messages: tuple[ModelMessage, ...] = ()
    """The whole conversation: the `history=` the run continued (its first `history_length` messages),
    then the answer slots' pydantic-ai messages in run order (guards' private prompts excluded). A chain
    of `--continue` cells therefore carries the whole chain, and `to_openai()` exports all of it."""
    warnings: tuple[str, ...] = ()
    """Clamped budgets, trailing template text and other things the user should know."""
    error: str | None = None
    """Why the run did not complete (`None` when it did)."""
    partial: Mapping[str, str] = field(default_factory=dict)
    """Slot name → answer text streamed before that slot was stopped or failed."""
    model: str = ""
    """Display name of the model (never a credential)."""
    limits: Limits = field(default_factory=Limits)
    """The per-slot ceiling the run used."""
    history_length: int = 0
    """How many of `messages` are the history the run was started with."""
    slot_messages: Mapping[str, tuple[ModelMessage, ...]] = field(default_factory=dict)
    """Answer slot name → the messages its agent run added (a stopped slot's finished rounds too); resume uses it."""
    segment: int = 1
    """1 for a run that was never resumed; each `resume()` adds one."""
    reference_time: str | None = None
    """The instant "now" meant for the run's temporal slots (ISO 8601 with its UTC offset)."""
    forked_from: str | None = None
    """A fork's original (`fork()`): that run's id; `None` for a run that was not forked."""
    fork_round: int | None = None
    """A fork: the last round of the forked slot it kept from the original (0: the slot was asked again)."""
    edited: tuple[str, ...] = ()
    """A fork: what it changed at the fork point (`lookup (c2)` for a tool result, `message`)."""

    def fork(
        self,
        round: int,
        *,
        slot: str | None = None,
        tool_results: Mapping[str, Any] | None = None,
        message: str | None = None,
        model: Any = None,
        **options: Any,
    ) -> Any:
        """Start a new run that keeps rounds 1..`round` of this one exactly and asks the model again from there.

        The kept rounds' model responses come from this run's record: no model request is sent for them
        and none of their tools runs again. `tool_results` replaces results of round `round` (keyed by
        call id, or by tool name for every call of that tool in the round); `message` replaces the slot's
        user message; `model` runs the rest on another model; `options` are `RunOptions` fields that
        change too (`limits=`, `journal=`...). `slot`: which answer slot (default: the run's last).
        Works on a finished, stopped or failed run of this process; returns the engine's `Run` (await
        it for the fork's `RunResult`). A `RunHandle` has `fork()` too, which shows the fork's widget. A run
        whose approvals its notebook view answered is forked like that too (the old view's buttons cannot
        answer the fork): its handle is returned, also awaitable. An explicit `approve=` keeps the engine's way.

        Raises:
            ForkError: a round, slot or call id this run does not have (one sentence; nothing started).
        """
        if not FORKERS:  # (not `ForkError`: `errors` sits above this value) the engine registers itself on import
            raise RuntimeError("forking needs the engine: start a run in this process first (agentcell.complete_async)")
        return FORKERS[0](self, round, slot=slot, tool_results=tool_results, message=message, model=model, **options)
    predictions: tuple[Mapping[str, Any], ...] = ()
    """Lesson mode's guesses (`predict=True`): `{slot, round, guess, actual, right}` each, in order."""

    def __repr__(self) -> str:
        # A `--wait` cell shows this as its value: keep it to what a person reads, not every message.
        answer = self.answer if self.answer is not None else next(reversed(list(self.partial.values())), None)
        shown = repr(answer) if not isinstance(answer, str) or len(answer) <= 80 else repr(answer[:77] + "...")
        usage = self.usage
        return (
            f"RunResult(status={self.status!r}, answer={shown}, slots={list(self.results)}, "
            f"requests={usage.requests}, tool_calls={usage.tool_calls}, messages={len(self.messages)})"
        )

    def __getitem__(self, slot: str) -> Any:
        """The value of the slot named `slot` (struckdown's `result["name"]`); `KeyError` if it did not finish."""
        return self.results[slot]

    def __contains__(self, slot: object) -> bool:
        return slot in self.results

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def keys(self) -> KeysView[str]:
        """The names of the slots that finished, in run order."""
        return self.results.keys()

    @property
    def outputs(self) -> Mapping[str, Any]:
        """Slot name → value (struckdown's name for `results`)."""
        return self.results

    @property
    def response(self) -> Any:
        """The value of the last slot that finished, `None` if none did (struckdown's `response`)."""
        return list(self.results.values())[-1] if self.results else None

    def to_openai(self) -> list[dict[str, Any]]:
        """The transcript as an OpenAI Chat Completions `messages` list."""
        return openai_messages(self.messages)

    def to_json(self) -> str:
        """Everything above as JSON (the transcript in pydantic-ai's own message format)."""
        data = {
            "run_id": self.run_id,
            "status": self.status,
            "results": to_jsonable_python(self.results, fallback=repr),
            "answer": to_jsonable_python(self.answer, fallback=repr),
            "usage": to_jsonable_python(self.usage),
            "warnings": list(self.warnings),
            "error": self.error,
            "partial": dict(self.partial),
            "model": self.model,
            "limits": to_jsonable_python(self.limits),
            "history_length": self.history_length,
            "segment": self.segment,
            "reference_time": self.reference_time,
            "forked_from": self.forked_from,
            "fork_round": self.fork_round,
            "edited": list(self.edited),
            "messages": ModelMessagesTypeAdapter.dump_python(list(self.messages), mode="json"),
        }
        return json.dumps(data, ensure_ascii=False)


faster_init(RunResult)  # one per run, copied by a batch row's result (`formats/frozen.py`)
