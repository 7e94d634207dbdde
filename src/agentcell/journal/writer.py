"""Appending a run's rows: one line per row, written in batches, bounded, never raising into the run.

Rows are kept in memory and written with one `write` + `flush` per batch (not one per row: a streamed
answer made a row per token). A batch goes to the OS **at most `FLUSH_INTERVAL` (0.2 s) after its first
row** (one timer per event loop writes every journal's waiting rows: `_Flusher`), and at once when a row
marks a boundary (`FLUSH_KINDS`: before a tool runs, when an approval is asked, when a slot ends, when
the run ends). So a process that dies (`os._exit`, a killed kernel) loses at most the rows of its last
0.2 s, and never the rows before a tool call that killed it. Without a running event loop (no timer)
every row is written at once. (Streamed text reaches the journal merged, up to 20 ms after the model
sent it: `engine/coalesce.py`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import time
import weakref
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Annotated, Any

from pydantic import Discriminator, TypeAdapter
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import PydanticSerializationError, to_json

from ..events import Event, ProcessingComplete, ThinkingDelta, TokenDelta
from ..events.json import wire_fields
from ..formats.jsonsafe import scrub
from ..formats.long_strings import messages_long_free
from ..result import RunResult
from .ending import FORMAT, WITHOUT_MESSAGES, Ledger, values_long_free
from .media import MediaStore
from .paths import AppendFile, open_sized
from .rowjson import LongStrings, LongText, dump_pieces

MAX_MB_ENV = "AGENTCELL_JOURNAL_MAX_MB"
DEFAULT_MAX_MB = 64.0
"""A run's journal stops growing past this many megabytes (`AGENTCELL_JOURNAL_MAX_MB`, `0`: no cap)."""
FLUSH_INTERVAL = 0.2
"""Seconds a row may wait in memory before it is written (the crash-safety interval)."""
FLUSH_KINDS = frozenset({"tool_started", "approval_requested", "slot_completed", "slot_failed", "processing_complete"})
"""Event kinds whose row is written at once, with every row before it."""


@functools.cache
def event_adapter() -> TypeAdapter[Event]:
    """Events to and from JSON by their `kind` (built on first use: it costs a few milliseconds)."""
    adapter: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Discriminator("kind")])
    adapter.rebuild(_types_namespace={"RunResult": RunResult})  # `ProcessingComplete.result`'s forward ref
    return adapter


def _long_free(event: Event, known: bool | None) -> bool:
    """Whether `event`'s row holds no long string (then it is dumped whole, in C: `rowjson.dump_pieces`).

    `known`: what the caller learnt from the event's wire conversion (the run's sink makes it anyway)."""
    return known if known is not None else wire_fields(event)[2]


def max_bytes_from_env() -> int | None:
    """The per-run cap in bytes: `AGENTCELL_JOURNAL_MAX_MB`, else `DEFAULT_MAX_MB`; `None` for no cap."""
    raw = os.environ.get(MAX_MB_ENV, "").strip()
    try:
        megabytes = float(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    return None if megabytes <= 0 else int(megabytes * 1024 * 1024)


class Journal:
    """Appends a run's rows to its file (0600, in a 0700 folder); one line per row, written in batches.

    Writing never raises into the run: a full disk, a vanished folder, a value that cannot be written
    or the size cap stops the journal and sets `stopped` to the reason (the run says so in a warning;
    a failed timed write is noticed at the next row). See the module docstring for when rows reach the OS.
    """

    def __init__(self, path: Path, *, segment: int = 1, max_bytes: int | None = -1) -> None:
        self.path = path
        self.segment = segment
        self.max_bytes = max_bytes_from_env() if max_bytes == -1 else max_bytes
        """The cap on the file's size (a resumed run's segments share it); `None`: no cap."""
        self.stopped: str | None = None
        """Why the journal stopped writing before the run ended (`None` while it writes)."""
        self._file: AppendFile | None
        self._file, self._size = open_sized(path)
        self._rows: list[bytes | LongText] = []
        """Rows made and not yet written, as pieces of their lines."""
        self._waiting: _Flusher | None = None
        """The loop's flusher this journal waits on, while rows wait to be written."""
        self._ledger = Ledger()
        """The message objects the rows were made from: the last row leaves out what they hold (`ending.py`)."""
        self._long = LongStrings()
        """Long strings measured once for every row that holds them (`rowjson.py`)."""
        self._heads: dict[tuple[str, str, int, str], bytes] = {}
        """A text delta row's JSON up to its text, by run, slot, round and kind."""
        self.writes = 0
        """Batches written so far (tests read it: one per batch, not one per row)."""
        self.media = MediaStore(path)
        """Each image of the run, once, beside the file (`media.py`); the rows hold references."""

    def event(self, event: Event, *, long_free: bool | None = None, dumped: bytes | None = None) -> None:
        """Append one event (`long_free`: whether no string of it is long, when the caller knows; `dumped`: its
        JSON as `event_adapter()` writes it, when the caller made it: the run's sink, `events.json.wire_json`)."""
        kind = type(event)
        if dumped is not None:  # most events of a run: the bytes the sink's check made, not a second dump
            self._line(b'"event":%s}\n' % dumped)
        elif kind is TokenDelta or kind is ThinkingDelta:  # one per streamed batch: skip the generic serializer
            self._line(self._delta(event))  # type: ignore[arg-type]
        elif isinstance(event, ProcessingComplete):
            self._ending(event)
        else:
            free = _long_free(event, long_free)
            self._row(lambda: (b'"event":', *self._dump(event_adapter(), event, long_free=free)))
        if isinstance(event, ProcessingComplete):
            self.close()
        elif event.kind in FLUSH_KINDS:
            self.flush()

    def _delta(self, event: TokenDelta | ThinkingDelta) -> bytes:
        """A text delta's row after `"seg":N,`, as `event_adapter()` would write it (tests pin the two to the same
        JSON)."""
        key = (event.run_id, event.slot, event.round, event.kind)
        head = self._heads.get(key)
        if head is None:
            head = self._heads[key] = b'"event":{"run_id":%s,"slot":%s,"round":%d,"kind":"%s","text":' % (
                _json(event.run_id), _json(event.slot), event.round, event.kind.encode())
        text = event.text
        if text.isascii():  # nothing to scrub: the C encoder alone, without `json.dumps`' machinery
            return head + encode_basestring_ascii(text).encode() + b"}}\n"
        return head + _json(text) + b"}}\n"

    def messages(self, slot: str, index: int, messages: Sequence[ModelMessage]) -> None:
        """Append slot `slot`'s record messages from position `index` on."""
        self._ledger.wrote(slot, index, messages)
        messages = self.media.hollow(messages)
        self._row(
            lambda: (b'"slot":' + _json(slot) + b',"index":%d,"messages":' % index,
                     *self._dump(ModelMessagesTypeAdapter, list(messages), long_free=messages_long_free(messages)))
        )

    def history(self, messages: Sequence[ModelMessage]) -> None:
        """Append the conversation the run was seeded with (none in a first segment: no row, the reader's default;
        a later segment writes even an empty one, which replaces an earlier segment's)."""
        self._ledger.wrote_history(messages)
        if not messages and self.segment == 1:
            return
        messages = self.media.hollow(messages)
        self._row(lambda: (b'"history":', *self._dump(ModelMessagesTypeAdapter, list(messages),
                                                        long_free=messages_long_free(messages))))

    def _ending(self, event: ProcessingComplete) -> None:
        """The run's last row, without the messages the rows before it hold (`ending.py`: format 2)."""
        end = self._ledger.ending(event.result)
        tails = {slot: self.media.hollow(tail) for slot, tail in end.tails.items()}
        whole = None if end.messages is None else self.media.hollow(end.messages)
        free = (values_long_free(event.result) and all(map(messages_long_free, tails.values()))
                and (whole is None or messages_long_free(whole)))

        def body() -> tuple[bytes | LongText, ...]:
            starts = b',"from":' + _plain(end.starts)
            if end.patches:
                starts += b',"patches":' + _plain(end.patches)
            pieces: tuple[bytes | LongText, ...] = (
                b'"format":%d,"event":' % FORMAT,
                *self._dump(event_adapter(), event, long_free=free, exclude=WITHOUT_MESSAGES),
                starts + b',"tails":{',
            )
            comma = b""
            for slot, tail in tails.items():  # one dump per slot (not an adapter of their own: 0.3 s to build)
                if tail:
                    pieces += (comma + json.dumps(slot).encode() + b":",
                               *self._dump(ModelMessagesTypeAdapter, tail, long_free=free))
                    comma = b","
            pieces += (b"}",)
            if whole is None:
                return pieces
            return (*pieces, b',"result_messages":', *self._dump(ModelMessagesTypeAdapter, whole, long_free=free))

        self._row(body)

    def _dump(
        self, adapter: TypeAdapter[Any], value: Any, *, long_free: bool, exclude: Any = None
    ) -> tuple[bytes | LongText, ...]:
        """`value` as UTF-8 JSON pieces; text that is not valid UTF-8 (lone surrogates) is replaced, not fatal."""
        try:
            return dump_pieces(adapter, value, self._long, long_free=long_free, exclude=exclude)
        except PydanticSerializationError:
            return (_json(adapter.dump_python(value, mode="json", fallback=repr, exclude=exclude)),)

    def _row(self, body: Callable[[], tuple[bytes | LongText, ...]]) -> None:
        """Queue one row; `body` gives its JSON after `"seg":N,` as pieces, written as they are.

        The pieces are never concatenated into a line nor joined into a batch: a row that holds a long
        answer (the run's end holds it several times) would be copied twice more. Its long strings are
        `LongText`s, encoded only as they are written (`rowjson.py`).
        """
        if self._file is None:
            return
        try:
            pieces = (b'{"ts":%.3f,"seg":%d,' % (time.time(), self.segment), *body(), b"}\n")
        except (ValueError, RecursionError) as exc:  # an unwritable value
            self._stop(f"{type(exc).__name__}: {exc}")
            return
        self._queue(pieces, sum(map(len, pieces)))

    def _line(self, rest: bytes) -> None:
        """Queue one row made whole (an event shorter than `LONG`, a text delta): `rest` is its JSON after
        `"seg":N,`, with its end."""
        if self._file is not None:
            line = b'{"ts":%.3f,"seg":%d,%s' % (time.time(), self.segment, rest)
            self._queue((line,), len(line))

    def _queue(self, pieces: tuple[bytes | LongText, ...], size: int) -> None:
        if self.max_bytes is not None and self._size + size > self.max_bytes:
            megabytes = self.max_bytes / 1024 / 1024
            self._stop(
                f"the journal reached its cap of {megabytes:.3g} MB per run ({MAX_MB_ENV}); "
                "the rest of this run is not journaled"
            )
            return
        self._rows.extend(pieces)
        self._size += size
        if self._waiting is None:
            try:
                flusher = _flusher(asyncio.get_running_loop())
            except RuntimeError:  # no event loop: nothing would write the batch later
                self.flush()
                return
            flusher.add(self)
            self._waiting = flusher

    def _timed_flush(self) -> None:
        self._waiting = None
        self.flush()

    def flush(self) -> None:
        """Write the rows made so far (one `write`, then a flush to the OS)."""
        if self._waiting is not None:
            self._waiting.discard(self)
            self._waiting = None
        if not self._rows or self._file is None:
            return
        rows, self._rows = self._rows, []
        try:
            write = self._file.write
            try:
                write(b"".join(rows))  # type: ignore[arg-type]  # one write to the OS per batch
            except TypeError:  # a long string among them (a `LongText`): written a slice at a time
                for piece in rows:
                    if isinstance(piece, LongText):
                        piece.write(write)
                    else:
                        write(piece)
            self._file.flush()
        except (OSError, ValueError) as exc:  # disk full, folder gone
            self._stop(f"{type(exc).__name__}: {exc}")
            return
        self.writes += 1

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        self.close()

    def close(self) -> None:
        """Write what is left and close the file."""
        if self._file is not None:
            self.flush()
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        self._long.clear()


class _Flusher:
    """The one timer of a loop that writes every journal's waiting rows, `FLUSH_INTERVAL` after the first of them.

    One per loop, not one per journal: a batch runs 64 journals at once, each of which armed, and mostly
    cancelled, a timer of its own several times per row (a timer handle, a heap push, a cancelled entry for the
    loop to skip). A row still reaches the OS at most `FLUSH_INTERVAL` after it was made.
    """

    __slots__ = ("__weakref__", "_loop", "_timer", "_waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: dict[Journal, None] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, journal: Journal) -> None:
        self._waiting[journal] = None
        if self._timer is None:
            self._timer = self._loop.call_later(FLUSH_INTERVAL, self._fire)

    def discard(self, journal: Journal) -> None:
        self._waiting.pop(journal, None)

    def _fire(self) -> None:
        self._timer = None
        waiting, self._waiting = self._waiting, {}
        for journal in waiting:
            journal._timed_flush()


_FLUSHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Flusher] = weakref.WeakKeyDictionary()


def _flusher(loop: asyncio.AbstractEventLoop) -> _Flusher:
    flusher = _FLUSHERS.get(loop)
    if flusher is None:
        flusher = _FLUSHERS[loop] = _Flusher(loop)
    return flusher


def _plain(value: Any) -> bytes:
    """Plain JSON data (dicts of names, numbers and short text) as JSON, in C; `_json` for text that is not
    valid UTF-8."""
    try:
        return to_json(value)
    except PydanticSerializationError:
        return _json(value)


def _json(value: Any) -> bytes:
    return json.dumps(scrub(value)[0], ensure_ascii=False).encode()
