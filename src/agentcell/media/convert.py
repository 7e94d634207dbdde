"""A notebook value → what the model gets for it: a table (text), an image part, or nothing special.

The one owner of "how does this value go into a prompt": the template's `{{ x }}` and a tool's return
value both ask `prompt_value`. Recognition is by type and by the `_repr_png_` protocol, never by
importing pandas, Pillow or matplotlib: those are imported only by the value's own methods, when such a
value appears.
"""

from __future__ import annotations

import base64
import io
import struct
import zlib
from typing import Any

from ..errors import MediaError
from .limits import check_part
from .parts import Media, MediaPart, MediaUrl, media_part
from .sniff import sniff
from .tables import is_table, table_markdown

_PLAIN = frozenset({str, int, float, bool, type(None)})


def prompt_value(value: object, *, name: str = "") -> Media | str | None:
    """What `value` becomes in a prompt: a `MediaPart`/`MediaUrl`, a Markdown table, or `None` (its `str`).

    Raises:
        MediaError: the value is an image that cannot be sent (over the size limit).
    """
    if type(value) in _PLAIN:
        return None
    if isinstance(value, MediaPart | MediaUrl):
        return value
    if isinstance(value, str):
        return None
    if is_table(value):
        return table_markdown(value)
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        found = sniff(data)
        if found is None or found.media_kind != "image":
            return None
        return check_part(media_part(data, media_kind="image", media_type=found.media_type,
                                     width=found.width, height=found.height, name=name))
    image = image_bytes(value)
    if image is None:
        return None
    return check_part(_as_image(image, name or type(value).__name__))


def may_be_media(value: object) -> bool:
    """Whether `prompt_value(value)` may be more than `None`, decided without converting anything (cheap)."""
    if type(value) in _PLAIN:
        return False
    if isinstance(value, MediaPart | MediaUrl) or is_table(value):
        return True
    if isinstance(value, bytes | bytearray | memoryview):
        found = sniff(bytes(value[:32]))
        return found is not None and found.media_kind == "image"
    cls = type(value)
    if (cls.__module__ or "").split(".")[0] in ("matplotlib", "PIL", "numpy"):
        return True
    return callable(getattr(cls, "_repr_png_", None)) or callable(getattr(cls, "_repr_jpeg_", None))


def image_bytes(value: object) -> bytes | None:
    """Encoded image bytes for a figure, a PIL image, a numpy image array or a `_repr_png_` object, else `None`."""
    cls = type(value)
    module = (cls.__module__ or "").split(".")[0]
    if module == "matplotlib" and hasattr(value, "savefig"):
        buffer = io.BytesIO()
        value.savefig(buffer, format="png")
        return buffer.getvalue()
    if module == "PIL" and hasattr(value, "save") and hasattr(value, "mode"):
        return _pil_png(value)
    if module == "numpy" and cls.__name__ == "ndarray":
        return _array_png(value)
    for method in ("_repr_png_", "_repr_jpeg_"):
        found = _call_repr(value, method)
        if found is not None:
            return found
    return None


def _as_image(data: bytes, name: str) -> MediaPart:
    found = sniff(data)
    if found is None or found.media_kind != "image":
        raise MediaError(f"{name} gave image data that is not a PNG, JPEG, GIF or WebP image")
    return media_part(data, media_kind="image", media_type=found.media_type, width=found.width,
                      height=found.height, name=name)


def _call_repr(value: object, method: str) -> bytes | None:
    function = getattr(type(value), method, None)
    if function is None or not callable(function):
        return None
    found = function(value)
    if isinstance(found, tuple):  # IPython allows (data, metadata)
        found = found[0] if found else None
    if isinstance(found, str):
        try:
            return base64.b64decode(found, validate=True)
        except ValueError:
            return None
    return bytes(found) if isinstance(found, bytes | bytearray) else None


def _pil_png(image: Any) -> bytes:
    buffer = io.BytesIO()
    if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _array_png(array: Any) -> bytes | None:
    """A uint8 array of shape (h, w), (h, w, 3) or (h, w, 4) as a PNG, encoded here (no Pillow needed)."""
    if str(array.dtype) != "uint8" or array.ndim not in (2, 3) or min(array.shape[:2]) < 1:
        return None
    channels = 1 if array.ndim == 2 else array.shape[2]
    colour = {1: 0, 3: 2, 4: 6}.get(channels)
    if colour is None:
        return None
    height, width = array.shape[:2]
    raw = array.reshape(height, width * channels)
    body = b"".join(b"\x00" + raw[row].tobytes() for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    chunks = _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(body, 6)) + _chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + chunks


def _chunk(tag: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)
