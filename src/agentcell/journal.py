"""The run journal: every event of a run appended to a JSONL file as it happens (SPEC §3.11).

One file per run, `<dir>/<run_id>.jsonl`, where `<dir>` is the per-user data folder
(`~/.local/share/agentcell/journal` on Linux), the `AGENTCELL_JOURNAL` environment variable (a
folder, or `off`), or what `start_run(journal=...)` names. Each line is one row:

* `{"ts", "seg", "event": {...}}` — an event as its dataclass fields plus `kind` (the wire shape);
  `request_completed` rows are the per-request rows (slot, request number, usage, latency);
* `{"ts", "seg", "slot", "index", "messages": [...]}` — pydantic-ai messages of a slot's record from
  `index` on (written before each request and after each response, so a crash loses at most the
  request in flight);
* `{"ts", "seg", "history": [...]}` — the conversation the run was seeded with (`history=`).

Each row is one `write` of a whole line followed by a flush to the OS, so a process that dies
(`os._exit`, a killed kernel) leaves every row written before it. `load(run_id)` restores the run
from it, and `usage_totals(run_id)` sums its request rows.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import Discriminator, TypeAdapter
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import PydanticSerializationError

from .errors import AgentcellError
from .events import (
    Event,
    ProcessingComplete,
    RequestCompleted,
    RunStarted,
    RunStatus,
    Usage,
    UsageUpdated,
)
from .result import RunResult
from .transcript import Transcript
from .wire import scrub

JOURNAL_ENV = "AGENTCELL_JOURNAL"
_OFF = frozenset({"0", "off", "false", "no", "none"})

JournalOption = bool | str | os.PathLike[str] | None
"""`None`: the default (on, unless `AGENTCELL_JOURNAL=off`); `False`: off; `True`: the default folder;
a folder, or a `.jsonl` file path."""



@functools.cache
def event_adapter() -> TypeAdapter[Event]:
    """Events to and from JSON by their `kind` (built on first use: it costs a few milliseconds)."""
    adapter: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Discriminator("kind")])
    adapter.rebuild(_types_namespace={"RunResult": RunResult})  # `ProcessingComplete.result`'s forward ref
    return adapter


def default_dir() -> Path:
    """`$AGENTCELL_JOURNAL` if it names a folder, else the per-user data folder's `agentcell/journal`."""
    env = os.environ.get(JOURNAL_ENV, "").strip()
    if env and env.lower() not in _OFF:
        return Path(env).expanduser()
    try:
        import platformdirs
    except ImportError:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        return base / "agentcell" / "journal"
    return Path(platformdirs.user_data_dir("agentcell", appauthor=False)) / "journal"


def journal_path(run_id: str, option: JournalOption = None) -> Path | None:
    """Where run `run_id` is journaled under `option`, or `None` when journaling is off."""
    if option is False:
        return None
    if option is None and os.environ.get(JOURNAL_ENV, "").strip().lower() in _OFF - {""}:
        return None
    if option is None or option is True:
        return default_dir() / f"{run_id}.jsonl"
    path = Path(option).expanduser()
    return path if path.suffix == ".jsonl" else path / f"{run_id}.jsonl"


class Journal:
    """Appends a run's rows to its file; one line per row, flushed as written."""

    def __init__(self, path: Path, *, segment: int = 1) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.segment = segment
        self._file: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 — held open for the run, closed by close()

    def event(self, event: Event) -> None:
        """Append one event."""
        self._row(b'"event":' + _dump(event_adapter(), event))
        if isinstance(event, ProcessingComplete):
            self.close()

    def messages(self, slot: str, index: int, messages: Sequence[ModelMessage]) -> None:
        """Append slot `slot`'s record messages from position `index` on."""
        body = _dump(ModelMessagesTypeAdapter, list(messages))
        self._row(b'"slot":' + _json(slot) + b',"index":%d,"messages":' % index + body)

    def history(self, messages: Sequence[ModelMessage]) -> None:
        """Append the conversation the run was seeded with."""
        self._row(b'"history":' + _dump(ModelMessagesTypeAdapter, list(messages)))

    def _row(self, body: bytes) -> None:
        if self._file is None:
            return
        self._file.write(b'{"ts":%.3f,"seg":%d,' % (time.time(), self.segment) + body + b"}\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _json(value: Any) -> bytes:
    return json.dumps(scrub(value)[0], ensure_ascii=False).encode()


def _dump(adapter: TypeAdapter[Any], value: Any) -> bytes:
    """`value` as UTF-8 JSON; text that is not valid UTF-8 (lone surrogates) is replaced, not fatal."""
    try:
        return adapter.dump_json(value, fallback=repr)
    except PydanticSerializationError:
        return _json(adapter.dump_python(value, mode="json", fallback=repr))


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

    Raises:
        AgentcellError: no journal exists for `run_id` there.
    """
    file = journal_path(run_id, True if path is None else path)
    assert file is not None
    if not file.exists():
        raise AgentcellError(f"no journal for run {run_id!r} at {file} (was it journaled? pass path=...)")
    events: list[Event] = []
    history: tuple[ModelMessage, ...] = ()
    slots: dict[str, list[ModelMessage]] = {}
    for row in _rows(file):
        if "event" in row:
            events.append(event_adapter().validate_python(row["event"]))
        elif "history" in row:
            history = tuple(ModelMessagesTypeAdapter.validate_python(row["history"]))
        elif "messages" in row:
            known = slots.setdefault(row["slot"], [])
            del known[row["index"] :]  # a later row (a resumed segment) rewrites from its index on
            known.extend(ModelMessagesTypeAdapter.validate_python(row["messages"]))
    started = next((e for e in reversed(events) if isinstance(e, RunStarted)), None)
    answer_slots = tuple(s.name for s in started.slots if s.type != "halt") if started else ()
    return JournalRecord(
        run_id=run_id,
        path=file,
        events=tuple(events),
        history=history,
        slot_messages={slot: tuple(messages) for slot, messages in slots.items()},
        answer_slots=answer_slots,
        usage=_totals(events),
        finished=bool(events) and isinstance(events[-1], ProcessingComplete),
    )


def usage_totals(run_id: str, *, path: str | os.PathLike[str] | None = None) -> Usage:
    """The run's usage from its journal: requests, tokens and cost summed over its request rows;
    tool calls as last reported."""
    return load(run_id, path=path).usage


def _totals(events: Sequence[Event]) -> Usage:
    total = Usage()
    tool_calls = 0
    for event in events:
        if isinstance(event, RequestCompleted):
            total = total + event.usage
        elif isinstance(event, UsageUpdated):
            tool_calls = event.usage.tool_calls
    return Usage(
        requests=total.requests,
        tool_calls=tool_calls,
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        cost=total.cost,
    )


def _rows(file: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with open(file, "rb") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by a crash mid-write
    return rows
