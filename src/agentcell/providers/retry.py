"""Visible retries of transient provider failures, as a pydantic-ai `WrapperModel`.

`RetryingModel` retries a request that failed with a rate limit (429, honouring `Retry-After`), a server
error (5xx), a timeout or a dropped connection, with exponential backoff and jitter, a bounded number of
times. Each retry is reported through the slot's `request_scope` (the engine turns it into a `Retrying`
event: "retrying in 2.0 s after 429") before the wait. The provider SDK's own silent retries are turned
off per request (`ModelSettings['max_retries'] = 0`), so every retry is ours and shown.

Permanent failures (401/403, 400, 404, exhausted quota) are not retried: they become a `ProviderError`
at once, with the provider's own message (credentials masked) and, for a rejected key, the variable
to check. A stream that breaks **after** it started delivering is not retried either (pydantic-ai has
already shown its parts); it fails with a `ProviderError` and the engine keeps the transcript and the
partial text. A Stop during a backoff wait cancels the wait at once.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai import exceptions as pydantic_ai_exceptions
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from ..errors import EmptyResponse, ProviderError
from .hooks import RetryNotice, current_scope
from .known_secrets import model_secrets
from .secrets import mask_secrets as mask_secrets

_EMPTY: Any = getattr(pydantic_ai_exceptions, "ModelEmptyResponseError", ())
"""pydantic-ai's error for an HTTP 200 with no text and no tool call (newer releases; on older ones such an
answer arrives as an empty response, which the slot's own check names the same way)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How transient failures are retried.

    The n-th retry waits `base_delay * 2**(n-1)` seconds (at most `max_delay`), scaled by a random factor
    in `1 ± jitter`; a `Retry-After` from the provider is waited exactly instead (a request asking for
    more than `max_retry_after` seconds is not retried).
    """

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25
    max_retry_after: float = 120.0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random | None = None) -> float | None:
        """Seconds to wait before retry number `retry` (1-based), or `None` to give up."""
        if retry > self.max_retries:
            return None
        if retry_after is not None:
            return max(retry_after, 0.0) if retry_after <= self.max_retry_after else None
        base: float = min(self.base_delay * 2.0 ** (retry - 1), self.max_delay)
        spread: float = (rng or random.Random()).uniform(-self.jitter, self.jitter)
        return max(base * (1 + spread), 0.0)


def transient_reason(exc: BaseException) -> str | None:
    """A short reason (`"429"`, `"503"`, `"timeout"`, `"dropped connection"`) when `exc` is worth retrying."""
    if isinstance(exc, ModelRequestRejectedError | ModelQuotaExceededError | ModelRequestTimeout):
        return None
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    if isinstance(exc, ModelRateLimitError):
        return str(status or 429)
    if isinstance(exc, ModelUnavailableError | ModelServerError):
        return str(status) if status else "server error"
    if isinstance(exc, ModelTimeoutError):
        return "timeout"
    if isinstance(exc, ModelConnectionError):
        return "dropped connection" if exc.phase == "read" or exc.phase is None else "connection error"
    if status is not None and (status == 429 or status >= 500):
        return str(status)
    return None


class RetryingModel(WrapperModel):
    """Wrap any pydantic-ai model so transient failures are retried visibly and permanent ones explained."""

    def __init__(
        self,
        wrapped: Model,
        *,
        policy: RetryPolicy | None = None,
        key_var: str | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        super().__init__(wrapped)
        self.policy = policy or RetryPolicy()
        self.key_var = key_var
        """The environment variable that holds this provider's key, named when the key is rejected."""
        self._wait = sleep
        self._rng = random.Random()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        retry = 0
        while True:
            try:
                settings = self._no_sdk_retries(model_settings)
                return await self.wrapped.request(messages, settings, model_request_parameters)
            except ModelAPIError as exc:
                retry += 1
                await self._wait_or_raise(exc, retry)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        settings = self._no_sdk_retries(model_settings)
        async with AsyncExitStack() as stack:
            retry = 0
            while True:
                try:
                    # Opening the stream reads its first chunk, so errors before any output land here.
                    stream = await stack.enter_async_context(
                        self.wrapped.request_stream(messages, settings, model_request_parameters, run_context)
                    )
                    break
                except ModelAPIError as exc:
                    retry += 1
                    await self._wait_or_raise(exc, retry)
            try:
                yield stream
            except ModelAPIError as exc:
                # The stream broke after its parts started reaching the run: fail, keeping what was shown.
                raise self._failure(exc, after_output=True) from exc

    def _no_sdk_retries(self, settings: ModelSettings | None) -> ModelSettings:
        out = ModelSettings(**(settings or {}))
        unsupported = getattr(self.wrapped, "_unsupported_settings", None)
        ignored = unsupported() if callable(unsupported) else frozenset()
        if "max_retries" not in ignored:  # a model that ignores it would warn about it
            out["max_retries"] = 0
        return out

    async def _wait_or_raise(self, exc: ModelAPIError, retry: int) -> None:
        if isinstance(exc, _EMPTY):  # not retried here: the slot knows what an empty answer means
            said = mask_secrets(provider_message(exc), self._secrets())
            name = self.wrapped.model_name
            raise EmptyResponse(f"{name}: the server answered with no text and no tool call ({said})") from exc
        reason = transient_reason(exc)
        if reason is not None and getattr(exc, "injected", False):  # `faults.py`: on purpose, and labelled so
            reason = f"{reason} (injected)"
        delay = None if reason is None else self.policy.delay(retry, retry_after(exc), self._rng)
        if reason is None or delay is None:
            failure = self._failure(exc, attempts=retry)
            if failure.status in (401, 403):
                raise failure from None  # the SDK's error may quote the rejected key
            raise failure from exc
        scope = current_scope()
        if scope.on_retry is not None:
            scope.on_retry(RetryNotice(attempt=retry, delay_s=round(delay, 3), reason=reason))
        await self._wait(delay)  # a Stop cancels this wait at once

    def _failure(self, exc: ModelAPIError, *, attempts: int = 1, after_output: bool = False) -> ProviderError:
        status = exc.status_code if isinstance(exc, ModelHTTPError) else None
        said = mask_secrets(provider_message(exc), self._secrets())
        name = self.wrapped.model_name
        if after_output:
            message = f"{name}: the response broke off mid-stream ({said}); the partial output is kept"
        elif isinstance(exc, ModelAuthenticationError) or status in (401, 403):
            var = self.key_var or "the provider's API key variable"
            message = f"{name} refused the credentials (HTTP {status or 401}): {said} — check {var}"
        elif transient_reason(exc) is not None:
            tries = "attempt" if attempts == 1 else "attempts"
            label = f"HTTP {status}" if status else transient_reason(exc)
            message = f"{name} still failing after {attempts} {tries} ({label}): {said}"
        else:
            label = f"HTTP {status}" if status else type(exc).__name__
            message = f"{name} refused the request ({label}): {said}"
        return ProviderError(message, status=status, retryable=transient_reason(exc) is not None)

    def _secrets(self) -> list[str]:
        return model_secrets(self.wrapped)  # its key, its URL's password, its client's credential headers


def retry_after(exc: ModelAPIError) -> float | None:
    """The wait the provider asked for: pydantic-ai's reading, or a fractional `Retry-After` it does not parse."""
    if exc.retry_after is not None:
        return exc.retry_after
    raw = (exc.headers or {}).get("retry-after") if isinstance(exc, ModelHTTPError) else None
    try:
        seconds = float(raw) if raw is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < float("inf") else None


def provider_message(exc: ModelAPIError) -> str:
    """The provider's own explanation: the `message` of its error body when it sent one."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    if isinstance(exc, ModelHTTPError):
        return f"{body}" if body else f"HTTP {exc.status_code}"
    cause = exc.__cause__
    return str(cause) if cause is not None and str(cause) else exc.message
