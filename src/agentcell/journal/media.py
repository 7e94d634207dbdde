"""Images (documents, audio) of a journaled run: each stored once, by digest, beside the run's file.

A run that sends a 4 MB figure in three requests would otherwise write it into every message row and
the final result (base64: 5.4 MB a time). Instead the rows hold a reference (`media.content`'s hollowed
`BinaryContent`) and the bytes go once to `<run>.media/<sha256>` — a 0700 folder of 0600 files, as the
journal itself. Reading a journal fills the references back in; a missing file leaves a reference.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage

from ..media.content import filled_messages, hollow_messages
from ..media.parts import MediaPart
from .paths import private_dir


def media_folder(journal: Path) -> Path:
    """`runs/abc.jsonl` → `runs/abc.media`."""
    return journal.with_name(journal.stem + ".media")


class MediaStore:
    """Writes each part's bytes once per run (by digest); never raises into the run (a failure is noted)."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.stored: set[str] = set()
        self.failed: str | None = None

    @property
    def folder(self) -> Path:
        """Where the bytes go (worked out when a part is kept: most runs, a batch's rows, keep none)."""
        return media_folder(self.journal)

    def keep(self, part: MediaPart) -> None:
        if part.digest in self.stored or not part.data:
            return
        self.stored.add(part.digest)
        folder = self.folder
        try:
            private_dir(folder)
            fd = os.open(folder / part.digest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # a resumed segment's run stored it already
            return
        except OSError as exc:
            self.failed = f"{type(exc).__name__}: {exc}"
            return
        with os.fdopen(fd, "wb") as file:
            try:
                file.write(part.data)
            except OSError as exc:
                self.failed = f"{type(exc).__name__}: {exc}"

    def hollow(self, messages: Sequence[ModelMessage]) -> list[ModelMessage]:
        return hollow_messages(messages, self.keep)

    def hollow_result(self, result: Any) -> Any:
        """A `RunResult` whose messages hold references (the final row is the biggest holder of images)."""
        slots = {name: tuple(self.hollow(messages)) for name, messages in result.slot_messages.items()}
        return dataclasses.replace(result, messages=tuple(self.hollow(result.messages)), slot_messages=slots)


def filled(journal: Path, messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """`messages` with their references to `journal`'s media folder read back."""
    folder = media_folder(journal)

    def load(digest: str) -> bytes | None:
        if not digest.isalnum():
            return None
        with contextlib.suppress(OSError):
            return (folder / digest).read_bytes()
        return None

    return filled_messages(messages, load)


def filled_result(journal: Path, result: Any) -> Any:
    slots = {name: tuple(filled(journal, messages)) for name, messages in result.slot_messages.items()}
    return dataclasses.replace(result, messages=tuple(filled(journal, result.messages)), slot_messages=slots)
