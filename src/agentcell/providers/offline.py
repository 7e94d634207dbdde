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

from ..media.content import media_in
from ..media.describe import given_sentence
from ..options import HINT_STYLE

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
        unfilled: tuple[str, str] | None = None
        if info.function_tools and not returns:
            tool, args, missing = _choose_call(info.function_tools, prompt)
            if not missing:
                yield {99: DeltaThinkingPart(content=f"The prompt may need `{tool.name}`; calling it first.")}
                await self._pause(4)
                yield {0: DeltaToolCall(name=tool.name, json_args=json.dumps(args), tool_call_id="offline_call_1")}
                return
            unfilled = (tool.name, missing[0])
        if info.output_tools and not info.allow_text_output:
            out = info.output_tools[0]
            yield {99: DeltaThinkingPart(content="No real model is attached: this is an offline placeholder of "
                                                 "the right type, not a judgement of the prompt.")}
            await self._pause(3)
            answer = json.dumps(_example_args(out.parameters_json_schema, prompt, prefer_false=True))
            yield {0: DeltaToolCall(name=out.name, json_args=answer, tool_call_id="offline_output")}
            return
        yield {99: DeltaThinkingPart(content="No real model is attached, so I will describe what I see.")}
        given = _given(messages, prompt, returns)
        for word in _answer(prompt, returns, unfilled=unfilled, given=given).split(" "):
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


def _is_prompt(message: ModelMessage) -> bool:
    """A request the user's prompt is in (not tool results, whose pictures also ride in a user part)."""
    return isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts) and not any(
        isinstance(p, ToolReturnPart | RetryPromptPart) for p in message.parts)


def _last_prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if _is_prompt(message):
            texts = [p.content for p in message.parts if isinstance(p, UserPromptPart)]
            # Text only: an image part's bytes are no prompt (it is described by `_given`).
            return "\n".join(t if isinstance(t, str) else " ".join(c for c in t if isinstance(c, str)) for t in texts)
    return ""


def _since_prompt(messages: list[ModelMessage]) -> list[ModelRequest]:
    found: list[ModelRequest] = []
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            found.append(message)
            if _is_prompt(message):
                break
    return found[::-1]


def _tool_returns_since_prompt(messages: list[ModelMessage]) -> list[ToolReturnPart | RetryPromptPart]:
    found: list[ToolReturnPart | RetryPromptPart] = []
    for message in reversed(_since_prompt(messages)):
        found.extend(p for p in message.parts if isinstance(p, ToolReturnPart | RetryPromptPart))
    return found


def _given(messages: list[ModelMessage], prompt: str, returns: list[ToolReturnPart | RetryPromptPart]) -> str | None:
    """"I was given a 640×480 PNG and a table of …": the pictures and tables of the prompt and the tool results."""
    texts = [prompt, *(r.model_response_str() for r in returns if isinstance(r, ToolReturnPart))]
    return given_sentence(media_in(_since_prompt(messages)), texts)


def _relevance(tool: ToolDefinition, words: set[str]) -> int:
    text = f"{tool.name.replace('_', ' ')} {tool.description or ''}".lower()
    return sum(1 for w in words if w in text)


def _choose_call(tools: list[ToolDefinition], prompt: str) -> tuple[ToolDefinition, dict[str, Any], list[str]]:
    """The most relevant tool whose required arguments the prompt fills; else the most relevant one
    with the names of the arguments it could not fill (a careful model does not make them up)."""
    words = {w.lower() for w in _WORD.findall(prompt)}
    ranked = sorted(tools, key=lambda t: -_relevance(t, words))  # stable: declaration order breaks ties
    tried = [(tool, *_fill(tool.parameters_json_schema, prompt)) for tool in ranked]
    return next((t for t in tried if not t[2]), tried[0])


_FILE = re.compile(r"(?<![\w/.~-])[\w./~-]*\w\.[A-Za-z][A-Za-z0-9]{0,5}\b")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_QUOTED = re.compile(r"\"([^\"]{1,80})\"|'([^']{1,80})'|“([^”]{1,80})”")
_CODE = re.compile(r"\b[A-Z]{2,}[-_]?\d+[A-Z]?\b")
_NAME = re.compile(r"(?<=[a-z0-9,;:] )[A-Z][a-z]+(?: [A-Z][a-z]+)*")
"""Capitalised words inside a sentence (place and person names): a string argument's last resort."""
_PATHLIKE = ("path", "file", "filename", "filepath", "fname", "document", "doc")
_FREE_TEXT = ("query", "q", "question", "text", "prompt", "topic", "search", "term", "message", "content")
_UNSET: Any = object()


class _Pools:
    """Values found in the prompt, by kind; each is handed out once, in the order it appears."""

    def __init__(self, prompt: str) -> None:
        self.prompt = " ".join(prompt.split())
        self.files = _FILE.findall(prompt)
        self.numbers = [n for n in _NUMBER.findall(_FILE.sub(" ", _CODE.sub(" ", prompt)))]
        self.quoted = [next(g for g in m if g) for m in _QUOTED.findall(prompt)]
        self.codes = _CODE.findall(prompt)
        self.names = _NAME.findall(prompt)

    @staticmethod
    def take(pool: list[str]) -> Any:
        return pool.pop(0) if pool else _UNSET


def _fill(schema: dict[str, Any], prompt: str) -> tuple[dict[str, Any], list[str]]:
    """Arguments for `schema` drawn from the prompt by name and type, and the required ones left unfilled."""
    pools, args, missing = _Pools(prompt), {}, []
    required = set(schema.get("required") or ())
    for name, spec in (schema.get("properties") or {}).items():
        value = _argument(name.lower(), spec, pools)
        if value is not _UNSET:
            args[name] = value
        elif name in required:
            missing.append(name)
    return args, missing


def _argument(name: str, spec: dict[str, Any], pools: _Pools) -> Any:
    if "default" in spec:
        return _UNSET  # optional: a careful model leaves it to the tool
    if "anyOf" in spec:
        options = [s for s in spec["anyOf"] if s.get("type") != "null"]
        return _argument(name, options[0], pools) if options else _UNSET
    if "enum" in spec:
        said = [v for v in spec["enum"] if str(v).lower() in pools.prompt.lower()]
        return said[0] if said else spec["enum"][0]
    kind = spec.get("type")
    if kind in ("integer", "number"):
        raw = _Pools.take(pools.numbers)
        if raw is _UNSET:
            return _UNSET
        return int(float(raw)) if kind == "integer" else float(raw)
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if any(part in name for part in _PATHLIKE):
        return _Pools.take(pools.files)
    if name in _FREE_TEXT:  # what the prompt singles out (a quote, a code), else the prompt itself
        for pool in (pools.quoted, pools.codes):
            value = _Pools.take(pool)
            if value is not _UNSET:
                return value
        return pools.prompt[:200] or _UNSET
    coded = "code" in name or "id" in name
    for pool in (pools.codes, pools.quoted, pools.names) if coded else (pools.quoted, pools.codes, pools.names):
        value = _Pools.take(pool)
        if value is not _UNSET:
            return value
    return _UNSET


def _example_args(schema: dict[str, Any], prompt: str, *, prefer_false: bool = False) -> dict[str, Any]:
    """A typed answer's fields: from the prompt where it has them, else a plain value of the right type."""
    args, _ = _fill(schema, prompt)
    for name, spec in (schema.get("properties") or {}).items():
        if name not in args or name == "reason":  # a reason is the model's judgement: never words of the prompt
            args[name] = _placeholder(spec, name)
        if prefer_false and _placeholder(spec, name) is False:  # a yes/no answer (or guard verdict): no
            args[name] = False
    return args


def _placeholder(spec: dict[str, Any], name: str) -> Any:
    if "anyOf" in spec:
        options = [s for s in spec["anyOf"] if s.get("type") != "null"]
        return _placeholder(options[0], name) if options else None
    if "enum" in spec:
        return spec["enum"][0]
    if name == "reason":
        return "the offline model does not judge content; it always answers no"
    plain: dict[str, Any] = {"integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}
    return plain.get(str(spec.get("type")), name)


def _switch_hint() -> str:
    if HINT_STYLE.get() == "cell":
        return "Switch with `%agent config model=openai:gpt-4o-mini` or pass `--model` to the cell."
    return ("Switch by passing `model=\"openai:gpt-4o-mini\"` (any pydantic-ai model) to `complete()`, "
            "`stream()` or `show()`, or set `AGENTCELL_MODEL` before Python starts.")


def _answer(
    prompt: str,
    returns: list[ToolReturnPart | RetryPromptPart],
    *,
    unfilled: tuple[str, str] | None = None,
    given: str | None = None,
) -> str:
    shown = " ".join(prompt.split())
    if len(shown) > 160:
        shown = shown[:157] + "..."
    parts = [
        "This answer comes from agentcell's offline model, which runs without a key or a network.",
        f"It read your prompt: “{shown}”." if shown else "It received an empty prompt.",
    ]
    if given is not None:
        parts.append(given)
    if unfilled is not None:
        tool, argument = unfilled
        parts.append(f"It did not call `{tool}`: nothing in the prompt fills its required argument `{argument}`, "
                     "and it does not make values up. Put the value in the prompt, or use a real model.")
    for ret in returns:
        content = ret.model_response() if isinstance(ret, RetryPromptPart) else ret.model_response_str()
        content = " ".join(content.split())
        parts.append(f"The tool `{ret.tool_name}` returned: “{content[:200]}”.")
    parts += [
        "A real model would reason about that and answer properly, calling your tools as it needs them.",
        _switch_hint(),
        "Meanwhile you can watch the stream, press Stop, and inspect the run handle.",
    ]
    return " ".join(parts)
