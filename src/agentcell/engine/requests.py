"""Around every model request of a slot: compaction before it, the gauge and the journal row after it.

`SlotRequests` holds the hooks; the run's `SlotModel` (`slotmodel.py`, a model wrapper, not a pydantic-ai
capability) calls `before` with the messages pydantic-ai asks it to send and sends what `before`
returns, then calls `after` with the response. It rewrites only the request's own message list, never
`RunContext.messages`, so what the model reads may be compacted while the run's record stays whole
(as a v2 `before_model_request` hook that assigns `request_context.messages` did).
`prepare_messages` does the compaction before a request, using the run's `ContextKeeper`
(`compaction.py`: what one run shares across its slots, the window, the policy and the summaries
already paid for).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_core import to_jsonable_python

from ..events import (
    CompactionFinished,
    CompactionStarted,
    ContextUpdated,
    ModelRequestSent,
    ModelResponseReceived,
    RequestCompleted,
    Usage,
)
from ..formats.openai import to_openai
from ..media.content import hollow_messages
from .budget import spend_check
from .compaction import (
    ContextKeeper,
    Replacement,
    apply_replacements,
    choose_cut,
    summarize,
    transcript_text,
    with_summary,
)
from .context import chars_to_tokens, estimate_tokens, message_chars, response_tokens

SUMMARY_TOOL_CHARS = 2_000
"""Tool results are cut to this many characters in the text the summarizer reads."""

if TYPE_CHECKING:
    from .state import RunState
    from .streaming import SlotStream


async def prepare_messages(
    state: RunState, keeper: ContextKeeper, slot: str, messages: list[ModelMessage], model: Model
) -> list[ModelMessage]:
    """What the model reads for this request: remembered summaries, cut tool results, maybe a new summary.

    O(messages added since the slot's previous request): `ContextKeeper.view` cuts and counts only those.
    """
    policy = keeper.compaction
    if policy is None:
        keeper.view(slot, messages, None)  # counted all the same, for the gauge when a provider reports no usage
        return messages
    raw = apply_replacements(messages, keeper.memo)
    view = keeper.view(slot, raw, policy.tool_result_chars)  # same length and order as `raw`
    if policy.threshold is None:
        return view
    tokens = keeper.estimate(slot)
    if tokens <= policy.threshold * keeper.window:
        return view
    return await _compact(state, keeper, slot, raw, view, tokens, model)


async def _compact(
    state: RunState,
    keeper: ContextKeeper,
    slot: str,
    raw: list[ModelMessage],
    view: list[ModelMessage],
    tokens: int,
    model: Model,
) -> list[ModelMessage]:
    policy = keeper.compaction
    assert policy is not None and policy.threshold is not None
    cut = choose_cut(view, keep_tokens=int(policy.keep * keeper.window))
    if cut is None:
        state.warn(slot, f"context at ~{tokens} of {keeper.window} tokens and nothing can be compacted")
        return view
    run_id, writer = state.run_id, keeper.summarizer or model
    state.emit(
        CompactionStarted(
            run_id=run_id,
            slot=slot,
            tokens=tokens,
            window=keeper.window,
            threshold=policy.threshold,
            messages=len(view),
        )
    )
    summary = await _summary(state, keeper, slot, raw[:cut], writer)
    compacted = with_summary(summary, view[cut:], raw[:cut])
    # `with_summary` merges the summary into a first kept request, so then that request is replaced too.
    through = cut + 1 if isinstance(view[cut], ModelRequest) else cut
    keeper.memo.append(Replacement(tuple(raw[:through]), (compacted[0],), summary))
    keeper.last_used.pop(slot, None)
    state.emit(
        CompactionFinished(
            run_id=run_id,
            slot=slot,
            before=tokens,
            after=estimate_tokens(compacted),
            messages_before=len(view),
            messages_after=len(compacted),
            summarized=cut,
            summary=summary,
        )
    )
    return compacted


async def _summary(
    state: RunState, keeper: ContextKeeper, slot: str, older: list[ModelMessage], writer: Model
) -> str:
    """Have `writer` summarize `older`; its request is counted and journaled like any other."""
    started = time.monotonic()
    summary, usage = await summarize(writer, transcript_text(older, tool_result_chars=SUMMARY_TOOL_CHARS))
    keeper.compactions += 1
    state.usage.update(f"{slot}#compaction{keeper.compactions}", usage)
    state.spent += float(usage.cost or 0.0)
    state.emit(
        RequestCompleted(
            run_id=state.run_id,
            slot=slot,
            request=keeper.compactions,
            usage=_request_usage(usage.input_tokens, usage.output_tokens, usage.cost),
            latency_ms=round((time.monotonic() - started) * 1000, 1),
            model=writer.model_name,
            purpose="compaction",
        )
    )
    return summary


TEACH_CHARS = 2_000
"""Longest text a teaching event carries per message or part: the answer itself already streamed."""


def _clipped(item: dict[str, Any]) -> dict[str, Any]:
    """`item` with a long `content` cut, so teaching events never repeat a long answer or tool result."""
    content = item.get("content")
    if not isinstance(content, str) or len(content) <= TEACH_CHARS:
        return item
    more = len(content) - TEACH_CHARS
    return {**item, "content": f"{content[:TEACH_CHARS]}… [{more} more characters, shown in the run above]"}


def _pydantic_json(messages: list[ModelMessage]) -> tuple[dict[str, Any], ...]:
    """`messages` as pydantic-ai's own JSON, each part's long `content` clipped like the OpenAI shape."""
    # An image travels to the views once, as a `MediaAdded` thumbnail; here it is named by its digest.
    out = ModelMessagesTypeAdapter.dump_python(hollow_messages(messages), mode="json")
    for message in out:  # the dump's own fresh dicts: clipped in place, not copied
        message["parts"] = [_clipped(part) for part in message.get("parts", [])]
    return tuple(out)


def _request_usage(input_tokens: int, output_tokens: int, cost: Any) -> Usage:
    return Usage(
        requests=1,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost=None if cost is None else float(cost),
    )


@dataclass
class SlotRequests:
    """One slot run's request hooks: compaction and `ModelRequestSent` before each request (`before`),
    `ModelResponseReceived` + `RequestCompleted` + `ContextUpdated` + journal after it (`after`), and the
    row of a request cut off by the slot's end (`abandon`).

    A plain object the run's `SlotModel` calls, not a pydantic-ai capability: pydantic-ai copies the run
    context for every capability on every hook it dispatches, so a capability cost ~970 calls per batch
    row whether it had work to do or not (`agents.py`).
    """

    state: RunState
    slot: str
    stream: SlotStream
    model: Model
    _count: int = 0
    _written: int = 0
    _started: float = field(default=0.0)
    _in_flight: bool = False
    _reported: Usage = field(default_factory=Usage)
    """What this slot's rows have reported so far (a cut-off request's row gets the rest)."""
    _shown: int = 0
    """How many OpenAI-shape messages of this slot's requests the teaching events already carried."""
    _seen: int = 0
    """How many pydantic-ai messages the previous request held (the next one converts only the rest)."""
    _last_seen: ModelMessage | None = None
    _system: str | None = None
    """Instructions in force at the end of what was already converted."""
    _own: list[ModelMessage] = field(default_factory=list)
    """The slot's record as `_own_messages` found it so far."""
    _scanned: int = 0
    _scanned_last: ModelMessage | None = None
    _viewed: bool = False
    """Whether the request in flight sent the keeper's memoized view (no compaction rewrote it)."""
    offered: set[str] = field(default_factory=set)
    """The function tools this slot's requests offered (a slot whose rounds end without a call says so)."""
    tool_calls: int = 0
    """Calls of those tools in this slot's responses."""
    last_row: Usage | None = None
    """The usage row of the last response (`after`), for a response the slot then sets aside."""

    @property
    def count(self) -> int:
        """Requests this slot has finished (or abandoned) so far."""
        return self._count

    @property
    def in_flight(self) -> bool:
        """A request was sent and its response has not ended (`after`)."""
        return self._in_flight

    @property
    def offered_tools(self) -> bool:
        return bool(self.offered)

    def abandon(self, ended: Literal["stopped", "failed"]) -> None:
        """The slot ended with a request in flight: it still gets its row (it was sent, maybe billed)."""
        if not self._in_flight:
            return
        self._in_flight = False
        self._count += 1
        live = self.stream.usage  # pydantic-ai's running totals may already hold the cut request's tokens
        usage = Usage(requests=1)
        if live is not None:
            usage = _request_usage(
                live.input_tokens - self._reported.input_tokens,
                live.output_tokens - self._reported.output_tokens,
                None,
            )
        self._reported = self._reported + usage
        self.state.emit(
            RequestCompleted(
                run_id=self.state.run_id,
                slot=self.slot,
                request=self._count,
                usage=usage,
                latency_ms=round((time.monotonic() - self._started) * 1000, 1),
                model=self.model.model_name,
                ended=ended,
            )
        )

    async def before(
        self, ctx: RunContext[Any], messages: list[ModelMessage], parameters: ModelRequestParameters
    ) -> list[ModelMessage]:
        """Before a request step: journal the record so far, compact, announce; returns the messages to send."""
        spend_check(self.state.cost_limit, self.state.spent)
        self._journal(ctx)
        keeper = self.state.context
        if keeper is not None:
            compactions = keeper.compactions
            messages = await prepare_messages(self.state, keeper, self.slot, messages, self.model)
            self._viewed = keeper.compactions == compactions  # what was sent is the slot's memoized view
        self._teach_request(messages, parameters)
        lesson = self.state.lesson
        if lesson is not None:  # a step pause: before the model opens its stream, so no connection is held
            tools = tuple(t.name for t in parameters.function_tools)
            await lesson.before_request(self.slot, self._count + 1, self._shown, tools)
        self._started, self._in_flight = time.monotonic(), True
        return messages

    def _teach_request(self, messages: list[ModelMessage], parameters: ModelRequestParameters) -> None:
        seen = self._seen
        if seen and len(messages) >= seen and messages[seen - 1] is self._last_seen:
            # Only the messages added since the previous request are converted (no O(n²) per run).
            fresh = messages[seen:]
            new = to_openai(fresh, system=self._system, inline_media=False)
            offset = self._shown
        else:  # the first request, or compaction rewrote the history: send it whole again
            fresh = messages
            new, offset = to_openai(messages, inline_media=False), 0
        self._seen, self._last_seen = len(messages), messages[-1] if messages else None
        self._shown = offset + len(new)
        self._system = next((m["content"] for m in reversed(new) if m["role"] == "system"), self._system)
        tools = tuple(t.name for t in parameters.function_tools)
        self.offered.update(tools)
        self.state.emit(
            ModelRequestSent(
                run_id=self.state.run_id,
                slot=self.slot,
                round=self._count + 1,
                messages=tuple(_clipped(m) for m in new),
                offset=offset,
                tools=tools,
                pydantic_ai=_pydantic_json(fresh),
            )
        )

    def after(self, sent: list[ModelMessage], response: ModelResponse) -> None:
        """After a request step's response has streamed to its end (`sent`: what `before` returned)."""
        self._count += 1
        self._in_flight = False
        self.tool_calls += self._offered_calls(response)
        state, usage = self.state, response.usage
        row = _request_usage(usage.input_tokens, usage.output_tokens, usage.cost)
        state.spent += row.cost or 0.0
        if not (usage.input_tokens or usage.output_tokens) and response.parts:
            # The provider reported nothing (llama.cpp streams no usage): counted here, marked estimated.
            row = replace(row, input_tokens=chars_to_tokens(message_chars(sent)), output_tokens=chars_to_tokens(
                message_chars((response,))), estimated=True)
            state.usage.add(self.slot, Usage(input_tokens=row.input_tokens, output_tokens=row.output_tokens,
                                             estimated=True))
        self.last_row = row
        self._reported = self._reported + row
        state.emit(
            ModelResponseReceived(
                run_id=state.run_id,
                slot=self.slot,
                round=self._count,
                parts=tuple(_clipped(to_jsonable_python(part, fallback=repr)) for part in response.parts),
                usage=row,
                model_name=response.model_name or self.model.model_name,
            )
        )
        state.emit(
            RequestCompleted(
                run_id=state.run_id,
                slot=self.slot,
                request=self._count,
                usage=row,
                latency_ms=round((time.monotonic() - self._started) * 1000, 1),
                model=response.model_name or self.model.model_name,
            )
        )
        keeper = state.context
        if keeper is not None:
            used = response_tokens(response) or self._estimate_used(keeper, sent, response)
            keeper.last_used[self.slot] = used
            state.emit(
                ContextUpdated(
                    run_id=state.run_id,
                    slot=self.slot,
                    used_tokens=used,
                    window=keeper.window,
                    window_known=keeper.window_known,
                    fraction=round(used / keeper.window, 4),
                    request=self._count,
                )
            )
        if state.journal is not None:
            # The response joins `ctx.messages` once its stream has closed, at the next index.
            state.journal.messages(self.slot, self._written, [response])
            self._written += 1
        if state.lesson is not None:
            state.lesson.reveal(self.slot, self._count, response)
        # Past the output-token ceiling: `UsageLimitExceeded`, raised into the slot's stream (`slotmodel.py`).
        self.stream.meter.settle(usage.output_tokens)

    def _offered_calls(self, response: ModelResponse) -> int:
        """How many of `response`'s tool calls call a tool this slot offered (none without one: no walk)."""
        offered = self.offered
        if not offered:
            return 0
        return sum(1 for p in response.parts if isinstance(p, ToolCallPart) and p.tool_name in offered)

    def _estimate_used(self, keeper: ContextKeeper, sent: list[ModelMessage], response: ModelResponse) -> int:
        """The gauge when the provider reported no usage: the request's characters (memoized) plus the response's."""
        chars = keeper.sent_chars(self.slot) if self._viewed else message_chars(sent)
        return math.ceil((chars + message_chars((response,))) / 4)

    def _own_messages(self, ctx: RunContext[Any]) -> list[ModelMessage]:
        """The slot's record so far (resumed rounds, then its agent run's messages), looking only at the
        messages `ctx.messages` gained since the previous request (it only grows; else it is read whole)."""
        messages, scanned = ctx.messages, self._scanned
        if not scanned or len(messages) < scanned or messages[scanned - 1] is not self._scanned_last:
            self._own, scanned = list(self.stream.resumed), 0
        self._own.extend(m for m in itertools.islice(messages, scanned, None) if m.run_id == ctx.run_id)
        self._scanned, self._scanned_last = len(messages), messages[-1] if messages else None
        return self._own

    def _journal(self, ctx: RunContext[Any]) -> None:
        journal = self.state.journal
        if journal is None:
            return
        own = self._own_messages(ctx)
        # The last response was journaled before pydantic-ai stamped it (run ids); write it again stamped.
        start = max(self._written - 1, 0)
        new = own[start:]
        if new:
            journal.messages(self.slot, start, new)
            self._written = start + len(new)
