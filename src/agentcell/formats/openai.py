"""pydantic-ai messages → OpenAI Chat Completions messages.

pydantic-ai has no public converter (issues #1942, #5940), and the widget's export and workshops want
the transcript in the shape most readers know. The mapping is lossy on purpose: thinking and
provider-native tool traffic are dropped. A user message with images, documents or audio is the standard
content-part list (`text`, `image_url` with a `data:` URI, `file`, `input_audio`); views ask for
`inline_media=False` and get `agentcell-media:<digest>` references instead of the bytes.

The one converter: `RunResult.to_openai()` and the engine's teaching events (`ModelRequestSent`) both
use it, so it sits in the values layer below `result.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from .media_refs import is_media_item, openai_part

OpenAIMessage = dict[str, Any]


def to_openai(
    messages: Iterable[ModelMessage], *, system: str | None = None, inline_media: bool = True
) -> list[OpenAIMessage]:
    """Convert a pydantic-ai transcript to a Chat Completions `messages` list.

    `system` is the instructions already in force before `messages` (when converting a tail of a
    longer transcript), so they are not emitted again. `inline_media=False`: media parts name their
    digest (`agentcell-media:…`) instead of carrying their bytes (what the views are sent).
    """
    out: list[OpenAIMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            # Instructions are re-sent on every request; emit a system message only when they change.
            if message.instructions and message.instructions != system:
                system = message.instructions
                out.append({"role": "system", "content": system})
            out.extend(_request_parts(message, inline_media))
        elif isinstance(message, ModelResponse):
            out.extend(_response(message))
    return out


def _request_parts(message: ModelRequest, inline_media: bool) -> list[OpenAIMessage]:
    out: list[OpenAIMessage] = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            out.append({"role": "system", "content": part.content})
        elif isinstance(part, UserPromptPart):
            out.append({"role": "user", "content": _user_content(part.content, inline_media)})
        elif isinstance(part, ToolReturnPart):
            out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response_str()})
        elif isinstance(part, RetryPromptPart):
            if part.tool_name is None:
                out.append({"role": "user", "content": part.model_response()})
            else:
                out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response()})
    return out


def _user_content(content: Any, inline_media: bool) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not any(is_media_item(item) for item in content):  # text only (or parts no reader knows): one string
        return "\n".join(item if isinstance(item, str) else f"[{type(item).__name__}]" for item in content)
    out: list[dict[str, Any]] = []
    for item in content:
        if is_media_item(item):
            out.append(openai_part(item, inline=inline_media))
        else:
            out.append({"type": "text", "text": item if isinstance(item, str) else f"[{type(item).__name__}]"})
    return out


def _response(message: ModelResponse) -> list[OpenAIMessage]:
    text = "".join(part.content for part in message.parts if isinstance(part, TextPart))
    calls = [
        {
            "id": part.tool_call_id,
            "type": "function",
            "function": {"name": part.tool_name, "arguments": part.args_as_json_str()},
        }
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]
    if not text and not calls:
        return []
    entry: OpenAIMessage = {"role": "assistant", "content": text or None}
    if calls:
        entry["tool_calls"] = calls
    return [entry]
