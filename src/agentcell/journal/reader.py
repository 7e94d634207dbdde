"""Reading a journal back: `load(run_id)` → `JournalRecord`, whatever state the file is in.

A journal may hold rows this version cannot read: an event kind from a newer agentcell, a row cut
short when the process died mid-write, a hand-edited or corrupted line, JSON nested too deeply to
parse. `load` leaves such rows out with one `JournalWarning` listing them (`JournalRecord.skipped`)
and never raises anything but `AgentcellError`. It reads row by row with the garbage collector
paused: its passes over the growing list of parsed events made loading superlinear (320,000 token
events: 12.4 s with it running, 5.5 s paused; 80,000: 2.1 s and 1.5 s).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import typing
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from ..errors import AgentcellError, JournalWarning
from ..events import Event, ProcessingComplete, RequestCompleted, RunStarted, RunStatus, Usage, UsageUpdated
from ..result import RunResult
from ..transcript import Transcript
from .ending import rebuild
from .media import filled, filled_result
from .paths import journal_path
from .writer import event_adapter

SHOWN_SKIPS = 5
"""How many skipped rows the warning names (the record keeps all of them)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalRecord:
    """A run as its journal has it: complete, or up to the last row before a crash."""

    run_id: str
    path: Path
    events: tuple[Event, ...] = ()
    """Every journaled event, in order (several segments when the run was resumed)."""
    history: tuple[ModelMessage, ...] = ()
    slot_messages: dict[str, tuple[ModelMessage, ...]] = field(default_factory=dict)
    """Slot → the messages its agent run added, as far as they were journaled."""
    answer_slots: tuple[str, ...] = ()
    """The run's non-guard slots in template order (from `RunStarted`)."""
    usage: Usage = field(default_factory=Usage)
    finished: bool = False
    """True when the last segment reached `ProcessingComplete`; False after a crash."""
    skipped: tuple[str, ...] = ()
    """Rows that could not be read and were left out (line number and why), as the warning listed them."""

    @property
    def messages(self) -> tuple[ModelMessage, ...]:
        """The transcript so far: the seeded history, then each answer slot's messages in template order.

        A finished run gives its result's messages; otherwise they come from the message rows (the
        latest response as first seen, before pydantic-ai stamped it with its run ids).
        """
        last = self.events[-1] if self.events else None
        if isinstance(last, ProcessingComplete):
            return last.result.messages
        return (*self.history, *(m for s in self.answer_slots for m in self.slot_messages.get(s, ())))

    @property
    def status(self) -> RunStatus | None:
        """The last segment's final status, or `None` when it never finished (the process died)."""
        last = self.events[-1] if self.events else None
        return last.status if isinstance(last, ProcessingComplete) else None

    def transcript(self) -> Transcript:
        """The journaled events reduced by the one transcript reducer (every segment, in order)."""
        transcript = Transcript()
        for event in self.events:
            transcript.apply_event(event, t=0.0)
        return transcript

    def to_result(self) -> RunResult:
        """A `RunResult` for what the journal holds; a crashed run reads as `failed` and can be resumed."""
        last = self.events[-1] if self.events else None
        if isinstance(last, ProcessingComplete):
            return last.result
        transcript = self.transcript()
        results, model = transcript.results, transcript.model
        answers = [s for s in self.answer_slots if s in results]
        return RunResult(
            run_id=self.run_id,
            status="failed",
            error="the process running this run ended before the run did (restored from its journal)",
            results=results,
            answer=results.get(self.answer_slots[-1]) if self.answer_slots and answers else None,
            usage=self.usage,
            messages=self.messages,
            partial=transcript.partial,
            model=model,
            history_length=len(self.history),
            slot_messages={s: m for s, m in self.slot_messages.items() if s in self.answer_slots},
            segment=transcript.segment,
        )


def load(run_id: str, *, path: str | os.PathLike[str] | None = None) -> JournalRecord:
    """Restore run `run_id` from its journal (the default folder unless `path` names a folder or file).

    Rows that cannot be read are left out with a `JournalWarning` (see the module docstring).

    Raises:
        AgentcellError: `run_id` is not a valid run id, or no readable journal exists for it there.
    """
    file = journal_path(run_id, True if path is None else path)
    assert file is not None
    try:
        handle = open(file, "rb")  # noqa: SIM115 — closed by the with below
    except FileNotFoundError:
        raise AgentcellError(f"no journal for run {run_id!r} at {file} (was it journaled? pass path=...)") from None
    except OSError as exc:
        raise AgentcellError(f"cannot read the journal of run {run_id!r} at {file}: {exc}") from None
    reader = _Reader(file)
    try:
        with handle, _gc_paused():
            for number, line in enumerate(handle, 1):
                reader.read(number, line)
    except OSError as exc:
        raise AgentcellError(f"cannot read the journal of run {run_id!r} at {file}: {exc}") from None
    if reader.skipped:
        shown = "; ".join(reader.skipped[:SHOWN_SKIPS])
        more = f" (and {len(reader.skipped) - SHOWN_SKIPS} more)" if len(reader.skipped) > SHOWN_SKIPS else ""
        warnings.warn(
            JournalWarning(f"journal {file}: left out {len(reader.skipped)} unreadable row(s): {shown}{more}"),
            stacklevel=2,
        )
    return reader.record(run_id, file)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _known_kinds() -> frozenset[str]:
    """The event kinds this version reads (each event's `kind` field's default: with `slots=True` the class
    attribute is the slot's descriptor, not the string)."""
    return frozenset(member.__dataclass_fields__["kind"].default for member in typing.get_args(Event))


class _Reader:
    """The rows read so far, row by row."""

    def __init__(self, file: Path) -> None:
        self.file = file
        """The journal: its images are beside it (`media.py`)."""
        self.events: list[Event] = []
        self.history: tuple[ModelMessage, ...] = ()
        self.slots: dict[str, list[ModelMessage]] = {}
        self.skipped: list[str] = []
        self._kinds = _known_kinds()
        self._spent = Usage()
        """Requests, tokens and cost summed over the request rows read so far (as they are read: no pass at the end)."""
        self._tool_calls = 0
        """Tool calls as last reported."""

    def read(self, number: int, line: bytes) -> None:
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            if line.endswith(b"\n"):  # a last line without its newline was cut short by a crash: expected
                self.skipped.append(f"line {number}: not JSON")
            return
        if not isinstance(row, dict):
            self.skipped.append(f"line {number}: not a JSON object")
            return
        try:
            self._apply(row)
        except Exception as exc:  # any row we cannot read is left out, whatever its problem
            self.skipped.append(f"line {number}: {self._why(row, exc)}")

    def _apply(self, row: dict[str, Any]) -> None:
        if "event" in row:
            event = event_adapter().validate_python(row["event"])
            if isinstance(event, ProcessingComplete):
                event = replace(event, result=self._ending(event.result, row))
            self.events.append(event)
            if isinstance(event, RequestCompleted):
                self._spent = self._spent + event.usage
            elif isinstance(event, UsageUpdated):
                self._tool_calls = event.usage.tool_calls
        elif "history" in row:
            self.history = tuple(filled(self.file, ModelMessagesTypeAdapter.validate_python(row["history"])))
        elif "messages" in row:
            slot, index = row["slot"], row["index"]
            if not isinstance(slot, str) or not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise ValueError("a messages row needs a slot name and a position")
            messages = filled(self.file, ModelMessagesTypeAdapter.validate_python(row["messages"]))
            known = self.slots.setdefault(slot, [])
            del known[index:]  # a later row (a resumed segment) rewrites from its index on
            known.extend(messages)
        else:
            raise ValueError("neither an event, a history nor a messages row")

    def _ending(self, result: RunResult, row: dict[str, Any]) -> RunResult:
        """The run's result as its last row has it: whole (format 1), or with the messages the rows before
        it hold put back (format 2, `ending.py`)."""
        if "format" not in row:
            return filled_result(self.file, result)  # type: ignore[no-any-return]
        return rebuild(result, row, self.slots, self.history, lambda messages: filled(self.file, messages))

    def _why(self, row: dict[str, Any], exc: Exception) -> str:
        event = row.get("event")
        kind = event.get("kind") if isinstance(event, dict) else None
        if isinstance(event, dict) and kind not in self._kinds:
            return f"unknown event kind {kind!r} (written by a newer agentcell?)"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {first[:160]}"

    def record(self, run_id: str, file: Path) -> JournalRecord:
        events = self.events
        started = next((e for e in reversed(events) if isinstance(e, RunStarted)), None)
        answer_slots = tuple(s.name for s in started.slots if s.type != "halt") if started else ()
        return JournalRecord(
            run_id=run_id,
            path=file,
            events=tuple(events),
            history=self.history,
            slot_messages={slot: tuple(messages) for slot, messages in self.slots.items()},
            answer_slots=answer_slots,
            usage=replace(self._spent, tool_calls=self._tool_calls),
            finished=bool(events) and isinstance(events[-1], ProcessingComplete),
            skipped=tuple(self.skipped),
        )


def usage_totals(run_id: str, *, path: str | os.PathLike[str] | None = None) -> Usage:
    """The run's usage from its journal: requests, tokens and cost summed over its request rows;
    tool calls as last reported."""
    return load(run_id, path=path).usage
