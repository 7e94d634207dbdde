"""The conversation a slot sees, built from rendered turns.

Within a segment: earlier answer slots' turns, each followed by its answer as an assistant turn, then
this slot's turns. The last user turn becomes the run's prompt; everything before it is history.
Guards' turns are their own prompt and never enter the shared conversation.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

from ..media.content import to_user_content
from ..template.program import RenderedSlot, Turn


def turn_content(turn: Turn) -> str | list[UserContent]:
    """What the model gets for a user turn: its text, or its text and media parts in template order."""
    return to_user_content(turn.parts) if turn.parts else turn.text


def turn_messages(turns: Sequence[Turn]) -> list[ModelMessage]:
    """Explicit turns as pydantic-ai messages (consecutive user turns merge into one request)."""
    messages: list[ModelMessage] = []
    for turn in turns:
        if turn.role == "assistant":
            messages.append(ModelResponse(parts=[TextPart(turn.text)]))
        elif messages and isinstance(messages[-1], ModelRequest):
            messages[-1] = ModelRequest(parts=[*messages[-1].parts, UserPromptPart(turn_content(turn))])
        else:
            messages.append(ModelRequest(parts=[UserPromptPart(turn_content(turn))]))
    return messages


def split_turns(
    history: Sequence[ModelMessage], turns: Sequence[Turn]
) -> tuple[str | list[UserContent], list[ModelMessage]]:
    """`(prompt, message_history)` for a slot: its last user turn is the prompt.

    A slot with no user text of its own (two adjacent slots) is prompted with an empty user turn so
    the request still ends with the user speaking, as every provider expects.
    """
    if turns and turns[-1].role == "user":
        return turn_content(turns[-1]), [*history, *turn_messages(turns[:-1])]
    return "", [*history, *turn_messages(turns)]


def answered(turns: Sequence[Turn], answer: str) -> list[ModelMessage]:
    """What an answered slot adds to the shared conversation: its turns and its answer."""
    return [*turn_messages(turns), ModelResponse(parts=[TextPart(answer)])]


def with_header(history: Sequence[ModelMessage], header: str | None, at: int) -> list[ModelMessage]:
    """`history` with the segment's `<header>` as a user turn at position `at` (its segment's start)."""
    if not header:
        return list(history)
    return [*history[:at], ModelRequest(parts=[UserPromptPart(header)]), *history[at:]]


def visible_text(history: Sequence[ModelMessage], rendered: RenderedSlot) -> str:
    """Everything a slot's model is shown as text (for `extract`, whose answer must be a quote of it)."""
    pieces = [rendered.system or "", rendered.header or "", *(turn.text for turn in rendered.turns)]
    for message in history:
        for part in message.parts:
            if isinstance(part, UserPromptPart | SystemPromptPart | TextPart) and isinstance(part.content, str):
                pieces.append(part.content)
            elif isinstance(part, ToolReturnPart):
                pieces.append(part.model_response_str())
    return "\n".join(pieces)
