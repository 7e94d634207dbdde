"""Model resolution and the offline default model.

`resolve_model` turns what a user wrote (`"openai:gpt-4o-mini"`, `"openai-compat:qwen3:8b@http://…/v1"`,
a pydantic-ai `Model`, `None`) into a model plus a display name that never contains a credential. Every
model that talks to a network is wrapped in `RetryingModel` (visible retries, SDK retries off, clear
permanent errors; see `providers/retry.py`). `None` falls back to the
`AGENTCELL_MODEL` environment variable and then to the **offline default**: a scripted pydantic-ai
`FunctionModel` that needs no key and no network, so the quickstart notebook and workshops run
anywhere. It behaves like a small, honest tool-calling model: it thinks out loud, calls the most
relevant tool once with arguments drawn from the prompt, fills typed outputs with plausible values,
and streams a multi-sentence answer at a human-visible pace so Stop can be tried.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaThinkingCalls,
    DeltaThinkingPart,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)
from pydantic_ai.models.test import TestModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.tools import ToolDefinition

from .errors import ModelConfigError
from .providers.cassette import RecordingModel, ReplayModel
from .providers.compat import COMPAT_KEY_VAR, COMPAT_PREFIX, openai_compatible, parse_compat, safe_url
from .providers.retry import RetryingModel

OFFLINE_NAME = "offline"
ENV_MODEL = "AGENTCELL_MODEL"
_PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
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


def resolve_model(model: str | Model | None = None) -> ResolvedModel:
    """Resolve a model spec: explicit value > `AGENTCELL_MODEL` > the offline default.

    Raises:
        ModelConfigError: the provider is unknown or its API key variable is not set.
    """
    if isinstance(model, Model):
        return ResolvedModel(model=_with_retries(model), name=_display_name(model), offline=_is_offline(model))
    spec = (model or os.environ.get(ENV_MODEL) or OFFLINE_NAME).strip()
    if spec == OFFLINE_NAME or spec.startswith(OFFLINE_NAME + ":"):
        return _resolve_offline(spec)
    if spec.startswith(COMPAT_PREFIX + ":"):
        name, url = parse_compat(spec)
        compat = RetryingModel(openai_compatible(name, url), key_var=COMPAT_KEY_VAR)
        return ResolvedModel(model=compat, name=f"{COMPAT_PREFIX}:{name}@{safe_url(url)}")
    key_var = _PROVIDER_KEYS.get(spec.partition(":")[0])
    return ResolvedModel(model=RetryingModel(_infer(spec), key_var=key_var), name=spec)


def offline_model(*, delay: float = 0.045) -> FunctionModel:
    """The offline default: a scripted model that streams one word every `delay` seconds."""
    script = _OfflineScript(delay=delay)
    return FunctionModel(script.respond, stream_function=script.stream, model_name=OFFLINE_NAME)


OFFLINE_DELAYS = {"": 0.045, "fast": 0.0, "slow": 0.15}
"""Seconds per streamed word of `offline`, `offline:fast` and `offline:slow`."""


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
    # An `openai:` model pointed at another server with OPENAI_BASE_URL needs no key (a placeholder is sent).
    keyless = provider == "openai" and bool(os.environ.get("OPENAI_BASE_URL"))
    if key_var is not None and not os.environ.get(key_var) and not keyless:
        raise ModelConfigError(
            f"model {spec!r} needs the environment variable {key_var}; set it before starting Jupyter, or "
            f"with os.environ[{key_var!r}] = getpass.getpass() (not %env, which prints the key into the "
            f"notebook), or use --model offline"
        )
    try:
        return infer_model(spec)
    except (UserError, ValueError, ImportError) as exc:
        raise ModelConfigError(f"cannot use model {spec!r}: {exc}") from None


def _with_retries(model: Model) -> Model:
    """Wrap a model that talks to a network in `RetryingModel` (ours and local test models are left alone)."""
    if isinstance(model, RetryingModel | RecordingModel | ReplayModel | FunctionModel | TestModel):
        return model
    return RetryingModel(model, key_var=_PROVIDER_KEYS.get(getattr(model, "system", "") or ""))


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


def _is_offline(model: Model) -> bool:
    while isinstance(model, WrapperModel):
        model = model.wrapped
    return isinstance(model, FunctionModel) and model.model_name == OFFLINE_NAME


_TOKEN = re.compile(r"\b[A-Z]{2,}[-_]?\d+[A-Z]?\b|\"[^\"]{1,60}\"|'[^']{1,60}'")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{3,}")


@dataclass(frozen=True, slots=True)
class _OfflineScript:
    """The offline model's behaviour, as a pure function of the conversation so far."""

    delay: float

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls | DeltaThinkingCalls]:
        prompt = _last_prompt(messages)
        returns = _tool_returns_since_prompt(messages)
        if info.function_tools and not returns:
            tool = _most_relevant(info.function_tools, prompt)
            yield {99: DeltaThinkingPart(content=f"The prompt may need `{tool.name}`; calling it first.")}
            await self._pause(4)
            args = json.dumps(_example_args(tool.parameters_json_schema, prompt))
            yield {0: DeltaToolCall(name=tool.name, json_args=args, tool_call_id="offline_call_1")}
            return
        if info.output_tools and not info.allow_text_output:
            out = info.output_tools[0]
            await self._pause(3)
            args = json.dumps(_example_args(out.parameters_json_schema, prompt, prefer_false=True))
            yield {0: DeltaToolCall(name=out.name, json_args=args, tool_call_id="offline_output")}
            return
        yield {99: DeltaThinkingPart(content="No real model is attached, so I will describe what I see.")}
        for word in _answer(prompt, returns).split(" "):
            await self._pause(1)
            yield word + " "

    async def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The same behaviour for a non-streamed request, collected into one response."""
        thinking, text, calls = "", "", []
        async for item in _OfflineScript(delay=0.0).stream(messages, info):
            if isinstance(item, str):
                text += item
                continue
            for delta in item.values():
                if isinstance(delta, DeltaThinkingPart):
                    thinking += delta.content or ""
                elif isinstance(delta, DeltaToolCall):
                    call_id = delta.tool_call_id or "call"
                    calls.append(ToolCallPart(delta.name or "", delta.json_args, tool_call_id=call_id))
        parts: list[ModelResponsePart] = [ThinkingPart(thinking)] if thinking else []
        parts += [TextPart(text.rstrip())] if text else []
        return ModelResponse(parts=[*parts, *calls], model_name=OFFLINE_NAME)

    async def _pause(self, words: int) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay * words)


def _last_prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            texts = [p.content for p in message.parts if isinstance(p, UserPromptPart)]
            if texts:
                return "\n".join(t if isinstance(t, str) else str(t) for t in texts)
    return ""


def _tool_returns_since_prompt(messages: list[ModelMessage]) -> list[ToolReturnPart | RetryPromptPart]:
    found: list[ToolReturnPart | RetryPromptPart] = []
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        found.extend(p for p in message.parts if isinstance(p, ToolReturnPart | RetryPromptPart))
        if any(isinstance(p, UserPromptPart) for p in message.parts):
            break
    return found


def _most_relevant(tools: list[ToolDefinition], prompt: str) -> ToolDefinition:
    words = {w.lower() for w in _WORD.findall(prompt)}

    def score(tool: ToolDefinition) -> int:
        text = f"{tool.name.replace('_', ' ')} {tool.description or ''}".lower()
        return sum(1 for w in words if w in text)

    return max(tools, key=score)


def _example_args(schema: dict[str, Any], prompt: str, *, prefer_false: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    tokens = [t.strip("'\"") for t in _TOKEN.findall(prompt)] or _WORD.findall(prompt)[-1:]
    return {name: _example_value(spec, tokens, name, prefer_false) for name, spec in props.items()}


def _example_value(spec: dict[str, Any], tokens: list[str], name: str, prefer_false: bool) -> Any:
    if "enum" in spec:
        return spec["enum"][0]
    if "anyOf" in spec:
        options = [s for s in spec["anyOf"] if s.get("type") != "null"]
        return _example_value(options[0], tokens, name, prefer_false) if options else None
    kind = spec.get("type")
    if kind == "boolean":
        return not prefer_false
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if name == "reason":
        return "the offline model does not judge content; it always answers no"
    return tokens[0] if tokens else name


def _answer(prompt: str, returns: list[ToolReturnPart | RetryPromptPart]) -> str:
    shown = " ".join(prompt.split())
    if len(shown) > 160:
        shown = shown[:157] + "..."
    parts = [
        "This answer comes from agentcell's offline model, which runs without a key or a network.",
        f"It read your prompt: “{shown}”." if shown else "It received an empty prompt.",
    ]
    for ret in returns:
        content = ret.model_response() if isinstance(ret, RetryPromptPart) else ret.model_response_str()
        content = " ".join(content.split())
        parts.append(f"The tool `{ret.tool_name}` returned: “{content[:200]}”.")
    parts += [
        "A real model would reason about that and answer properly, calling your tools as it needs them.",
        "Switch with `%agent config model=openai:gpt-4o-mini` or pass `--model` to the cell.",
        "Meanwhile you can watch the stream, press Stop, and inspect the run handle.",
    ]
    return " ".join(parts)
