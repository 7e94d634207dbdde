"""struckdown's `LLM` and `LLMCredentials`, and what `credentials=` does to a model name.

`complete`, `complete_async` and `complete_incremental_async` take struckdown's `model=` / `credentials=`
pair and turn it into one pydantic-ai model before the run starts (`model_with_credentials`), the way
struckdown's `LLM.get_pydantic_model(credentials)` does:

* a `base_url` sends every request to that OpenAI-compatible server (a proxy such as LiteLLM, Ollama,
  vLLM), with the model name stripped of a known `provider:` prefix (`openai:gpt-4o-mini` asks the
  server for `gpt-4o-mini`) and the `api_key` as its bearer key;
* an `api_key` alone goes to the provider named by the prefix (`anthropic:claude-…`; a bare `gpt-…`
  means OpenAI), with that key instead of the provider's environment variable;
* neither (or `credentials=None`): the model is resolved as everywhere else in agentcell.

The key is held only by the model's HTTP client. It is not part of any event, result, journal line,
error message (`RetryingModel` masks it in what a provider says) or `repr`; the model's display name
is `openai-compat:NAME@HOST` or `provider:NAME`. Explicit credentials win over environment variables
(struckdown lets a set `OPENAI_API_KEY` override a `base_url`; agentcell does not).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model

from ..errors import ModelConfigError
from .compat import openai_compatible
from .retry import RetryingModel, mask_secrets

DEFAULT_LLM = "gpt-4.1-mini"
"""struckdown's default model name when neither `model=` nor `$DEFAULT_LLM` gives one."""

KEY_HINT = "the api_key given in credentials="
"""What a rejected-key error tells the user to check (never the key itself)."""

# A bare model name (no `provider:`) means the provider that pydantic-ai used to infer from its prefix.
_BARE_PREFIXES = {"gpt": "openai", "chatgpt": "openai", "o1": "openai", "o3": "openai", "o4": "openai",
                  "claude": "anthropic", "gemini": "google-gla"}


@dataclass(frozen=True, slots=True, kw_only=True)
class LLM:
    """struckdown's model setting: a model name, `provider:model` (`openai:gpt-4o-mini`) or a bare one."""

    model_name: str = field(default_factory=lambda: os.environ.get("DEFAULT_LLM") or DEFAULT_LLM)
    """The model; defaults to `$DEFAULT_LLM`, then `gpt-4.1-mini`, as in struckdown."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class LLMCredentials:
    """A provider key and base URL for one call, as struckdown takes them; its `repr` never shows the key."""

    api_key: str | None = field(default_factory=lambda: os.environ.get("LLM_API_KEY"))
    """The bearer key; defaults to `$LLM_API_KEY`, as in struckdown."""
    base_url: str | None = field(default_factory=lambda: os.environ.get("LLM_API_BASE"))
    """An OpenAI-compatible endpoint (`http://localhost:11434/v1`); defaults to `$LLM_API_BASE`."""

    def __repr__(self) -> str:
        key = "'***'" if self.api_key else "None"
        url = repr(shown_url(self.base_url)) if self.base_url else "None"
        return f"LLMCredentials(api_key={key}, base_url={url})"


class CredentialsLike(Protocol):
    """Anything with `api_key` and `base_url`: an `LLMCredentials`, or struckdown's own object."""

    @property
    def api_key(self) -> str | None: ...

    @property
    def base_url(self) -> str | None: ...


Credentials: TypeAlias = CredentialsLike | Mapping[str, Any]
"""What `credentials=` accepts: an object with `api_key` / `base_url`, or a mapping with those keys."""

ModelLike: TypeAlias = str | Model | LLM | None
"""What the struckdown-named functions accept as `model=`: agentcell's forms plus struckdown's `LLM`."""


def shown_url(url: str) -> str:
    """`url` as it may be shown: scheme, host, port and path; no user, password, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def model_with_credentials(model: ModelLike, credentials: Credentials | None) -> str | Model | None:
    """`model` as `RunOptions.model` takes it: `LLM` → its name; with `credentials`, the model they build.

    Raises:
        ModelConfigError: `credentials` came with a pydantic-ai `Model` object (which has its own
            provider), or the model name cannot be built with them.
    """
    name = model.model_name if isinstance(model, LLM) else model
    key, base = _read(credentials)
    if key is None and base is None:
        return name
    if isinstance(name, Model):
        raise ModelConfigError(
            "credentials= applies to a model name; a pydantic-ai Model object carries its own provider and key "
            "(pass model='provider:name' with credentials=, or the Model alone)"
        )
    spec = name or LLM().model_name
    try:
        built = openai_compatible(_bare(spec), base, api_key=key) if base else _native(spec, key)
    except (UserError, ValueError, ImportError, TypeError) as exc:  # TypeError: a provider that takes no key
        said = mask_secrets(str(exc), [key] if key else [])
        raise ModelConfigError(f"cannot use model {spec!r} with credentials=: {said}") from None
    return RetryingModel(built, key_var=KEY_HINT)


def _read(credentials: Credentials | None) -> tuple[str | None, str | None]:
    if credentials is None:
        return None, None
    if isinstance(credentials, Mapping):
        key, base = credentials.get("api_key"), credentials.get("base_url")
    else:
        key, base = getattr(credentials, "api_key", None), getattr(credentials, "base_url", None)
    for value, what in ((key, "api_key"), (base, "base_url")):
        if value is not None and not isinstance(value, str):
            raise ModelConfigError(f"credentials {what} must be a string or None, not {type(value).__name__}")
    return key or None, base or None


def _known_provider(name: str) -> bool:
    from pydantic_ai.providers import infer_provider_class

    try:
        infer_provider_class(name)
    except ValueError:
        return False
    except ImportError:  # known to pydantic-ai, its package not installed
        return True
    return True


def _bare(spec: str) -> str:
    """The name an OpenAI-compatible proxy is asked for: `spec` without a known `provider:` prefix."""
    provider, colon, rest = spec.partition(":")
    return rest if colon and rest and _known_provider(provider) else spec


def _native(spec: str, key: str | None) -> Model:
    """`provider:name` built by pydantic-ai with `key` instead of the provider's environment variable."""
    from pydantic_ai.models import infer_model
    from pydantic_ai.providers import Provider, infer_provider_class

    provider, colon, rest = spec.partition(":")
    if not (colon and rest and _known_provider(provider)):
        inferred = next((p for prefix, p in _BARE_PREFIXES.items() if spec.startswith(prefix)), None)
        if inferred is None:
            raise ModelConfigError(
                f"model {spec!r} names no provider; write it as 'provider:model' (e.g. 'openai:gpt-4o-mini'), "
                "or give credentials a base_url to send it to an OpenAI-compatible server"
            )
        spec = f"{inferred}:{spec}"

    def factory(provider_name: str) -> Provider[Any]:
        make: Callable[..., Provider[Any]] = infer_provider_class(provider_name)
        return make(api_key=key)

    return infer_model(spec, provider_factory=factory)
