"""Media ↔ pydantic-ai's content parts (`BinaryContent`, `ImageUrl`, `DocumentUrl`, `AudioUrl`).

The one place agentcell's media become pydantic-ai's and back: a user turn's pieces, a tool's
`ToolReturn`, and the reading side (views, the offline model, the journal) that finds media in messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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

from .parts import Media, MediaPart, MediaRef, MediaUrl, media_part
from .sniff import sniff


def to_user_content(pieces: Sequence[str | Media]) -> list[UserContent]:
    """A turn's pieces as a pydantic-ai user prompt, in order."""
    return [piece if isinstance(piece, str) else to_pydantic(piece) for piece in pieces]


def to_pydantic(media: Media) -> UserContent:
    if isinstance(media, MediaUrl):
        url_class = {"image": ImageUrl, "document": DocumentUrl, "audio": AudioUrl}[media.media_kind]
        return url_class(url=media.url)
    return BinaryContent(data=media.data, media_type=media.media_type, identifier=media.digest[:12])


def from_pydantic(item: object) -> Media | None:
    """A pydantic-ai content item as agentcell media (`None` for text and other items)."""
    if isinstance(item, BinaryContent):
        found = sniff(item.data)
        kind = "image" if item.is_image else "audio" if item.is_audio else "document"
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


def tool_return(label: str, media: Sequence[Media]) -> ToolReturn:
    """What a tool that returned media gives the model: a short text result and the parts themselves."""
    content: list[UserContent] = [f"(the result of that call: {label})"]
    content.extend(to_pydantic(m) for m in media)
    return ToolReturn(return_value=label, content=content)


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
