"""Real providers (and the offline one): visible retries, OpenAI-compatible servers, and record/replay cassettes.

* `RetryingModel` / `RetryPolicy` — transient failures retried with backoff, each retry an event the widget shows.
* `openai_compatible(model, base_url)` — a pydantic-ai `OpenAIChatModel` for Ollama, vLLM, llama.cpp,
  LM Studio or any Chat Completions server; the string form is `openai-compat:MODEL@BASE_URL`.
* `RecordingModel` / `replay(path)` — a run's responses in a JSON cassette, replayed offline;
  `agentcell.record(path, model)` (in `models.py`, which resolves the model) builds the recorder.
* `offline_model()` — the scripted default model that needs no key and no network.
* `request_scope` — how the engine tells a model wrapper which slot is asking and where retries go.
"""

from __future__ import annotations

from .cassette import CASSETTE_VERSION, Cassette, Interaction, RecordingModel, ReplayModel, replay
from .compat import COMPAT_KEY_VAR, openai_compatible
from .hooks import RequestScope, RetryNotice, current_scope, request_scope
from .offline import offline_model
from .retry import RetryingModel, RetryPolicy, mask_secrets, transient_reason

__all__ = [
    "CASSETTE_VERSION",
    "COMPAT_KEY_VAR",
    "Cassette",
    "Interaction",
    "RecordingModel",
    "ReplayModel",
    "RequestScope",
    "RetryNotice",
    "RetryPolicy",
    "RetryingModel",
    "current_scope",
    "mask_secrets",
    "offline_model",
    "openai_compatible",
    "replay",
    "request_scope",
    "transient_reason",
]

