"""pydantic-ai messages → OpenAI Chat Completions messages.

pydantic-ai has no public converter (issues #1942, #5940), and the widget's export and workshops want
the transcript in the shape most readers know. The mapping is lossy on purpose: thinking and
provider-native tool traffic are dropped, and multimodal user content is reduced to its text.

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

OpenAIMessage = dict[str, Any]


def to_openai(messages: Iterable[ModelMessage], *, system: str | None = None) -> list[OpenAIMessage]:
    """Convert a pydantic-ai transcript to a Chat Completions `messages` list.

    `system` is the instructions already in force before `messages` (when converting a tail of a
    longer transcript), so they are not emitted again.
    """
    out: list[OpenAIMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            # Instructions are re-sent on every request; emit a system message only when they change.
            if message.instructions and message.instructions != system:
                system = message.instructions
                out.append({"role": "system", "content": system})
            out.extend(_request_parts(message))
        elif isinstance(message, ModelResponse):
            out.extend(_response(message))
    return out


def _request_parts(message: ModelRequest) -> list[OpenAIMessage]:
    out: list[OpenAIMessage] = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            out.append({"role": "system", "content": part.content})
        elif isinstance(part, UserPromptPart):
            out.append({"role": "user", "content": _user_text(part.content)})
        elif isinstance(part, ToolReturnPart):
            out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response_str()})
        elif isinstance(part, RetryPromptPart):
            if part.tool_name is None:
                out.append({"role": "user", "content": part.model_response()})
            else:
                out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response()})
    return out


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(item if isinstance(item, str) else f"[{type(item).__name__}]" for item in content)


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
