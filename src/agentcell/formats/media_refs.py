"""How a transcript names an image whose bytes are kept elsewhere, and media as OpenAI content parts.

Views (the widget, the saved notebook) and the journal get a transcript without the bytes: each
`BinaryContent` is hollowed to `vendor_metadata={"agentcell_media": <sha256>}` and each OpenAI part says
`agentcell-media:<sha256>`. `RunResult.to_openai()` inlines the bytes as the standard `data:` URIs.
Only pydantic-ai's types are read here (the values layer's `media` package builds on this, not the reverse).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from pydantic_ai.messages import AudioUrl, BinaryContent, DocumentUrl, ImageUrl

REF_SCHEME = "agentcell-media:"
HOLLOW_KEY = "agentcell_media"


def hollow_digest(item: object) -> str | None:
    """The digest a hollowed `BinaryContent` stands for (`None` for anything else)."""
    if isinstance(item, BinaryContent) and not item.data and isinstance(item.vendor_metadata, dict):
        found = item.vendor_metadata.get(HOLLOW_KEY)
        return found if isinstance(found, str) else None
    return None


def is_media_item(item: object) -> bool:
    return isinstance(item, BinaryContent | ImageUrl | DocumentUrl | AudioUrl)


def openai_part(item: Any, *, inline: bool = True) -> dict[str, Any]:
    """One Chat Completions content part for a pydantic-ai media item (see `is_media_item`)."""
    if isinstance(item, ImageUrl):
        return {"type": "image_url", "image_url": {"url": item.url}}
    if isinstance(item, DocumentUrl | AudioUrl):
        return {"type": "text", "text": f"[{'document' if isinstance(item, DocumentUrl) else 'audio'} at {item.url}]"}
    assert isinstance(item, BinaryContent)
    digest = hollow_digest(item)
    if digest is None and not inline:
        digest = hashlib.sha256(item.data).hexdigest()
    raw = base64.b64encode(item.data).decode("ascii") if digest is None else ""
    data = f"data:{item.media_type};base64,{raw}" if digest is None else REF_SCHEME + digest
    if item.is_image:
        return {"type": "image_url", "image_url": {"url": data}}
    if item.is_audio:
        return {"type": "input_audio", "input_audio": {"data": raw or data, "format": item.media_type.split("/")[-1]}}
    return {"type": "file", "file": {"filename": "document", "file_data": data}}


def media_key(item: Any) -> str:
    """`agentcell-media:<sha256>` for a `BinaryContent` (hollowed or not), the URL for a URL part: how a cassette
    names a file a request carried (compared on replay; the bytes are never written into the cassette)."""
    if isinstance(item, BinaryContent):
        return REF_SCHEME + (hollow_digest(item) or hashlib.sha256(item.data).hexdigest())
    if isinstance(item, ImageUrl | DocumentUrl | AudioUrl):
        return item.url
    return str(item)
