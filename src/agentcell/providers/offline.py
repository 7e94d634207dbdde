"""The offline default model: a scripted pydantic-ai `FunctionModel` that needs no key and no network.

The quickstart notebook and workshops run anywhere on it. It behaves like a small, honest tool-calling
model: it thinks out loud, calls the most relevant tool once with arguments drawn from the prompt,
fills typed outputs with plausible values, and streams a multi-sentence answer at a human-visible
pace so Stop can be tried. `models.resolve_model` picks it for `offline`, `offline:fast` and
`offline:slow`, and when nothing else is configured.
"""

from __future__ import annotations

import asyncio
import json
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
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.tools import ToolDefinition

OFFLINE_NAME = "offline"
OFFLINE_DELAYS = {"": 0.045, "fast": 0.0, "slow": 0.15}
"""Seconds per streamed word of `offline`, `offline:fast` and `offline:slow`."""


def offline_model(*, delay: float = 0.045) -> FunctionModel:
    """The offline default: a scripted model that streams one word every `delay` seconds."""
    script = _OfflineScript(delay=delay)
    return FunctionModel(script.respond, stream_function=script.stream, model_name=OFFLINE_NAME)


def is_offline(model: Model) -> bool:
    """Whether `model` (under any wrappers) is the offline default."""
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
