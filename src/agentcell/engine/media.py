"""The engine's side of media: check a slot's prompt before its request, tell the views, and tools' pictures.

* Before a slot's first request: each image, document or audio file in its prompt is checked against the
  model's profile (pydantic-ai's `supports_image_input` and friends) and the per-request byte cap; a model
  known not to read images is one sentence naming the value and the slot, and no request is made.
* Every media part that reaches the model (prompt or tool result) becomes a `MediaAdded` event; its
  thumbnail is made in a worker thread (Pillow's work stays off the kernel's loop) and travels once per
  image per run. The journal keeps the bytes once per digest (`journal/media.py`).
* A tool that returns a figure, an image or a table (or a toolset's result holding pydantic-ai content parts,
  an MCP server's image): `tool_result` gives pydantic-ai a `ToolReturn` whose content parts carry the
  picture, made in a worker thread too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from pydantic_ai.models import Model

from ..errors import MediaError
from ..events import MediaAdded
from ..media.content import tool_return
from ..media.convert import may_be_media, prompt_value
from ..media.limits import check_request
from ..media.parts import Media, MediaPart, MediaUrl
from ..media.thumbs import thumbnail
from ..media.tool_parts import holds_parts, tool_parts
from ..template.program import Turn
from .results import convert_result
from .state import RunState


def prompt_media(turns: Sequence[Turn]) -> list[Media]:
    """The media parts of `turns`, in order."""
    return [piece for turn in turns for piece in turn.parts if isinstance(piece, MediaPart | MediaUrl)]


def check_model_reads(model: Model, media: Sequence[Media], *, slot: str) -> None:
    """`MediaError` (one sentence naming the value and the slot) when `model` is known not to read a part."""
    if not media:
        return
    where = f"[[{slot}]]"
    check_request(media, where=where)
    profile = model.profile  # a TypedDict: a key left out means pydantic-ai's default, True
    for part in media:
        key = {"image": "supports_image_input", "document": "supports_document_input",
               "audio": "supports_audio_file_input"}[part.media_kind]
        reads = profile.get(key, True)
        if not reads:
            what = f"{{{{ {part.name} }}}}" if part.name and "." not in part.name else part.name or "a value"
            raise MediaError(
                f"the prompt of {where} holds {what}, {part.label}, and the model {model.model_name!r} does not "
                f"accept {part.media_kind}s; use a model that does, leave {what} out, or run with "
                "--describe-media to send a text description instead"
            )


def describing(describer: Model | None) -> list[Any] | None:
    """The run's capabilities for `--describe-media`: pydantic-ai's `FileUnderstanding` with `describer`."""
    if describer is None:
        return None
    from pydantic_ai.capabilities import FileUnderstanding

    return [FileUnderstanding(fallback_subagent_model=describer)]


async def announce(
    state: RunState, slot: str, media: Sequence[Media], *, call_id: str | None = None, round: int = 1
) -> None:
    """A `MediaAdded` per part; each image's thumbnail (made in a thread) goes with its first event only."""
    for part in media:
        ref = part.ref
        thumb = ""
        if ref.digest not in state.media_shown:
            state.media_shown.add(ref.digest)
            if isinstance(part, MediaPart):
                thumb = await anyio.to_thread.run_sync(thumbnail, part, abandon_on_cancel=True)
        state.emit(MediaAdded(run_id=state.run_id, slot=slot, media=ref, label=ref.label, thumb=thumb,
                              call_id=call_id, round=round))


@dataclass(frozen=True, slots=True)
class ToolMedia:
    """A tool's return value that was media: the text views show, and what the model gets."""

    text: str
    for_model: Any
    """A `ToolReturn` with the parts (an image), or the Markdown text (a table)."""
    media: tuple[Media, ...] = ()


async def tool_result(value: Any) -> Any:
    """`value`, or a `ToolMedia` when it is a figure, an image or a table (converted in a worker thread), or
    holds pydantic-ai content parts (an MCP server's image or embedded file: `media/tool_parts.py`)."""
    if holds_parts(value):
        text, parts = await anyio.to_thread.run_sync(tool_parts, value, _clipped, abandon_on_cancel=True)
        if not parts:
            return ToolMedia(text=text, for_model=text)
        label = ", ".join(f"[{part.media_kind}: {part.label}]" for part in parts)
        return ToolMedia(text=text, for_model=tool_return(label, parts, text=text), media=parts)
    if not may_be_media(value):
        return value
    found = await anyio.to_thread.run_sync(prompt_value, value, abandon_on_cancel=True)
    if found is None:
        return value
    if isinstance(found, str):
        return ToolMedia(text=found, for_model=found)
    label = f"[{found.media_kind}: {found.label}]"
    return ToolMedia(text=label, for_model=tool_return(label, [found]), media=(found,))


def _clipped(text: str) -> str:
    """The text beside a result's parts, bounded like any tool result (`results.py`)."""
    return convert_result(text).text


__all__ = ["MediaError", "ToolMedia", "announce", "check_model_reads", "describing", "prompt_media", "tool_result"]
