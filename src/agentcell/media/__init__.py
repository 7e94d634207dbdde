"""Media in prompts and tool results: tables, images, documents and audio (see docs/media.md).

The value layer's one owner of "how a notebook value goes to the model": `convert.prompt_value`
decides, `marks` keeps template order, `content` speaks pydantic-ai, `thumbs` makes the small pictures
every view shows (the journal keeps each image once by digest: `journal/media.py`). pandas and matplotlib
are never imported here (a value's own methods do, when such a value appears); Pillow only to make the
thumbnail of a large image.
"""

from __future__ import annotations

from .files import audio, document, image, table
from .parts import Media, MediaPart, MediaRef, MediaUrl

__all__ = ["Media", "MediaPart", "MediaRef", "MediaUrl", "audio", "document", "image", "table"]
