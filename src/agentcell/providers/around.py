"""One owner for how a model wrapper steps in around pydantic-ai's two request methods.

A pydantic-ai `WrapperModel` that acts around each request has to override both `request` and
`request_stream`, with pydantic-ai's signatures, and forward each to the wrapped model, opening the
wrapped stream by hand where it must tell an error on opening from one in the run's own handling of the
stream. The batch's shared back-off gate (`batch/throttle.py`), the cassette recorder and the injected
faults each do the same few things around either kind of request, so `AroundModel` owns the forwarding
and they write only their hooks:

* `_before(streamed=...)`: before the request goes out (may wait, or raise instead of sending); what it
  returns is handed to `_opened`;
* `_refused(exc)`: the wrapped model refused it with an HTTP error (re-raised after the hook);
* `_opened(ticket, stream)`: the response arrived (`stream` is `None`), or the stream opened (its first
  chunk arrived) and is about to reach the run;
* `_answered(messages, response)`: the whole response, after a stream has run to its end.

`RetryingModel` retries the opening itself, and the slot model (`engine/slotmodel.py`) rewrites what
is sent: both keep their own methods.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

Ticket = TypeVar("Ticket")
"""What `_before` hands to `_opened` for the same request (a fault due, or nothing)."""


class AroundModel(WrapperModel, Generic[Ticket]):
    """Forward both kinds of request to the wrapped model, calling the subclass's hooks around each."""

    async def _before(self, *, streamed: bool) -> Ticket:
        raise NotImplementedError

    def _refused(self, exc: ModelHTTPError) -> None:
        """The wrapped model refused the request (the error is re-raised after this)."""

    def _opened(self, ticket: Ticket, stream: StreamedResponse | None) -> None:
        """The response arrived (`stream` is `None`) or the stream opened."""

    def _answered(self, messages: list[ModelMessage], response: ModelResponse) -> None:
        """The whole response (a stream's after it ran to its end)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        ticket = await self._before(streamed=False)
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        except ModelHTTPError as exc:
            self._refused(exc)
            raise
        self._opened(ticket, None)
        self._answered(messages, response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        ticket = await self._before(streamed=True)
        opened = self.wrapped.request_stream(messages, model_settings, model_request_parameters, run_context)
        try:
            stream = await opened.__aenter__()  # opening reads the first chunk: a refusal lands here
        except ModelHTTPError as exc:
            self._refused(exc)
            raise
        self._opened(ticket, stream)
        try:
            yield stream
        except BaseException as exc:
            if not await opened.__aexit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            await opened.__aexit__(None, None, None)
        self._answered(messages, stream.get())  # only a stream that ran to its end is answered
