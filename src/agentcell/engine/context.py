"""How much of the model's context window a request uses: known windows and an estimate.

The gauge after a request shows what the provider reported (input + output tokens of that request).
Before a request nothing is reported yet, so the compaction decision uses an estimate: the larger of
a character count (about four characters a token) and the last reported figure plus the characters
added since. It is deliberately simple: it only has to say "close to the window", not count exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ..media.content import content_chars

DEFAULT_WINDOW = 128_000
"""The window assumed for a model this table does not know (pass `context_window=` to say)."""

OFFLINE_WINDOW = 32_000
"""The nominal window of the offline default model, so the gauge moves in a workshop."""

KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    # Most specific first: the first fragment found in the model name wins.
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-3.5", 16_385),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini", 1_048_576),
    ("llama-3", 128_000),
    ("llama3", 128_000),
    ("qwen3", 40_960),
    ("qwen2.5", 32_768),
    ("mistral-large", 128_000),
    ("mistral", 32_000),
    ("deepseek", 128_000),
    ("offline", OFFLINE_WINDOW),
)


def window_known(model_name: str, *, override: int | None = None, offline: bool = False) -> bool:
    """Whether `window_for` gives a fact (`context_window=`, the offline model's own, the table) rather than
    `DEFAULT_WINDOW`, assumed so compaction has a bound: the gauge then says "window unknown"."""
    if override is not None or offline:
        return True
    name = model_name.lower()
    return any(fragment in name for fragment, _ in KNOWN_WINDOWS)


def window_for(model_name: str, *, override: int | None = None, offline: bool = False) -> int:
    """The context window to meter against: `override`, else the table, else `DEFAULT_WINDOW`."""
    if override is not None:
        return override
    if offline:
        return OFFLINE_WINDOW
    name = model_name.lower()
    for fragment, window in KNOWN_WINDOWS:
        if fragment in name:
            return window
    return DEFAULT_WINDOW


def chars_to_tokens(chars: int) -> int:
    """About four characters a token (the rule every estimate here uses)."""
    return math.ceil(chars / 4)


def estimate_tokens(messages: Sequence[ModelMessage], *, extra_chars: int = 0) -> int:
    """About four characters a token over everything the messages carry."""
    return math.ceil((message_chars(messages) + extra_chars) / 4)


def message_chars(messages: Sequence[ModelMessage]) -> int:
    """Characters of text, tool arguments and tool results in `messages`."""
    total = 0
    for message in messages:
        if isinstance(message, ModelRequest):
            total += len(message.instructions or "")
        total += sum(_part_chars(part) for part in message.parts)
    return total


def _part_chars(part: object) -> int:
    if isinstance(part, UserPromptPart):
        return len(part.content) if isinstance(part.content, str) else content_chars(part.content)
    if isinstance(part, SystemPromptPart | TextPart | ThinkingPart):
        return len(part.content)
    if isinstance(part, ToolCallPart):
        return len(part.tool_name) + len(part.args_as_json_str())
    if isinstance(part, ToolReturnPart | RetryPromptPart):
        return len(part.model_response_str()) if isinstance(part, ToolReturnPart) else len(part.model_response())
    return 0


def response_tokens(response: ModelResponse) -> int:
    """What one response reports using: input + output tokens (0 when the provider reports none)."""
    usage = response.usage
    return usage.input_tokens + usage.output_tokens
