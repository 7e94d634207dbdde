"""How much media one request may carry, and which URLs may be handed to a model.

Checked before any request, so an oversized figure or a link into the local network is one sentence
naming the value, not a provider's 400 after the tokens were paid for. The caps follow the common
provider limits (OpenAI and Anthropic refuse images over about 20 MB and requests over about 50 MB);
`AGENTCELL_MAX_IMAGE_BYTES` / `AGENTCELL_MAX_REQUEST_BYTES` change them, and
`AGENTCELL_ALLOW_PRIVATE_URLS=1` (or `image(url, allow_private=True)`) lets a private address through.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from urllib.parse import urlsplit

from ..errors import MediaError
from .parts import Media, MediaPart

MAX_IMAGE_BYTES = 20 * 1024 * 1024
MAX_REQUEST_BYTES = 50 * 1024 * 1024


def max_part_bytes() -> int:
    return _env_int("AGENTCELL_MAX_IMAGE_BYTES", MAX_IMAGE_BYTES)


def max_request_bytes() -> int:
    return _env_int("AGENTCELL_MAX_REQUEST_BYTES", MAX_REQUEST_BYTES)


def check_part(part: MediaPart) -> MediaPart:
    """`part`, or `MediaError` when it is over the per-file cap."""
    cap = max_part_bytes()
    if len(part.data) > cap:
        raise MediaError(
            f"{part.name or 'a value'} is {part.label} of {_mb(len(part.data))}; the limit is {_mb(cap)} per "
            f"{part.media_kind} (AGENTCELL_MAX_IMAGE_BYTES), so it was not sent — make it smaller "
            "(a lower dpi, a thumbnail) or raise the limit"
        )
    return part


def check_request(parts: Iterable[Media], *, where: str) -> None:
    """`MediaError` when the media of one request add up to more than the per-request cap."""
    total = sum(len(p.data) for p in parts if isinstance(p, MediaPart))
    cap = max_request_bytes()
    if total > cap:
        raise MediaError(
            f"the prompt of {where} carries {_mb(total)} of images and files; the limit is {_mb(cap)} per "
            "request (AGENTCELL_MAX_REQUEST_BYTES), so nothing was sent"
        )


def check_url(url: str, *, allow_private: bool = False) -> str:
    """`url` when it is an http(s) URL a model may be sent to; `MediaError` for another scheme or a private host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise MediaError(f"{url!r} is not an http(s) URL (give a file path or an http:// or https:// address)")
    if allow_private or os.environ.get("AGENTCELL_ALLOW_PRIVATE_URLS") == "1":
        return url
    host = parts.hostname.lower()
    private = host == "localhost" or host.endswith((".localhost", ".local", ".internal", ".lan"))
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        private = not address.is_global
    if private:
        raise MediaError(
            f"{url} points to a private address ({host}); it was not handed to the model — pass "
            "allow_private=True to image()/document()/audio() or set AGENTCELL_ALLOW_PRIVATE_URLS=1 if you mean it"
        )
    return url


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB"


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        return default
