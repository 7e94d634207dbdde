"""One back-off for a whole batch: a 429 on any row pauses every row's next request.

A batch of 64 rows that each retried a rate limit on its own would keep hitting the limit 64 times
over. Instead the batch's model is `RetryingModel(GatedModel(model))`: every request first waits for
the batch's `Throttle`; a 429 pauses the throttle for the provider's `Retry-After` (or a growing
delay when it sends none) and is re-raised, so the row's `RetryingModel` still shows its visible
retry, and when the pause is over every row goes on. The first request that succeeds after a pause
resets the growing delay: the batch recovers by itself.

A `Retry-After` longer than the rows' retry policy waits (`RetryPolicy.max_retry_after`: a provider
asking for 99999999 s, or naming a date in 2099) pauses the batch for that cap only, as a single run
gives up rather than wait it out: the row that met it fails with the provider's message, the others go
on after the capped pause, and `note` says so (the widget shows it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models import Model, StreamedResponse

from ..providers.around import AroundModel
from ..providers.retry import RetryingModel, RetryPolicy, retry_after


class Throttle:
    """When the batch may send its next request: now, or after the current shared pause."""

    def __init__(
        self,
        *,
        base_delay: float = 1.0,
        max_delay: float = 60.0,
        max_pause: float = RetryPolicy().max_retry_after,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.base_delay = base_delay
        """The first pause after a 429 that names no `Retry-After`; it doubles while 429s keep coming."""
        self.max_delay = max_delay
        self.max_pause = max_pause
        """The longest pause a `Retry-After` may ask for (`gated` sets the rows' retry policy's cap)."""
        self.note: str | None = None
        """Set when the latest `Retry-After` asked for more than `max_pause` (shown by the widget)."""
        self.paused_until = 0.0
        """`clock()` time before which no request is sent."""
        self.pauses = 0
        """How many 429s paused the batch (shown by the widget, read by tests)."""
        self._streak = 0
        self._clock = clock
        self._sleep = sleep

    @property
    def paused_for(self) -> float:
        """Seconds left in the current pause (0 when requests may go)."""
        return max(0.0, self.paused_until - self._clock())

    def rate_limited(self, retry_after_s: float | None) -> float:
        """A 429: pause every row for `retry_after_s`, or a growing delay; returns the pause."""
        self._streak += 1
        delay = retry_after_s if retry_after_s is not None else min(
            self.base_delay * 2.0 ** (self._streak - 1), self.max_delay)
        if retry_after_s is not None:
            self.note = None
            if not delay <= self.max_pause:  # a NaN is capped too
                self.note = (f"the provider asked to wait {span(retry_after_s)} (Retry-After); the batch paused "
                             f"{span(self.max_pause)}, the most a retry waits")
                delay = self.max_pause
        self.paused_until = max(self.paused_until, self._clock() + delay)
        self.pauses += 1
        return delay

    def succeeded(self) -> None:
        """A request went through: the next 429 starts from the base delay again."""
        self._streak = 0

    async def ready(self) -> None:
        """Wait out the current pause (a Stop cancels the wait)."""
        while (wait := self.paused_until - self._clock()) > 0:
            await self._sleep(wait)


def span(seconds: float) -> str:
    """A wait in words: "90 s", "25 min", "3 h", "1,157 days", "73 years"."""
    if not seconds < 120:
        minutes = seconds / 60
        if not minutes < 120:
            hours = minutes / 60
            if not hours < 48:
                days = hours / 24
                return f"{days / 365.25:,.0f} years" if not days < 3650 else f"{days:,.0f} days"
            return f"{hours:.0f} h"
        return f"{minutes:.0f} min"
    return f"{seconds:.3g} s"


class GatedModel(AroundModel[None]):
    """Wait for the batch's throttle before each request; report each 429 to it, then re-raise."""

    def __init__(self, wrapped: Model, throttle: Throttle) -> None:
        super().__init__(wrapped)
        self.throttle = throttle

    async def _before(self, *, streamed: bool) -> None:
        await self.throttle.ready()

    def _refused(self, exc: ModelHTTPError) -> None:
        if exc.status_code == 429:
            self.throttle.rate_limited(retry_after(exc))

    def _opened(self, ticket: None, stream: StreamedResponse | None) -> None:
        self.throttle.succeeded()


def gated(model: Model, throttle: Throttle) -> Model:
    """The batch's model: a network model's requests go through `throttle`; local models are left alone.

    Only a `RetryingModel` (what `resolve_model` wraps every network model in) can meet a 429; the
    gate goes inside it, so its visible retries wait for the shared pause too.
    """
    if not isinstance(model, RetryingModel):
        return model
    throttle.max_pause = model.policy.max_retry_after  # a shared pause is capped as each row's retries are
    return RetryingModel(GatedModel(model.wrapped, throttle), policy=model.policy, key_var=model.key_var)
