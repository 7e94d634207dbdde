"""The small picture every view shows for an image: a data URI of at most `THUMB_SIDE` pixels a side.

The live widget, the saved static view and the lesson export all show thumbnails, never the image a
model got (a 4 MB PNG would make every saved notebook 5 MB heavier). With Pillow installed (the
`agentcell[media]` extra) an image is scaled down; a 100-megapixel image is reduced while it is decoded
(`draft` for JPEG, `reduce` in `thumbnail`), so its thumbnail does not cost a full-size copy. Without
Pillow an image already small enough is shown as it is, and a larger one by its label only.
"""

from __future__ import annotations

import base64
import io
import warnings

from .parts import MediaPart

THUMB_SIDE = 256
"""Longest side of a thumbnail, in pixels."""
THUMB_BYTES = 64 * 1024
"""Largest thumbnail kept (encoded bytes); a bigger one is shown by its label only."""


def thumbnail(part: MediaPart) -> str:
    """A `data:` URI of `part`'s thumbnail, or `""` when there is none (not an image, or no way to make one)."""
    if part.media_kind != "image":
        return ""
    small = part.width is not None and part.height is not None and max(part.width, part.height) <= THUMB_SIDE
    if small and len(part.data) <= THUMB_BYTES:
        return _uri(part.media_type, part.data)
    try:
        scaled = _scaled(part.data)
    except Exception:  # an undecodable or hostile image: the label stands in for it
        return ""
    if scaled is None or len(scaled[1]) > THUMB_BYTES:
        return ""
    return _uri(*scaled)


def _scaled(data: bytes) -> tuple[str, bytes] | None:
    try:
        from PIL import Image
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        # Pillow warns past ~90 megapixels (ignored: a 100-megapixel photo is normal input) and refuses past
        # twice that (a decompression bomb: no thumbnail, the label stands in).
        with Image.open(io.BytesIO(data)) as image:
            image.draft("RGB", (THUMB_SIDE, THUMB_SIDE))  # JPEG: decode at a fraction of the size
            image.thumbnail((THUMB_SIDE, THUMB_SIDE), reducing_gap=2.0)
            keep_alpha = image.mode in ("RGBA", "LA", "P")
            converted = image.convert("RGBA" if keep_alpha else "RGB")
            if keep_alpha:
                out = io.BytesIO()
                converted.save(out, format="PNG", optimize=True)
                if len(out.getvalue()) <= THUMB_BYTES:
                    return "image/png", out.getvalue()
                converted = converted.convert("RGB")  # a noisy picture with alpha: JPEG, without it
            for quality in (80, 60, 40):  # a photo of noise is the worst case: lower the quality to fit
                out = io.BytesIO()
                converted.save(out, format="JPEG", quality=quality)
                if len(out.getvalue()) <= THUMB_BYTES:
                    break
            return "image/jpeg", out.getvalue()


def _uri(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
