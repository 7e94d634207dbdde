"""Media ↔ pydantic-ai's content parts (`BinaryContent`, `ImageUrl`, `DocumentUrl`, `AudioUrl`).

The one place agentcell's media become pydantic-ai's and back: a user turn's pieces, a tool's
`ToolReturn`, and the reading side (views, the offline model, the journal) that finds media in messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic_ai import ToolReturn
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

from ..formats.media_refs import HOLLOW_KEY, hollow_digest
from .parts import Media, MediaKind, MediaPart, MediaRef, MediaUrl, media_part
from .sniff import sniff


def to_user_content(pieces: Sequence[str | Media]) -> list[UserContent]:
    """A turn's pieces as a pydantic-ai user prompt, in order."""
    return [piece if isinstance(piece, str) else to_pydantic(piece) for piece in pieces]


def to_pydantic(media: Media) -> UserContent:
    if isinstance(media, MediaUrl):
        if media.media_kind == "image":
            return ImageUrl(url=media.url)
        if media.media_kind == "audio":
            return AudioUrl(url=media.url)
        return DocumentUrl(url=media.url)
    return BinaryContent(data=media.data, media_type=media.media_type, identifier=media.digest[:12])


def from_pydantic(item: object) -> Media | None:
    """A pydantic-ai content item as agentcell media (`None` for text and other items)."""
    if isinstance(item, BinaryContent):
        found = sniff(item.data)
        kind: MediaKind = "image" if item.is_image else "audio" if item.is_audio else "document"
        return media_part(item.data, media_kind=kind, media_type=item.media_type,
                          width=found.width if found else None, height=found.height if found else None,
                          name=item.identifier or "")
    if isinstance(item, ImageUrl):
        return MediaUrl(url=item.url, media_kind="image")
    if isinstance(item, DocumentUrl):
        return MediaUrl(url=item.url, media_kind="document")
    if isinstance(item, AudioUrl):
        return MediaUrl(url=item.url, media_kind="audio")
    return None


def user_media(item: object) -> Media | None:
    """`from_pydantic`, also for a hollowed `BinaryContent` (its bytes kept elsewhere: a reference by digest)."""
    digest = hollow_digest(item)
    if digest is not None:
        assert isinstance(item, BinaryContent)
        kind: MediaKind = "image" if item.is_image else "audio" if item.is_audio else "document"
        return MediaPart(data=b"", media_kind=kind, media_type=item.media_type, digest=digest)
    return from_pydantic(item)


def tool_return(label: str, media: Sequence[Media], *, text: str | None = None) -> ToolReturn:
    """What a tool that returned media gives the model: a short text result and the parts themselves (`text`:
    the result's own text when it has more than the parts' `label`, which alone introduces the parts)."""
    content: list[UserContent] = [f"(the result of that call: {label})"]
    content.extend(to_pydantic(m) for m in media)
    return ToolReturn(return_value=label if text is None else text, content=content)


def media_in(messages: Iterable[ModelMessage]) -> list[Media]:
    """Every media part in `messages` (user prompts and tool returns), in order."""
    found: list[Media] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            items: Iterable[Any] = ()
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                items = part.content
            elif isinstance(part, ToolReturnPart):
                items = part.content if isinstance(part.content, list) else (part.content,)
            for item in items:
                media = from_pydantic(item)
                if media is not None:
                    found.append(media)
    return found


def refs(media: Iterable[Media]) -> tuple[MediaRef, ...]:
    return tuple(m.ref for m in media)


def is_media(item: object) -> bool:
    return isinstance(item, MediaPart | MediaUrl)


def hollow_messages(
    messages: Sequence[ModelMessage], keep: Callable[[MediaPart], None] | None = None
) -> list[ModelMessage]:
    """`messages` with each `BinaryContent`'s bytes replaced by a reference to their digest (`keep` gets
    each part first: the journal writes it once beside the run). Messages without bytes are the same objects."""
    out: list[ModelMessage] = []
    for message in messages:
        if not isinstance(message, ModelRequest) or not any(_holds_bytes(p) for p in message.parts):
            out.append(message)
            continue
        parts = [_hollow_part(part, keep) if _holds_bytes(part) else part for part in message.parts]
        out.append(dataclasses.replace(message, parts=parts))
    return out


def filled_messages(messages: Sequence[ModelMessage], load: Callable[[str], bytes | None]) -> list[ModelMessage]:
    """`hollow_messages` undone: each reference's bytes read back with `load(digest)` (left hollow if missing)."""
    out: list[ModelMessage] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            out.append(message)
            continue
        parts = [dataclasses.replace(p, content=[_filled(c, load) for c in p.content])
                 if isinstance(p, UserPromptPart) and not isinstance(p.content, str) else p for p in message.parts]
        out.append(dataclasses.replace(message, parts=parts))
    return out


def _holds_bytes(part: object) -> bool:
    return isinstance(part, UserPromptPart) and not isinstance(part.content, str) and any(
        isinstance(c, BinaryContent) and c.data for c in part.content
    )


def _hollow_part(part: Any, keep: Callable[[MediaPart], None] | None) -> Any:
    content = []
    for item in part.content:
        if isinstance(item, BinaryContent) and item.data:
            media = from_pydantic(item)
            assert isinstance(media, MediaPart)
            if keep is not None:
                keep(media)
            item = BinaryContent(data=b"", media_type=item.media_type, vendor_metadata={HOLLOW_KEY: media.digest})
        content.append(item)
    return dataclasses.replace(part, content=content)


def _filled(item: Any, load: Callable[[str], bytes | None]) -> Any:
    if not isinstance(item, BinaryContent) or item.data or not isinstance(item.vendor_metadata, dict):
        return item
    digest = item.vendor_metadata.get(HOLLOW_KEY)
    data = load(digest) if isinstance(digest, str) else None
    return item if data is None else BinaryContent(data=data, media_type=item.media_type)


def estimated_tokens(media: Media) -> int:
    """About how many input tokens a provider counts for `media` (an image: width × height / 750, as
    Anthropic documents it, between 85 and 1,600 — providers scale large images down first)."""
    if isinstance(media, MediaUrl):
        return 1_000
    if media.media_kind == "image":
        if media.width and media.height:
            return int(min(1_600, max(85, media.width * media.height / 750)))
        return 1_000
    return max(1, len(media.data) // 16)


def content_chars(content: Sequence[Any]) -> int:
    """A user prompt's size in characters for the context gauge: text as it is, each part as its tokens × 4
    (never the length of its bytes' repr)."""
    total = 0
    for item in content:
        if isinstance(item, str):
            total += len(item)
            continue
        media = user_media(item)
        total += 4 * estimated_tokens(media) if media is not None else len(str(item))
    return total


def content_text(content: Sequence[Any]) -> str:
    """A user prompt as readable text: each part as `[image: a 640×480 PNG]`."""
    out = []
    for item in content:
        media = None if isinstance(item, str) else user_media(item)
        out.append(item if isinstance(item, str) else f"[{media.media_kind}: {media.label}]" if media else str(item))
    return "".join(out)
