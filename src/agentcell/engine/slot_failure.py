"""What a slot that failed says, in one sentence: the exception, or for a value cut off or retries spent, what
the model wrote and which setting allows more (never advice to set what is already set)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import exceptions as pydantic_ai_exceptions
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from ..errors import MediaError
from .contain import describe
from .output_modes import quoted
from .streaming import SlotStream


def failure_message(slot: str, exc: BaseException, stream: SlotStream) -> str:
    """What a slot that failed says: the exception, or for spent retries, what the model last wrote and how to
    allow more."""
    if isinstance(exc, MediaError):
        return str(exc)  # already the one sentence naming the value and the slot
    if isinstance(exc, _TOKEN_LIMIT):  # the value was cut off by the slot's own max_tokens
        wrote = _last_text(stream.new_messages())
        said = f": the model wrote {quoted(wrote)}" if wrote is not None else ""
        return (
            f"slot {slot!r} reached its max_tokens before its value was complete{said} (raise max_tokens= on the "
            "slot, or ask for a shorter answer)"
        )
    if isinstance(exc, UnexpectedModelBehavior) and "retries" in exc.message:
        fact = exc.message.split(". ")[0].rstrip(".")  # pydantic-ai appends advice and a docs link
        wrote = _last_text(stream.new_messages())
        said = f"; the model last wrote {quoted(wrote)}" if wrote is not None else ""
        return (
            f"slot {slot!r} gave up: {fact}{said} (each invalid tool call or answer was fed back to the model; "
            "set retries= on the slot to allow more)"
        )
    return describe(exc)


_TOKEN_LIMIT: Any = getattr(pydantic_ai_exceptions, "OutputTokenLimitExceeded", ())
"""pydantic-ai's error for structured output cut off by `max_tokens` (newer releases; none before)."""


def _last_text(messages: Sequence[ModelMessage]) -> str | None:
    """The text of the slot's last response that had any (what a typed slot's model wrote instead of a value)."""
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            if text.strip():
                return text
    return None
