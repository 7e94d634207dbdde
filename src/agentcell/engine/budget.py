"""Per-slot budgets: the caller's ceiling, lowered (never raised) by a slot's options.

Requests and tool calls map onto pydantic-ai's `UsageLimits`, which enforces them once per request
or call. The output-token ceiling does not: pydantic-ai checks a token limit after every streamed
event, over usage it rebuilds from the response so far, so a long answer cost O(n) per token (issue
18). `OutputMeter` enforces it here instead, at O(1) per delta, and raises the same
`UsageLimitExceeded` pydantic-ai would, so the slot still ends `budget_exhausted`. The tool-free
final request is keyed on the *effective* `max_iter` (struckdown keyed it on the raw value, so a
clamped slot never got its answering round).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.usage import UsageLimits

from ..formats.frozen import faster_init
from ..options import HINT_STYLE
from ..usage import MAX_OUTPUT_TOKENS, MAX_REQUESTS, MAX_TOOL_CALLS, Limits, format_cost


def ceiling_from(limits: UsageLimits | None) -> UsageLimits:
    """The per-slot ceiling: the caller's limits, with our defaults where a field is left `None`."""
    if limits is None:
        return UsageLimits(
            request_limit=MAX_REQUESTS,
            tool_calls_limit=MAX_TOOL_CALLS,
            output_tokens_limit=MAX_OUTPUT_TOKENS,
        )
    return replace(
        limits,
        request_limit=limits.request_limit if limits.request_limit is not None else MAX_REQUESTS,
        tool_calls_limit=limits.tool_calls_limit if limits.tool_calls_limit is not None else MAX_TOOL_CALLS,
        output_tokens_limit=(
            limits.output_tokens_limit if limits.output_tokens_limit is not None else MAX_OUTPUT_TOKENS
        ),
    )


def limits_event(ceiling: UsageLimits) -> Limits:
    """The ceiling as the `Limits` value events carry (made once per ceiling: a run reads it three times, and a
    prepared run's rows share their ceiling)."""
    last = _LIMITS[0] if _LIMITS else None
    if last is not None and last[0] is ceiling:
        return last[1]
    limits = Limits(
        requests=ceiling.request_limit or MAX_REQUESTS,
        tool_calls=ceiling.tool_calls_limit or MAX_TOOL_CALLS,
        output_tokens=ceiling.output_tokens_limit or MAX_OUTPUT_TOKENS,
    )
    _LIMITS[:] = [(ceiling, limits)]
    return limits


_LIMITS: list[tuple[UsageLimits, Limits]] = []
"""The last ceiling (held, so its id is not reused) and its `Limits`."""


def slot_limits(ceiling: UsageLimits, *, max_iter: int | None, max_calls: int | None) -> Limits:
    """A slot's effective ceiling as events carry it: its `max_iter`/`max_calls` clamped to the run's."""
    run = limits_event(ceiling)
    return Limits(
        requests=min(max_iter, run.requests) if max_iter else run.requests,
        tool_calls=min(max_calls, run.tool_calls) if max_calls else run.tool_calls,
        output_tokens=run.output_tokens,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotBudget:
    """What one slot may spend."""

    limits: UsageLimits
    """Handed to pydantic-ai, which raises `UsageLimitExceeded` past it (no output-token limit: see `output_tokens`)."""
    output_tokens: int | None = None
    """The output-token ceiling, enforced by the slot's `OutputMeter` rather than by pydantic-ai."""
    max_iter: int | None = None
    """Effective `max_iter`: request number `max_iter` goes out without the gathering tools."""
    max_calls: int | None = None
    """Effective `max_calls`: once this many calls were made, requests go out without tools."""
    warnings: tuple[str, ...] = ()


def slot_budget(ceiling: UsageLimits, *, slot: str, max_iter: int | None, max_calls: int | None) -> SlotBudget:
    """Clamp a slot's `max_iter`/`max_calls` to the ceiling, with a warning for each one asked too high."""
    warnings: list[str] = []
    iters = _clamp(slot, "max_iter", max_iter, ceiling.request_limit, "request_limit", warnings)
    calls = _clamp(slot, "max_calls", max_calls, ceiling.tool_calls_limit, "tool_calls_limit", warnings)
    limits = _uncapped(ceiling)  # the output-token limit is enforced by `OutputMeter`, not per event by pydantic-ai
    if iters is not None:
        limits = replace(limits, request_limit=iters)
    return SlotBudget(
        limits=limits,
        output_tokens=ceiling.output_tokens_limit,
        max_iter=iters,
        max_calls=calls,
        warnings=tuple(warnings),
    )


_UNCAPPED: list[tuple[UsageLimits, UsageLimits]] = []
"""The last ceiling (held, so its id is not reused) and its copy without an output-token limit."""


def _uncapped(ceiling: UsageLimits) -> UsageLimits:
    """`ceiling` without its output-token limit: one copy per ceiling (a prepared run's rows share theirs), not
    a `dataclasses.replace` per slot run. Neither is changed after it is made."""
    last = _UNCAPPED[0] if _UNCAPPED else None
    if last is not None and last[0] is ceiling:
        return last[1]
    uncapped = replace(ceiling, output_tokens_limit=None)
    _UNCAPPED[:] = [(ceiling, uncapped)]
    return uncapped


class OutputMeter:
    """A slot's output tokens against its ceiling, at O(1) per streamed delta.

    Two sources: for each finished response, what the provider reported (`settle`, once per response);
    for the response streaming now, a count of its deltas (`add`: one token per non-empty delta of
    text, thinking or tool arguments). A delta is at least one token, so the count is a lower bound
    and never ends a slot before the provider's own count would; it stops a runaway stream whose usage
    arrives only at its end. When a response ends, the count gives way to the provider's figure, or
    stays when the provider reported none.
    Past the ceiling it raises pydantic-ai's own `UsageLimitExceeded`, worded as pydantic-ai words it,
    so the slot ends `budget_exhausted` as before.
    """

    __slots__ = ("limit", "reported", "streaming")

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.reported = 0
        """Output tokens of the slot's finished responses."""
        self.streaming = 0
        """Estimated output tokens of the response streaming now."""

    @property
    def used(self) -> int:
        return self.reported + self.streaming

    def add(self, text: str) -> None:
        """A delta of the response in flight (text, thinking or tool arguments)."""
        if text:
            self.streaming += 1
            if self.limit is not None and self.reported + self.streaming > self.limit:
                self._exceeded()

    def settle(self, output_tokens: int) -> None:
        """A response ended; `output_tokens` is what its provider reported (0: nothing, keep the estimate)."""
        self.reported += output_tokens or self.streaming
        self.streaming = 0
        if self.limit is not None and self.reported > self.limit:
            self._exceeded()

    def _exceeded(self) -> None:
        raise UsageLimitExceeded(f"Exceeded the output_tokens_limit of {self.limit} (output_tokens={self.used})")


def _clamp(
    slot: str, option: str, asked: int | None, ceiling: int | None, field: str, warnings: list[str]
) -> int | None:
    if asked is None or ceiling is None or asked <= ceiling:
        return asked
    how = (f"--{option.replace('_', '-')} {asked} on the %%agent line" if HINT_STYLE.get() == "cell"
           else f"limits=UsageLimits({field}=...)")
    warnings.append(f"slot {slot!r} asked for {option}={asked} but the ceiling is {ceiling}; using {ceiling} "
                    f"(raise it with {how})")
    return ceiling


_CELL_HINTS = {
    "request_limit": "raise it with --max-iter N on the %%agent line, or set max_iter=N on the slot "
    "(e.g. [[{slot}|max_iter=3]]) so its last request is answered without tools",
    "tool_calls_limit": "raise it with --max-calls N on the %%agent line, or set max_calls=N on the slot",
    "output_tokens_limit": "raise it with --max-tokens N on the %%agent line, or max_tokens=N on the slot",
    "cost limit": "raise it with --max-cost USD on the %%agent line",
}


def exhausted_message(slot: str, exc: UsageLimitExceeded, *, max_iter_set: bool = False) -> str:
    """Name the limit that was hit and how to raise it, in the words of the front end that started the run.

    `max_iter_set`: the slot has its own `max_iter=`, which is what ran out; the advice is to raise that,
    never to set it."""
    text = str(exc).split(". ")[0].rstrip(".")  # pydantic-ai appends a docs link; keep the fact
    if max_iter_set and "request_limit" in text:
        return f"slot {slot!r} ran out of budget: {text}; raise max_iter= on the slot"
    if HINT_STYLE.get() == "cell":
        field = next((f for f in _CELL_HINTS if f in text), None)
        hint = _CELL_HINTS[field].format(slot=slot) if field else "raise the ceilings with --max-iter/--max-calls"
        return f"slot {slot!r} ran out of budget: {text}; {hint}"
    hint = "raise the ceiling with limits=UsageLimits(...)"
    if "cost limit" in text:
        hint = "raise it with cost_limit=USD"
    for field, option in (("request_limit", "max_iter"), ("tool_calls_limit", "max_calls")):
        if field in text:
            hint = (
                f"raise it with limits=UsageLimits({field}=...), or set {option} on the slot "
                f"so its last request is answered without tools"
                if field == "request_limit"
                else f"raise it with limits=UsageLimits({field}=...), or set {option} on the slot"
            )
            break
    return f"slot {slot!r} ran out of budget: {text}; {hint}"


def spend_check(limit: float | None, spent: float) -> None:
    """`cost_limit`: refuse the next request once the run's known cost (`spent`) reached `limit`. Raised as
    pydantic-ai's `UsageLimitExceeded`, so the slot ends `budget_exhausted` with what it has, like any other
    ceiling."""
    if limit is not None and spent >= limit:
        said = f"The run's cost limit of {format_cost(limit)} is reached ({format_cost(spent)} spent)"
        raise UsageLimitExceeded(said)


faster_init(SlotBudget)  # one per slot run (`formats/frozen.py`)
