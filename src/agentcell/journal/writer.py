"""Appending a run's rows: one line per row, flushed as written, bounded, never raising into the run."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import Discriminator, TypeAdapter
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import PydanticSerializationError

from ..events import Event, ProcessingComplete
from ..result import RunResult
from ..wire import scrub
from .paths import open_private

MAX_MB_ENV = "AGENTCELL_JOURNAL_MAX_MB"
DEFAULT_MAX_MB = 64.0
"""A run's journal stops growing past this many megabytes (`AGENTCELL_JOURNAL_MAX_MB`, `0`: no cap)."""


@functools.cache
def event_adapter() -> TypeAdapter[Event]:
    """Events to and from JSON by their `kind` (built on first use: it costs a few milliseconds)."""
    adapter: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Discriminator("kind")])
    adapter.rebuild(_types_namespace={"RunResult": RunResult})  # `ProcessingComplete.result`'s forward ref
    return adapter


def max_bytes_from_env() -> int | None:
    """The per-run cap in bytes: `AGENTCELL_JOURNAL_MAX_MB`, else `DEFAULT_MAX_MB`; `None` for no cap."""
    raw = os.environ.get(MAX_MB_ENV, "").strip()
    try:
        megabytes = float(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    return None if megabytes <= 0 else int(megabytes * 1024 * 1024)


class Journal:
    """Appends a run's rows to its file (0600, in a 0700 folder); one line per row, flushed as written.

    Writing never raises into the run: a full disk, a vanished folder, a value that cannot be written
    or the size cap stops the journal and sets `stopped` to the reason (the run says so in a warning).
    """

    def __init__(self, path: Path, *, segment: int = 1, max_bytes: int | None = -1) -> None:
        self.path = path
        self.segment = segment
        self.max_bytes = max_bytes_from_env() if max_bytes == -1 else max_bytes
        """The cap on the file's size (a resumed run's segments share it); `None`: no cap."""
        self.stopped: str | None = None
        """Why the journal stopped writing before the run ended (`None` while it writes)."""
        self._file: IO[bytes] | None = open_private(path)
        self._size = path.stat().st_size

    def event(self, event: Event) -> None:
        """Append one event."""
        self._row(lambda: b'"event":' + _dump(event_adapter(), event))
        if isinstance(event, ProcessingComplete):
            self.close()

    def messages(self, slot: str, index: int, messages: Sequence[ModelMessage]) -> None:
        """Append slot `slot`'s record messages from position `index` on."""
        self._row(
            lambda: b'"slot":' + _json(slot) + b',"index":%d,"messages":' % index
            + _dump(ModelMessagesTypeAdapter, list(messages))
        )

    def history(self, messages: Sequence[ModelMessage]) -> None:
        """Append the conversation the run was seeded with."""
        self._row(lambda: b'"history":' + _dump(ModelMessagesTypeAdapter, list(messages)))

    def _row(self, body: Any) -> None:
        if self._file is None:
            return
        try:
            line = b'{"ts":%.3f,"seg":%d,' % (time.time(), self.segment) + body() + b"}\n"
            if self.max_bytes is not None and self._size + len(line) > self.max_bytes:
                megabytes = self.max_bytes / 1024 / 1024
                self._stop(
                    f"the journal reached its cap of {megabytes:.3g} MB per run ({MAX_MB_ENV}); "
                    "the rest of this run is not journaled"
                )
                return
            self._file.write(line)
            self._file.flush()
        except (OSError, ValueError, RecursionError) as exc:  # disk full, folder gone, unwritable value
            self._stop(f"{type(exc).__name__}: {exc}")
            return
        self._size += len(line)

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        self.close()

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
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
