"""`MediaAdded`: an image, a document or audio reached the model, in a slot's prompt or in a tool's result.

Views show it as a thumbnail: in the slot (its prompt) or in the tool card of `call_id`. The thumbnail
(`thumb`, a `data:` URI of at most 256 pixels a side) travels with the first event of its image only; a
later event for the same image (`media.digest`) carries `thumb=""`, and a view keeps thumbnails by
digest. So an image costs the widget's comm one thumbnail, once, however many tokens or requests follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..media.parts import MediaRef


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaAdded:
    """An image (document, audio) went to the model: in `slot`'s prompt, or in tool call `call_id`'s result."""

    run_id: str
    slot: str
    media: MediaRef
    label: str = ""
    """What it is, for people and screen readers: `a 640×480 PNG`."""
    thumb: str = ""
    """The thumbnail as a `data:` URI, on the first event of this image in the run only (else `""`)."""
    call_id: str | None = None
    """The tool call whose result held it; `None`: the slot's prompt."""
    round: int = 1
    kind: Literal["media_added"] = "media_added"
