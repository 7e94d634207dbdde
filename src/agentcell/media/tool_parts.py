"""A toolset's result that holds pydantic-ai content parts: the text the views show and the parts the model gets.

A tool of the run's `toolsets=` may answer with pydantic-ai's own parts rather than a notebook value: an MCP
server's image or audio (`ImageContent`, `AudioContent`) and an embedded file resource arrive from pydantic-ai's
MCP client as `BinaryContent` (alone, or in a list beside text and JSON), and a `FunctionToolset` tool may
return a `BinaryContent` itself. Such a result goes the way a notebook tool's figure goes (`engine/media.py`):
each image, audio clip or document becomes agentcell media (a part in the model's next request, a thumbnail in
every view, its bytes kept once in the journal), and the result's text names it (`[image: a 640×480 PNG]`),
never its base64 as JSON. A binary the model cannot read as a part (a zip, raw bytes) is named by its type
and size only (`[a file of type application/zip, 1,024 bytes]`). Each part is held to the per-file cap
(`limits.check_part`); the views show a thumbnail of at most 64 KB whatever the image's size (`thumbs.py`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

from pydantic_ai.messages import AudioUrl, BinaryContent, DocumentUrl, ImageUrl

from .content import from_pydantic
from .limits import check_part
from .parts import Media, MediaPart

_PARTS = (BinaryContent, ImageUrl, AudioUrl, DocumentUrl)


def holds_parts(value: object) -> bool:
    """Whether `value` is a pydantic-ai content part, or a list or tuple holding one (cheap: no conversion)."""
    if isinstance(value, _PARTS):
        return True
    return isinstance(value, list | tuple) and any(isinstance(item, _PARTS) for item in value)


def tool_parts(value: object, clip: Callable[[str], str] = str) -> tuple[str, tuple[Media, ...]]:
    """The text a result holding content parts shows as, and its media, in order (hashes the bytes: call it in
    a worker thread for a large part). `clip` bounds each text piece (the parts' labels are kept whole).

    Raises:
        MediaError: a part is over the per-file cap.
    """
    items: Sequence[object] = value if isinstance(value, list | tuple) else (value,)
    texts: list[str] = []
    media: list[Media] = []
    for item in items:
        if isinstance(item, BinaryContent) and not (item.is_image or item.is_audio or item.is_document):
            texts.append(f"[a file of type {item.media_type}, {len(item.data):,} bytes]")  # no model reads it
            continue
        found = _media(item)
        if isinstance(found, str):
            texts.append(clip(found))
            continue
        media.append(found)
        texts.append(f"[{found.media_kind}: {found.label}]")
    return "\n".join(texts), tuple(media)


def _media(item: object) -> Media | str:
    found = from_pydantic(item) if isinstance(item, _PARTS) else None
    if found is None:
        return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=repr)
    if isinstance(found, MediaPart):
        # pydantic-ai names a part by a hash of its bytes; the views' label says what it is instead.
        return check_part(dataclasses.replace(found, name=""))
    return found
