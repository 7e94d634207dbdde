"""OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio, a proxy): a real `OpenAIChatModel`.

`openai_compatible("qwen3:8b", "http://localhost:11434/v1")` is exactly what a user would build by hand:
`OpenAIChatModel(name, provider=OpenAIProvider(base_url=…, api_key=…))`. The string form is
`openai-compat:MODEL@BASE_URL` (split at the `@` before `http://` or `https://`). The key comes from `api_key=` or the
`OPENAI_COMPAT_API_KEY` environment variable; local servers ignore it, so a placeholder is sent when
neither is set (never `OPENAI_API_KEY`: a real OpenAI key is not sent to another server). The model's profile
sends a slot's `max_tokens` as `max_tokens`, the field these servers read.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from pydantic_ai.models import Model

from ..errors import ModelConfigError
from .secrets import mask_secrets
from .secrets import safe_url as safe_url

COMPAT_PREFIX = "openai-compat"
COMPAT_KEY_VAR = "OPENAI_COMPAT_API_KEY"


def openai_compatible(model_name: str, base_url: str, *, api_key: str | None = None) -> Model:
    """A pydantic-ai `OpenAIChatModel` talking to the Chat Completions server at `base_url`."""
    try:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.profiles.openai import OpenAIModelProfile
        from pydantic_ai.providers.openai import OpenAIProvider
    except ImportError as exc:  # pragma: no cover - the openai extra is a dependency
        raise ModelConfigError(f"OpenAI-compatible models need pydantic-ai's openai extra: {exc}") from None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelConfigError(f"base URL {safe_url(base_url)!r} must look like http://host:port/v1")
    key = api_key or os.environ.get(COMPAT_KEY_VAR) or "not-needed"
    # These servers read `max_tokens`; OpenAI's newer `max_completion_tokens` (pydantic-ai's default) is ignored
    # by llama.cpp's, so a slot's `max_tokens=5` gave thousands of words. The profile says which one to send.
    profile = OpenAIModelProfile(openai_chat_supports_max_completion_tokens=False)
    return OpenAIChatModel(model_name, provider=OpenAIProvider(base_url=base_url, api_key=key), profile=profile)


def parse_compat(spec: str) -> tuple[str, str]:
    """`openai-compat:MODEL@BASE_URL` → (MODEL, BASE_URL)."""
    rest = spec.removeprefix(COMPAT_PREFIX + ":")
    cut = min((i for i in (rest.find("@http://"), rest.find("@https://")) if i >= 0), default=-1)
    name, at, url = (rest[:cut], "@", rest[cut + 1 :]) if cut >= 0 else rest.rpartition("@")
    if not at or not name or not url:
        raise ModelConfigError(
            f"{COMPAT_PREFIX} models are written {COMPAT_PREFIX}:MODEL@BASE_URL, "
            f"e.g. {COMPAT_PREFIX}:qwen3:8b@http://localhost:11434/v1; got {mask_secrets(spec)!r}"
        )
    return name, url
