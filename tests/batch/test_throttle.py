"""The batch's one back-off: a 429 pauses every row, Retry-After is honoured, success resets the delay."""

from __future__ import annotations

import pytest

from agentcell.batch.throttle import GatedModel, Throttle, gated
from agentcell.providers.retry import RetryingModel

from .conftest import Shouter

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


async def test_a_pause_holds_every_request_until_it_ends() -> None:
    clock = Clock()
    throttle = Throttle(base_delay=1.0, clock=clock, sleep=clock.sleep)
    await throttle.ready()
    assert clock.slept == []  # no pause: nobody waits
    assert throttle.rate_limited(2.5) == 2.5  # Retry-After is honoured exactly
    assert throttle.paused_for == 2.5
    await throttle.ready()
    await throttle.ready()  # a second row arriving after the pause does not wait again
    assert clock.slept == [2.5]
    assert throttle.pauses == 1


async def test_without_retry_after_the_delay_grows_and_a_success_resets_it() -> None:
    clock = Clock()
    throttle = Throttle(base_delay=0.5, max_delay=3.0, clock=clock, sleep=clock.sleep)
    assert [throttle.rate_limited(None) for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    throttle.succeeded()
    assert throttle.rate_limited(None) == 0.5


def test_only_network_models_are_gated_inside_their_retries() -> None:
    local = Shouter().model
    assert gated(local, Throttle()) is local
    network = RetryingModel(Shouter().model, key_var="X_API_KEY")
    shared = gated(network, Throttle())
    assert isinstance(shared, RetryingModel) and isinstance(shared.wrapped, GatedModel)
    assert shared.key_var == "X_API_KEY" and shared.policy is network.policy
