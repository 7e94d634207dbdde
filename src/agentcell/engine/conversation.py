"""The conversation a slot sees, built from rendered turns (SPEC §2.3).

Within a segment: earlier answer slots' turns, each followed by its answer as an assistant turn, then
this slot's turns. The last user turn becomes the run's prompt; everything before it is history.
Guards' turns are their own prompt and never enter the shared conversation.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from ..template.program import Turn


def turn_messages(turns: Sequence[Turn]) -> list[ModelMessage]:
    """Explicit turns as pydantic-ai messages (consecutive user turns merge into one request)."""
    messages: list[ModelMessage] = []
    for turn in turns:
        if turn.role == "assistant":
            messages.append(ModelResponse(parts=[TextPart(turn.text)]))
        elif messages and isinstance(messages[-1], ModelRequest):
            messages[-1] = ModelRequest(parts=[*messages[-1].parts, UserPromptPart(turn.text)])
        else:
            messages.append(ModelRequest(parts=[UserPromptPart(turn.text)]))
    return messages


def split_turns(history: Sequence[ModelMessage], turns: Sequence[Turn]) -> tuple[str, list[ModelMessage]]:
    """`(prompt, message_history)` for a slot: its last user turn is the prompt.

    A slot with no user text of its own (two adjacent slots) is prompted with an empty user turn so
    the request still ends with the user speaking, as every provider expects.
    """
    if turns and turns[-1].role == "user":
        return turns[-1].text, [*history, *turn_messages(turns[:-1])]
    return "", [*history, *turn_messages(turns)]


def answered(turns: Sequence[Turn], answer: str) -> list[ModelMessage]:
    """What an answered slot adds to the shared conversation: its turns and its answer."""
    return [*turn_messages(turns), ModelResponse(parts=[TextPart(answer)])]
