"""Model resolution: what a user wrote → a model ready to run, with a display name that is safe to show.

`resolve_model` turns `"openai:gpt-4o-mini"`, `"openai-compat:qwen3:8b@http://…/v1"`, a pydantic-ai
`Model` or `None` into a model plus a display name that never contains a credential. Every model that
talks to a network is wrapped in `RetryingModel` (visible retries, SDK retries off, clear permanent
errors; see `providers/retry.py`). `None` falls back to the `AGENTCELL_MODEL` environment variable and
then to the offline default (`providers/offline.py`). `record(path, model)` lives here, beside
`resolve_model`, because recording resolves its model first; the providers below never import this
module.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace

from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.wrapper import WrapperModel

from ..errors import ModelConfigError
from .cassette import RecordingModel, ReplayModel
from .compat import COMPAT_KEY_VAR, COMPAT_PREFIX, openai_compatible, parse_compat, safe_url
from .offline import OFFLINE_DELAYS, OFFLINE_NAME, is_offline, offline_model
from .retry import RetryingModel

__all__ = [
    "ENV_MODEL",
    "OFFLINE_DELAYS",
    "OFFLINE_NAME",
    "ResolvedModel",
    "offline_model",
    "record",
    "resolve_model",
]

ENV_MODEL = "AGENTCELL_MODEL"
_PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google-gla": "GEMINI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedModel:
    """A model ready to run, with a display name that is safe to show and save."""

    model: Model
    name: str
    offline: bool = False
    chosen: bool = True
    """False only for the offline default, answering because no model was configured (views say which)."""
    owned: bool = False
    """Built here from a model string: its HTTP client is agentcell's to close (`async with model`, pydantic-ai's
    public way), which a run does when it ends, so no socket outlives the event loop (`asyncio.run`)."""


def resolve_model(model: str | Model | None = None) -> ResolvedModel:
    """Resolve a model spec: explicit value > `AGENTCELL_MODEL` > the offline default.

    Raises:
        ModelConfigError: the provider is unknown or its API key variable is not set.
    """
    if isinstance(model, Model):
        return ResolvedModel(model=_with_retries(model), name=_display_name(model), offline=is_offline(model))
    configured = model or os.environ.get(ENV_MODEL)
    spec = (configured or OFFLINE_NAME).strip()
    if spec == OFFLINE_NAME or spec.startswith(OFFLINE_NAME + ":"):
        return replace(_resolve_offline(spec), chosen=bool(configured))
    if spec.startswith(COMPAT_PREFIX + ":"):
        name, url = parse_compat(spec)
        compat = RetryingModel(openai_compatible(name, url), key_var=COMPAT_KEY_VAR)
        return ResolvedModel(model=compat, name=f"{COMPAT_PREFIX}:{name}@{safe_url(url)}", owned=True)
    key_var = _PROVIDER_KEYS.get(spec.partition(":")[0])
    return ResolvedModel(model=RetryingModel(_infer(spec), key_var=key_var), name=spec, owned=True)


def record(path: str | os.PathLike[str], model: str | Model | None = None) -> RecordingModel:
    """`model` (resolved like `--model`; `None` → configured default) recording its responses to `path`."""
    resolved = resolve_model(model)
    return RecordingModel(resolved.model, path, name=resolved.name)


def _resolve_offline(spec: str) -> ResolvedModel:
    pace = spec.partition(":")[2]
    if pace not in OFFLINE_DELAYS:
        raise ModelConfigError(f"unknown offline pace {pace!r}; use 'offline', 'offline:fast' or 'offline:slow'")
    return ResolvedModel(model=offline_model(delay=OFFLINE_DELAYS[pace]), name=spec, offline=True)


def _infer(spec: str) -> Model:
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    provider = spec.partition(":")[0]
    key_var = _PROVIDER_KEYS.get(provider)
    # An `openai:`/`openai-chat:` model pointed at another server with OPENAI_BASE_URL needs no key (a placeholder
    # is sent when OPENAI_API_KEY is not set).
    base_url = os.environ.get("OPENAI_BASE_URL", "")
    keyless = provider in ("openai", "openai-chat") and bool(base_url) and "api.openai.com" not in base_url
    if key_var is not None and not os.environ.get(key_var) and not keyless:
        raise ModelConfigError(
            f"model {spec!r} needs the environment variable {key_var}; set it before starting Jupyter, or "
            f"with os.environ[{key_var!r}] = getpass.getpass() (not %env, which prints the key into the "
            f"notebook), or use --model offline"
        )
    if keyless:
        # Servers reached through OPENAI_BASE_URL (Ollama, vLLM, llama.cpp, LM Studio…) speak Chat
        # Completions (pydantic-ai's `openai:` means the Responses API, which they do not have) and read
        # `max_tokens`: the same model as `openai-compat:NAME@URL`.
        return openai_compatible(spec.partition(":")[2], base_url, api_key=os.environ.get("OPENAI_API_KEY"))
    try:
        return infer_model(spec)
    except (UserError, ValueError, ImportError) as exc:
        raise ModelConfigError(f"cannot use model {spec!r}: {exc}") from None


def _with_retries(model: Model) -> Model:
    """Wrap a model that talks to a network in `RetryingModel` (ours and local test models are left alone)."""
    if isinstance(model, RetryingModel | RecordingModel | ReplayModel | FunctionModel) or _is_test_model(model):
        return model
    return RetryingModel(model, key_var=_PROVIDER_KEYS.get(getattr(model, "system", "") or ""))


def _is_test_model(model: Model) -> bool:
    """Whether `model` is pydantic-ai's `TestModel`, without importing its module (0.7 MB a run that uses
    no `TestModel` would keep for nothing): if it is not imported, no model is one."""
    test = sys.modules.get("pydantic_ai.models.test")
    return test is not None and isinstance(model, test.TestModel)


def _display_name(model: Model) -> str:
    if isinstance(model, ReplayModel):
        return f"replay:{model.model_name}"
    if isinstance(model, RecordingModel):
        return model.cassette.model
    if isinstance(model, WrapperModel):
        return _display_name(model.wrapped)
    system = getattr(model, "system", None) or ""
    name = model.model_name
    if system == "openai":
        base = getattr(model, "base_url", None)
        if base and "api.openai.com" not in base:
            return f"{COMPAT_PREFIX}:{name}@{safe_url(base.rstrip('/'))}"
    return name if not system or system == "function" else f"{system}:{name}"
