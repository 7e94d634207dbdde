"""What a prompt holds besides text: an image, a document or audio, as bytes or as a URL.

These are the one shape every layer passes around: the template puts them in a user turn, the engine
turns them into pydantic-ai parts (`content.py`), the views show a thumbnail of them by their digest,
and the journal stores each once under that digest. The bytes never travel in an event: events carry a
`MediaRef` (digest, type, size), and whoever needs the bytes asks the run's `MediaStore`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

MediaKind: TypeAlias = Literal["image", "document", "audio"]

_NAMES = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WebP",
    "application/pdf": "PDF",
    "audio/wav": "WAV",
    "audio/mpeg": "MP3",
    "audio/ogg": "Ogg",
    "audio/flac": "FLAC",
}


def type_name(media_type: str) -> str:
    """`image/png` → `PNG`: the short name people use for a media type."""
    return _NAMES.get(media_type, media_type)


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaRef:
    """A media part as events and views see it: enough to label it and to fetch its bytes by `digest`."""

    digest: str
    """SHA-256 of the bytes (hex); for a URL, of the URL."""
    media_kind: MediaKind
    media_type: str
    size: int = 0
    """Bytes (0 for a URL)."""
    width: int | None = None
    height: int | None = None
    name: str = ""
    """What it came from, for people: `fig`, `photo.png`, a URL."""
    url: str | None = None
    kind: Literal["media_ref"] = "media_ref"

    @property
    def label(self) -> str:
        """`a 640×480 PNG`, `a PDF document (12,345 bytes)`, `an image at https://…`."""
        if self.url is not None:
            what = {"image": "an image", "document": "a document", "audio": "audio"}[self.media_kind]
            return f"{what} at {self.url}"
        short = type_name(self.media_type)
        if self.width and self.height:
            return f"a {self.width}×{self.height} {short}"
        article = "an" if short[:1] in "AEIOUaeiou" else "a"
        what = "document" if self.media_kind == "document" else "audio" if self.media_kind == "audio" else "image"
        return f"{article} {short} {what} ({self.size:,} bytes)"


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaPart:
    """Bytes handed to the model in place: `BinaryContent` in pydantic-ai's terms."""

    data: bytes = field(repr=False)
    media_kind: MediaKind
    media_type: str
    width: int | None = None
    height: int | None = None
    name: str = ""
    digest: str = ""
    """Filled in by `media_part` (hashing 4 MB costs milliseconds: done once)."""
    kind: Literal["media_part"] = "media_part"

    @property
    def ref(self) -> MediaRef:
        return MediaRef(
            digest=self.digest,
            media_kind=self.media_kind,
            media_type=self.media_type,
            size=len(self.data),
            width=self.width,
            height=self.height,
            name=self.name,
        )

    @property
    def label(self) -> str:
        return self.ref.label


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaUrl:
    """A file the provider fetches itself: `ImageUrl` / `DocumentUrl` / `AudioUrl` in pydantic-ai's terms."""

    url: str
    media_kind: MediaKind
    name: str = ""
    kind: Literal["media_url"] = "media_url"

    @property
    def ref(self) -> MediaRef:
        digest = hashlib.sha256(self.url.encode()).hexdigest()
        return MediaRef(
            digest=digest, media_kind=self.media_kind, media_type="", name=self.name or self.url, url=self.url
        )

    @property
    def label(self) -> str:
        return self.ref.label


Media: TypeAlias = MediaPart | MediaUrl


def media_part(
    data: bytes,
    *,
    media_kind: MediaKind,
    media_type: str,
    width: int | None = None,
    height: int | None = None,
    name: str = "",
) -> MediaPart:
    """A `MediaPart` with its digest computed."""
    return MediaPart(
        data=data,
        media_kind=media_kind,
        media_type=media_type,
        width=width,
        height=height,
        name=name,
        digest=hashlib.sha256(data).hexdigest(),
    )
