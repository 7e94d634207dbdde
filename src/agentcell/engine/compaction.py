"""Keeping a long conversation inside the model's window.

Two things change what the model *reads*; neither changes the run's record (`RunResult.messages`,
the journal, `ToolCompleted.result` keep everything):

* a tool result longer than `Compaction.tool_result_chars` is cut, with a marker saying so;
* when a request would pass `threshold` of the window, the older messages are summarized by the model
  (or `Compaction.model`) and the summary replaces them. The cut falls only where no tool call is
  separated from its return. The replacement is remembered, so later requests of the run reuse the
  summary instead of paying for it again.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import Agent
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
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from ..media.content import content_text
from ..options import DEFAULT_COMPACTION as DEFAULT_COMPACTION
from ..options import Compaction as Compaction
from .contain import PROCESS_EXITS, Escaped
from .context import estimate_tokens, message_chars

SUMMARY_INSTRUCTIONS = (
    "You compact a conversation between a user and an AI assistant that uses tools. Write a summary the "
    "assistant can continue from: the user's goals and constraints, decisions made, facts and numbers found "
    "by tools (keep exact values, names, paths and ids), what was tried and failed, and what remains to do. "
    "Be complete but brief; use short bullet points; do not address the user."
)
SUMMARY_HEADER = "[agentcell: the earlier conversation was compacted to save context; summary follows]\n"
TRUNCATION_MARKER = (
    "\n[agentcell: tool result cut to {kept} of {total} characters for the model; "
    "the full result is in the run's record]"
)


def _too_long(part: object, limit: int) -> bool:
    return isinstance(part, ToolReturnPart) and len(part.model_response_str()) > limit


def _cut(part: Any, limit: int) -> ToolReturnPart:
    text = part.model_response_str()
    marker = TRUNCATION_MARKER.format(kept=limit, total=len(text))
    return replace(part, content=text[:limit] + marker)


def safe_cuts(messages: Sequence[ModelMessage]) -> list[int]:
    """Indices `i` (1 ≤ i < len) where `messages[:i]` and `messages[i:]` split no tool call from its return."""
    cuts: list[int] = []
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if index > 0 and not open_calls and not _answers_calls(message):
            cuts.append(index)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                open_calls.add(part.tool_call_id)
            elif isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id:
                open_calls.discard(part.tool_call_id)
    return cuts


def _answers_calls(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(
        isinstance(p, ToolReturnPart | RetryPromptPart) and p.tool_name is not None for p in message.parts
    )


def choose_cut(messages: Sequence[ModelMessage], *, keep_tokens: int) -> int | None:
    """The earliest safe cut whose kept tail fits `keep_tokens`, else the latest safe cut; `None` if none.

    At least two messages go into the summary, or there is nothing worth summarizing.
    """
    cuts = [i for i in safe_cuts(messages) if i >= 2]
    if not cuts:
        return None
    for cut in cuts:
        if estimate_tokens(messages[cut:]) <= keep_tokens:
            return cut
    return cuts[-1]


def transcript_text(messages: Sequence[ModelMessage], *, tool_result_chars: int | None) -> str:
    """The messages as plain text for the summarizer (no tool schemas needed, no pairs to keep)."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                lines.append(f"User: {part.content if isinstance(part.content, str) else content_text(part.content)}")
            elif isinstance(part, SystemPromptPart):
                lines.append(f"System: {part.content}")
            elif isinstance(part, TextPart):
                lines.append(f"Assistant: {part.content}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"Assistant called {part.tool_name}({part.args_as_json_str()})")
            elif isinstance(part, ToolReturnPart):
                text = part.model_response_str()
                if tool_result_chars is not None and len(text) > tool_result_chars:
                    text = text[:tool_result_chars] + " […]"
                lines.append(f"Tool {part.tool_name} returned: {text}")
            elif isinstance(part, RetryPromptPart):
                lines.append(f"Tool {part.tool_name or ''} failed: {part.model_response()}")
    return "\n".join(lines)


def with_summary(summary: str, kept: Sequence[ModelMessage], dropped: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The summary followed by the kept messages, still alternating request/response.

    System prompt parts of the dropped messages stay (they are instructions, not history).
    """
    system = [p for m in dropped if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, SystemPromptPart)]
    summary_part = UserPromptPart(SUMMARY_HEADER + summary)
    first = kept[0] if kept else None
    if isinstance(first, ModelRequest):
        return [replace(first, parts=[*system, summary_part, *first.parts]), *kept[1:]]
    return [ModelRequest(parts=[*system, summary_part]), *kept]


@dataclass(frozen=True, slots=True)
class Replacement:
    """A remembered compaction: these leading messages are sent as `summary_messages`."""

    prefix: tuple[ModelMessage, ...]
    summary_messages: tuple[ModelMessage, ...]
    summary: str


def apply_replacements(messages: list[ModelMessage], memo: Sequence[Replacement]) -> list[ModelMessage]:
    """Substitute every remembered compaction whose prefix `messages` still starts with, in order."""
    for item in memo:
        n = len(item.prefix)
        # List equality checks identity first, so an unchanged prefix compares in O(n) pointer checks.
        if len(messages) >= n and tuple(messages[:n]) == item.prefix:
            messages = [*item.summary_messages, *messages[n:]]
    return messages


async def summarize(model: Model, text: str) -> tuple[str, RunUsage]:
    """Ask `model` for a summary of `text` (streamed, so stream-only scripted models work too)."""
    agent: Agent[None, str] = Agent(model, output_type=str, instructions=SUMMARY_INSTRUCTIONS, name="compaction")
    result = await agent.run(text, event_stream_handler=_drain)
    return result.output.strip(), result.usage


async def _drain(_ctx: Any, events: AsyncIterable[Any]) -> None:
    try:
        async for _ in events:  # pulling the stream runs the model's own code
            pass
    except PROCESS_EXITS as exc:  # see contain.py
        raise Escaped(exc) from exc


class SlotView:
    """What one slot's requests sent so far, so the next request only looks at the messages added since.

    pydantic-ai's conversation only grows: each request's list is the previous one plus the new
    messages, the same objects. So a request whose list has the same length-or-more, the same first
    message and the same message where the previous list ended extends it; only its tail is cut
    (a long tool result gets a marker) and counted. Anything else (compaction replaced the head, a resumed
    segment, a history pydantic-ai rewrote) starts the slot's view again from the whole list.
    Cost per request: O(messages added), instead of O(history) (O(n²) per run).
    """

    __slots__ = ("chars", "count", "cut", "first", "last", "replied_chars", "view")

    def __init__(self) -> None:
        self.count = 0
        self.first: ModelMessage | None = None
        self.last: ModelMessage | None = None
        self.view: list[ModelMessage] = []
        """The messages as the model reads them (long tool results cut)."""
        self.cut = False
        """Whether any message in `view` differs from its raw one."""
        self.chars = 0
        """Characters in `view` (`context.message_chars`)."""
        self.replied_chars = 0
        """Characters in `view` up to and including its last response."""

    def extends(self, raw: Sequence[ModelMessage]) -> bool:
        count = self.count
        return count == 0 or (len(raw) >= count and raw[0] is self.first and raw[count - 1] is self.last)

    def add(self, raw: Sequence[ModelMessage], limit: int | None) -> list[ModelMessage]:
        """Take in `raw`'s messages after the ones already seen; the list the model reads."""
        for message in raw[self.count :]:
            if limit is not None and isinstance(message, ModelRequest):
                cut = [_cut(p, limit) if _too_long(p, limit) else p for p in message.parts]
                if any(a is not b for a, b in zip(cut, message.parts, strict=True)):
                    message, self.cut = replace(message, parts=cut), True
            self.view.append(message)
            self.chars += message_chars((message,))
            if isinstance(message, ModelResponse):
                self.replied_chars = self.chars
        self.count = len(raw)
        if raw:
            self.first, self.last = raw[0], raw[-1]
        return list(self.view) if self.cut else list(raw)


class ContextKeeper:
    """One run's context policy and memory: the window, the threshold, remembered summaries.

    It only remembers; `requests.prepare_messages` compacts before each request and reports through
    the run's state. Its per-slot `SlotView`s make that accounting incremental.
    """

    def __init__(
        self, *, window: int, compaction: Compaction | None, summarizer: Model | None = None, window_known: bool = True
    ) -> None:
        self.window = window
        self.window_known = window_known
        """False when `window` is only assumed (a model no table knows): views say "window unknown"."""
        self.compaction = compaction
        self.summarizer = summarizer
        self.memo: list[Replacement] = []
        self.last_used: dict[str, int] = {}
        """Slot → tokens the provider reported for its latest request (the estimate builds on it)."""
        self.compactions = 0
        self._views: dict[str, SlotView] = {}

    def view(self, slot: str, raw: Sequence[ModelMessage], tool_result_chars: int | None) -> list[ModelMessage]:
        """`raw` as the model reads it (long tool results cut), looking only at what `slot` added since its
        previous request."""
        seen = self._views.get(slot)
        if seen is None or not seen.extends(raw):
            seen = self._views[slot] = SlotView()
        return seen.add(raw, tool_result_chars)

    def sent_chars(self, slot: str) -> int:
        """Characters of `slot`'s latest `view`."""
        seen = self._views.get(slot)
        return seen.chars if seen is not None else 0

    def estimate(self, slot: str) -> int:
        """Tokens `slot`'s latest `view` carries: chars/4, or the last reported figure plus what came since."""
        seen = self._views.get(slot)
        if seen is None:
            return 0
        own = math.ceil(seen.chars / 4)
        reported = self.last_used.get(slot)
        if reported is None:
            return own
        return max(own, reported + math.ceil((seen.chars - seen.replied_chars) / 4))
