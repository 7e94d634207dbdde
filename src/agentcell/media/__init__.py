"""Media in prompts and tool results: tables, images, documents and audio (see docs/media.md).

The value layer's one owner of "how a notebook value goes to the model": `convert.prompt_value`
decides, `marks` keeps template order, `content` speaks pydantic-ai, `thumbs` makes the small pictures
every view shows, `store` keeps each image once by digest. pandas, Pillow and matplotlib are never
imported here; a value's own methods import them, when such a value appears.
"""

from __future__ import annotations

from .files import audio, document, image, table
from .parts import Media, MediaPart, MediaRef, MediaUrl

__all__ = ["Media", "MediaPart", "MediaRef", "MediaUrl", "audio", "document", "image", "table"]
