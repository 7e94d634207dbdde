"""A run's event log: every event in order, for readers that follow it, reduced into its transcript.

Kept compactly: a stream's consecutive text deltas are one `_Deltas` entry, not one object per token
(`_Events`), and the transcript is reduced when it is read (`EventLog.transcript`).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import dataclasses
import time
from array import array
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import overload

from ..events import Event, ProcessingComplete, ThinkingDelta, TokenDelta
from ..events.json import Converted, wire_fields
from ..formats.pieces import CHUNK, worth_joining
from ..transcript import Transcript


class _Deltas:
    """A run of consecutive text deltas of one slot, round and kind, stored compactly.

    A million-token answer would otherwise keep a million `TokenDelta` objects (~70 bytes each) plus
    a string object per token (~50 bytes of overhead). Here small texts are joined every `CHUNK` into
    one string with the pieces' end offsets in an `array` (4–8 bytes a token); long ones (a fast
    stream, merged by `coalesce.py`) are kept as they are, shared with the transcript and the views
    (`text_pieces.py`). The events are made again when read (`events_so_far`, `follow()`), equal to
    the ones appended.
    """

    __slots__ = ("chunks", "ends", "first", "pending")

    def __init__(self, first: TokenDelta | ThinkingDelta) -> None:
        self.first = first
        self.chunks: list[str | list[str]] = []
        """Per `CHUNK` texts: one joined string (with `ends`), or the texts themselves when long."""
        self.ends: list[array[int] | None] = []
        self.pending: list[str] = [first.text]

    def same(self, event: Event) -> bool:
        first = self.first
        return (type(event) is type(first) and event.slot == first.slot
                and event.round == first.round and event.run_id == first.run_id)

    def add(self, text: str) -> None:
        self.pending.append(text)
        if len(self.pending) >= CHUNK:
            if not worth_joining(self.pending):
                self.chunks.append(self.pending)
                self.ends.append(None)
                self.pending = []
                return
            ends, at = array("Q"), 0
            for piece in self.pending:
                at += len(piece)
                ends.append(at)
            self.chunks.append("".join(self.pending))
            self.ends.append(ends)
            self.pending = []

    def __len__(self) -> int:
        return len(self.chunks) * CHUNK + len(self.pending)

    def text(self, k: int) -> str:
        chunk, j = divmod(k, CHUNK)
        if chunk == len(self.chunks):
            return self.pending[j]
        texts, ends = self.chunks[chunk], self.ends[chunk]
        if isinstance(texts, list):
            return texts[j]
        assert ends is not None
        return texts[ends[j - 1] if j else 0 : ends[j]]

    def event(self, k: int) -> Event:
        return self.first if k == 0 else dataclasses.replace(self.first, text=self.text(k))

    def parts(self, k: int = 0) -> list[str]:
        """The texts from the `k`-th on, as stored: whole chunks as they are, only the chunk `k` falls in cut."""
        chunk, j = divmod(k, CHUNK)
        if chunk == len(self.chunks):
            return self.pending[j:]
        parts: list[str] = []
        texts, ends = self.chunks[chunk], self.ends[chunk]
        if isinstance(texts, list):
            parts.extend(texts[j:])
        else:
            assert ends is not None
            parts.append(texts[ends[j - 1] if j else 0 :] if j else texts)
        for texts in self.chunks[chunk + 1 :]:
            if isinstance(texts, list):
                parts.extend(texts)
            else:
                parts.append(texts)
        parts.extend(self.pending)
        return parts


class TextRun:
    """Consecutive text deltas of one slot, round and kind from some position on, merged only when read.

    `join()` makes the text; `equals(text)` compares without joining, so a reader that can use another
    string holding the same text (a slot's answer: its `slot_completed` value) never copies a long answer.
    """

    __slots__ = ("_deltas", "_skip")

    def __init__(self, deltas: _Deltas, skip: int) -> None:
        self._deltas, self._skip = deltas, skip

    def join(self) -> str:
        parts = self._deltas.parts(self._skip)
        return parts[0] if len(parts) == 1 else "".join(parts)

    def equals(self, text: str) -> bool:
        parts = self._deltas.parts(self._skip)
        if sum(map(len, parts)) != len(text):
            return False
        at = 0
        for piece in parts:
            if not text.startswith(piece, at):
                return False
            at += len(piece)
        return True


class _Events(Sequence[Event]):
    """A run's events in order, with runs of text deltas stored as `_Deltas` (memory O(text), not O(tokens))."""

    def __init__(self) -> None:
        self._items: list[Event | _Deltas] = []
        self._starts: list[int] = []
        self._count = 0

    def append(self, event: Event) -> None:
        items = self._items
        if type(event) is TokenDelta or type(event) is ThinkingDelta:
            last = items[-1] if items else None
            if isinstance(last, _Deltas) and last.same(event):
                last.add(event.text)
            else:
                items.append(_Deltas(event))
                self._starts.append(self._count)
        else:
            items.append(event)
            self._starts.append(self._count)
        self._count += 1

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        at = bisect.bisect_right(self._starts, index) - 1
        item = self._items[at]
        return item.event(index - self._starts[at]) if isinstance(item, _Deltas) else item

    def __iter__(self) -> Iterator[Event]:
        return self.iter_from(0)

    def merged_from(self, index: int) -> Iterator[tuple[Event, TextRun | None, int, int]]:
        """The events from position `index` on, each run of consecutive text deltas (of one slot, round and
        kind) as one: `(event, its merged text or None, first position, last position)`.

        The one place streamed text is merged for the views: the widget's batches and snapshots, the batch
        view's open rows. A delta's `event` is the run's first one (take all but its `text` from it).
        """
        if index >= self._count:
            return
        at = bisect.bisect_right(self._starts, index) - 1
        skip = index - self._starts[at]
        items, starts = self._items, self._starts
        while at < len(items):
            item = items[at]
            if isinstance(item, _Deltas):
                yield item.first, TextRun(item, skip), starts[at] + skip, starts[at] + len(item) - 1
            else:
                yield item, None, starts[at], starts[at]
            skip = 0
            at += 1

    def iter_from(self, index: int) -> Iterator[Event]:
        """The events from position `index` on (what is appended while iterating is included)."""
        if index >= self._count:
            return
        at = bisect.bisect_right(self._starts, index) - 1
        skip = index - self._starts[at]
        while at < len(self._items):
            item = self._items[at]
            if isinstance(item, _Deltas):
                k = skip
                while k < len(item):
                    yield item.event(k)
                    k += 1
            elif not skip:
                yield item
            skip = 0
            at += 1


class EventLog:
    """Append-only list of a run's events that readers can follow, reduced into the run's transcript.

    The one record of a run in memory: the views keep no copy. The transcript is the one model of the
    run's state every reader shares (`Run.transcript`); a resumed run's segments reduce into the same
    one. Three kinds of reader: a cursor (`events.merged_from(position)`: the widget and the batch view
    read what came since their last batch, text deltas merged), `follow()` (async, wakes when events
    arrive) and `listen()` (called synchronously on every append: no task switch per event; the widget
    is told this way that there is something to send). An append costs O(1): it signals the async
    readers only when one is waiting (one `asyncio.Event` per wake-up of a caught-up reader, none per
    event), and creates nothing when nobody waits.

    The transcript is reduced when it is read (`transcript`), from the events it has not seen yet, not
    per append: a batch row's run and a script's run are never looked at while they run, the widget
    sends wire events rather than the transcript, and the reducer costs as much per event as the rest
    of the append. What waits is the events' times (8 bytes an event, the events themselves are kept
    anyway) and the wire conversions of the last `KEEP_CONVERTED` events (`events.json.wire_fields`,
    made once by the run's sink), which the reduction and the views' batches (`converted`) take
    instead of converting again.
    """

    KEEP_CONVERTED = 1024
    """Unreduced events whose wire conversion is kept for the reduction (older ones are converted again)."""

    def __init__(self, transcript: Transcript | None = None) -> None:
        self.events = _Events()
        self._transcript = transcript
        """Made at its first reading (a batch row's run is never looked at while it runs)."""
        self._times = array("d")
        """Seconds since the log began, per event."""
        self._reduced = 0
        """Events reduced into the transcript so far."""
        self._converted: dict[int, Converted] = {}
        """Position → wire conversion, for the latest unreduced events that are not text deltas."""
        self.t0 = time.monotonic()
        """`time.monotonic()` when the log began (the events' times count from it)."""
        self._wake: asyncio.Event | None = None
        """Set on the next append; exists only while an async reader waits."""
        self._listeners: list[Callable[[Event], None]] = []

    def append(self, event: Event, converted: Converted | None = None) -> None:
        """Add `event` (with its wire conversion when the caller made it: the run's sink does, to check it)."""
        events = self.events
        index = events._count  # `len(events)`, without the call per event
        events.append(event)
        self._times.append(time.monotonic() - self.t0)
        kind = type(event)
        if kind is not TokenDelta and kind is not ThinkingDelta:
            kept = self._converted
            kept[index] = converted if converted is not None else wire_fields(event)
            if len(kept) > self.KEEP_CONVERTED:
                del kept[next(iter(kept))]
        if self._listeners:
            for listener in self._listeners:
                listener(event)
        wake = self._wake
        if wake is not None:
            self._wake = None  # readers that wake and find nothing new wait on a fresh one
            wake.set()

    def time(self, index: int) -> float:
        """Seconds from the log's start to the event at `index`."""
        return self._times[index]

    def converted(self, index: int) -> Converted | None:
        """The wire conversion of the event at `index` if it is still kept (recent, not reduced yet)."""
        return self._converted.get(index)

    @property
    def transcript(self) -> Transcript:
        """The run's transcript with every event so far reduced into it."""
        if self._transcript is None:
            self._transcript = Transcript()
        if self._reduced < len(self.events):
            self._reduce()
        return self._transcript

    def _reduce(self) -> None:
        assert self._transcript is not None  # made by `transcript`, the one caller
        start, end = self._reduced, len(self.events)
        self._reduced = end
        apply, times, converted = self._transcript.apply_event, self._times, self._converted
        self._converted = {}
        for index, event in zip(range(start, end), self.events.iter_from(start), strict=False):
            apply(event, t=round(times[index], 3), converted=converted.get(index))

    def listen(self, listener: Callable[[Event], None]) -> None:
        """Call `listener(event)` for every event so far, then synchronously for every later one.

        It runs inside the run's `emit`: it must be quick and must not raise (wrap it; see `RunHandle`).
        """
        for event in list(self.events):
            listener(event)
        self._listeners.append(listener)

    def unlisten(self, listener: Callable[[Event], None]) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    async def follow(self) -> AsyncIterator[Event]:
        index = 0
        while True:
            while index < len(self.events):
                event = self.events[index]
                index += 1
                yield event
                if isinstance(event, ProcessingComplete):
                    return
            if self._wake is None:
                self._wake = asyncio.Event()
            await self._wake.wait()
