"""`RunResult`: what a finished run produced, whatever way it ended.

It is a plain value: `complete()` returns it, `ProcessingComplete` carries it, the widget shows it and
`Halted`/`BudgetExhausted` errors keep it in `.result`, so nothing a run produced is lost when it is
stopped, halted or fails. It reads by slot name the way struckdown's result does: `result["answer"]`,
`"answer" in result`, `result.keys()`, `result.response` (the last slot's value), `result.outputs`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, KeysView, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import to_jsonable_python

from .formats.openai import to_openai as openai_messages
from .usage import Limits, RunStatus, Usage


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
            "messages": ModelMessagesTypeAdapter.dump_python(list(self.messages), mode="json"),
        }
        return json.dumps(data, ensure_ascii=False)
