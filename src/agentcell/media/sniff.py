"""What bytes are, from their first bytes (not from a file name): type and, for images, pixel size.

A file named `photo.png` that holds a PDF is refused by name, before any request (`files.py`); bytes in
`{{ }}` become an image only when they carry an image's signature. Reading the size from the header needs
no imaging library, so a PNG passes through without Pillow.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .parts import MediaKind


@dataclass(frozen=True, slots=True)
class Sniffed:
    media_kind: MediaKind
    media_type: str
    width: int | None = None
    height: int | None = None


def sniff(data: bytes) -> Sniffed | None:
    """The type of `data` by its signature, or `None` when it is none this module knows."""
    head = data[:32]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        size = _png_size(data)
        return Sniffed("image", "image/png", *size)
    if head.startswith(b"\xff\xd8\xff"):
        return Sniffed("image", "image/jpeg", *_jpeg_size(data))
    if head[:6] in (b"GIF87a", b"GIF89a"):
        width, height = struct.unpack("<HH", data[6:10]) if len(data) >= 10 else (0, 0)
        return Sniffed("image", "image/gif", width or None, height or None)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Sniffed("image", "image/webp", *_webp_size(data))
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return Sniffed("audio", "audio/wav")
    if head.startswith(b"%PDF-"):
        return Sniffed("document", "application/pdf")
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return Sniffed("audio", "audio/mpeg")
    if head.startswith(b"OggS"):
        return Sniffed("audio", "audio/ogg")
    if head.startswith(b"fLaC"):
        return Sniffed("audio", "audio/flac")
    return None


def describe_bytes(data: bytes) -> str:
    """What `data` looks like, for a message saying it is not what its name says."""
    found = sniff(data)
    if found is not None:
        from .parts import type_name

        return f"a {type_name(found.media_type)} {found.media_kind}"
    if not data:
        return "empty"
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return "binary data of no known type"
    return "text"


def _png_size(data: bytes) -> tuple[int | None, int | None]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None, None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _jpeg_size(data: bytes) -> tuple[int | None, int | None]:
    """Walk the JPEG markers to the first frame header (SOFn), which holds the size."""
    i, end = 2, len(data)
    while i + 4 <= end:
        if data[i] != 0xFF:
            return None, None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC) and i + 9 <= end:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None, None


def _webp_size(data: bytes) -> tuple[int | None, int | None]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
        return width, height
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None, None
