"""Credentials out of everything a person or a file gets to see: model names, errors, URLs.

Three shapes leak: a URL's `user:password@` part, a key-like query parameter (`…/v1?api_key=sk-…`),
and a server echoing the `Authorization` header it refused (`Basic dXNlcjpwYXNz`, the password in
base64; `Bearer sk-…`). `safe_url` masks the first two in one URL; `mask_secrets` masks all three in
any text, plus every value of a `*_API_KEY`/`*_TOKEN`/… environment variable and anything key-shaped.
Model display names go through `safe_url`, provider and run errors through `mask_secrets`, so events,
the widget, the saved notebook, the journal and `to_json` only ever see the masked forms.
"""

from __future__ import annotations

import base64
import os
import re
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"
SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.IGNORECASE)
"""A query parameter whose name matches is masked (`api_key`, `access_token`, `X-Amz-Signature`, …)."""
_SECRET_VAR = re.compile(r"(_API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD)$")
_KEYLIKE = re.compile(r"\b(sk|pk|rk|gsk|xai|key)[-_][A-Za-z0-9_\-]{8,}")
_AUTH = re.compile(r"\b(Basic|Bearer|Token|Digest|Negotiate)(\s+|%20)[A-Za-z0-9+/=._~\-]{4,}")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>`]+")
_AUTH_WORDS = ("Basic", "Bearer", "Token", "Digest", "Negotiate")
"""What `_AUTH` cannot match without."""
_KEYLIKE_PREFIXES = tuple(f"{word}{sep}" for word in ("sk", "pk", "rk", "xai", "key") for sep in "-_")
"""What `_KEYLIKE` cannot match without (`gsk-` contains `sk-`)."""


def _masked_pairs(text: str) -> str:
    pairs = []
    for pair in text.split("&"):
        name, eq, value = pair.partition("=")
        pairs.append(f"{name}={MASK}" if eq and value and SECRET_PARAM.search(unquote(name)) else pair)
    return "&".join(pairs)


def safe_url(url: str) -> str:
    """`url` without its `user:password@` part and with key-like query (and fragment) values masked."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL we can take apart: mask what looks like credentials in the text
        return _AUTH.sub(rf"\1\2{MASK}", _KEYLIKE.sub(lambda m: f"{m.group(1)}-{MASK}", url))
    netloc = parts.netloc.rpartition("@")[2] if "@" in parts.netloc else parts.netloc
    query, fragment = _masked_pairs(parts.query), _masked_pairs(parts.fragment)
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries, as a server might echo them: the password, and `user:password` in base64."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    if parts.password is None:
        return []
    user, password = unquote(parts.username or ""), unquote(parts.password)
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    return [password, encoded, encoded.rstrip("=")]


def env_secrets() -> list[str]:
    """The values of the environment's `*_API_KEY`/`*_TOKEN`/… variables (at least 6 characters)."""
    return [v for k, v in os.environ.items() if _SECRET_VAR.search(k) and len(v) >= 6]


def mask_secrets(text: str, extra: list[str] | None = None, *, env: list[str] | None = None) -> str:
    """`text` with every credential we know of (and anything key- or auth-header-shaped) replaced by `***`.

    `env`: `env_secrets()` as the caller read it (a caller masking every request of a run reads the
    environment once, not per request); read now when not given.
    """
    values = list(env_secrets() if env is None else env)
    values += [v for v in extra or [] if len(v) >= 4 and v not in ("api-key-not-set", "not-needed")]
    for value in sorted(set(values), key=len, reverse=True):
        text = text.replace(value, MASK)
    # Each pattern runs only where its literal part occurs (substring searches cost a fraction of a regex
    # scan): the teaching view masks every request body, which holds the whole conversation.
    if "://" in text:
        text = _URL.sub(lambda m: safe_url(m.group(0)), text)
    if any(word in text for word in _AUTH_WORDS):
        text = _AUTH.sub(rf"\1\2{MASK}", text)
    if any(prefix in text for prefix in _KEYLIKE_PREFIXES):
        text = _KEYLIKE.sub(lambda m: f"{m.group(1)}-{MASK}", text)
    return text
