"""The run's model as its slot's agent sees it: the request hooks around every model request, no capability.

A slot's agent is shared by every run of its shape (`agents.py`); each run passes its own `SlotModel`
(`agent.run(model=...)`), a pydantic-ai `WrapperModel` around the run's model whose requests call the
run's `SlotRequests` (`requests.py`): `before` (journal, compaction, `ModelRequestSent`) with the
history pydantic-ai is about to send, then the wrapped model's stream, then `after` (the response's
events, the journal row, the output-token check) once that stream has ended. pydantic-ai's own
`before_model_request`/`after_model_request` capability hooks did this before, at a cost of one
run-context copy per capability per hook pydantic-ai dispatches, hook or no hook (~970 calls a batch row).

Where each part runs, against the capability hooks it replaces (pydantic-ai 2.68, `_agent_graph.py`):

* `before` gets the history as `prepare_messages` receives it (pydantic-ai calls that on the serving
  model right before the request: the history after `_clean_message_history`, which keeps the message
  objects of a well-formed history), so compaction and the teaching events see pydantic-ai's messages,
  not the provider-prepared copies. When `before` changed nothing, the request goes out as pydantic-ai
  prepared it; when it compacted or cut tool results, its list is prepared by the wrapped model as
  pydantic-ai prepared a hook's list (a compacted list of a clean history is itself clean: a prefix
  swapped for one summary request). The request context's messages were request-only for a
  `before_model_request` hook too (`_history_mirroring.py` detaches them after the before-chain), so
  the run's record stays whole either way.
* It runs when the stream is opened: lazily, in the task that pulls the stream, i.e. inside the
  slot's event-stream handler, which contains process exits (`streaming.py`); the hook ran in
  pydantic-ai's request task just before. Its events still come before the response's first event.
* `after` runs once the wrapped stream has ended and closed, inside the handler's last pull: before
  pydantic-ai commits the response to the history and before any tool call of that response runs, as
  the hook did. What it raises (`UsageLimitExceeded` from the output-token check) reaches pydantic-ai
  through the stream, so pydantic-ai records the response as interrupted, as it does for a run its own
  token limit stops; with the hook the response was dropped. The slot ends `budget_exhausted` either way.
* Stop (or a failure) mid-stream throws into the `yield`: `after` does not run and the slot's end
  reports the request through `SlotRequests.abandon`, as before.
* Per request *step*, as the hooks were, not per call: a step whose provider suspends its response
  (Anthropic `pause_turn`, OpenAI background mode) has pydantic-ai call `request_stream` again per
  continuation segment with the history plus the suspended response. Such a call sends the step's
  prepared messages plus that response and runs no hook; `after` runs once, on the last segment, with
  the segments merged as pydantic-ai merges them. A retry inside a step (a capability's
  `RetryModelRequest`) cannot happen: the agent has no such capability.
"""

from __future__ import annotations

import operator
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import CompletedStreamedResponse, Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

# Two private pydantic-ai helpers (2.60–2.68 checked). A release that moves them must not break every run:
# without the first, a request's event carries the cost the provider reported (pydantic-ai still fills the
# run's record); without the second, only a provider's suspended response (continuation segments) fails.
try:
    from pydantic_ai._genai_prices import fill_response_cost
except ImportError:

    def fill_response_cost(response: ModelResponse) -> None:
        """Stands in for pydantic-ai's cost filling where that is not found."""


try:
    from pydantic_ai.models._continuation import merge_responses
except ImportError:

    def merge_responses(existing: ModelResponse, new: ModelResponse) -> ModelResponse:
        """Stands in for pydantic-ai's merge of continuation segments where that is not found."""
        raise UnexpectedModelBehavior(
            "the provider suspended its response, and this pydantic-ai version has no way agentcell knows of to "
            "join its segments; use pydantic-ai 2.60 to 2.68"
        )


from ..errors import EmptyResponse
from .answer_checks import Expect, check, opened_empty
from .output_modes import repair, server_key, talks_to_server

if TYPE_CHECKING:
    from .requests import SlotRequests


def _server_said(exc: EmptyResponse) -> str | None:
    """The server's own words in an empty answer's error, if any (pydantic-ai's own wording is not the server's)."""
    cause = exc.__cause__
    body = getattr(cause, "body", None)
    return str(body)[:300] if isinstance(body, str | dict) and body else None


def _with_text(messages: list[ModelMessage]) -> list[ModelMessage]:
    """`messages` with an empty text part in each response that has tool calls and no text (copies; the run's
    record is not touched). pydantic-ai sends such a response as `content: null`, which OpenAI accepts and
    llama.cpp's server refuses (HTTP 500, "Input should be a valid string"): with it, `content` is `""`."""
    out: list[ModelMessage] | None = None
    for i, message in enumerate(messages):
        if isinstance(message, ModelResponse) and not any(isinstance(p, TextPart) for p in message.parts) and any(
            isinstance(p, ToolCallPart) for p in message.parts
        ):
            out = out if out is not None else list(messages)
            out[i] = replace(message, parts=[TextPart(""), *message.parts])
    return messages if out is None else out


def _repair(response: ModelResponse, params: ModelRequestParameters) -> None:
    """A prompted answer's text replaced, in place, by the JSON a safe repair reads from it (`output_modes.repair`)."""
    texts = [p for p in response.parts if isinstance(p, TextPart) and p.content]
    if len(texts) != 1:
        return
    schema = params.output_object.json_schema if params.output_object is not None else None
    fixed = repair(texts[0].content, schema)
    if fixed is not None:
        texts[0].content = fixed


class SlotModel(WrapperModel):
    """One slot run's model: `wrapped` with the run's request hooks (see the module docstring)."""

    def __init__(self, wrapped: Model, requests: SlotRequests, *, auto_tool: bool = False) -> None:
        # Not `WrapperModel.__init__`: it infers a model from a name and preloads pricing data, which a
        # model object built once per run needs neither of.
        self.wrapped = wrapped
        self._settings = None
        self._profile = None
        self.requests = requests
        self.auto_tool = auto_tool
        """The slot asks in `tool` mode because of `auto` (a missed output-tool call makes it ask `prompted`)."""
        self.network = talks_to_server(wrapped)
        self._history: list[ModelMessage] | None = None
        """What pydantic-ai handed `prepare_messages` for the request about to be sent."""
        self._kept: list[ModelMessage] = []
        """What `before` made of the step's history (the gauge's estimate counts it)."""
        self._sent: list[ModelMessage] = []
        """That as the model was sent it (prepared), which a continuation segment sends again."""
        self._suspended: ModelResponse | None = None
        """The step's response so far while its provider suspends it (continuation segments)."""
        self._key: str | None = None

    def prepare_messages(
        self, messages: list[ModelMessage], model_request_parameters: ModelRequestParameters | None = None
    ) -> list[ModelMessage]:
        self._history = messages
        return self.wrapped.prepare_messages(messages, model_request_parameters)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Not reached by the engine (its runs always stream, for their event handler); refused rather than
        run without the slot's hooks."""
        raise NotImplementedError("agentcell: a slot's model streams; its requests run through request_stream")

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        params = model_request_parameters
        if self._continues(messages):
            sent = [*self._sent, messages[-1]]
        else:
            sent = await self._before(messages, params, run_context)
        if self.network:
            sent = _with_text(sent)
        gate = self.requests.state.server.serial.get(self._server_key()) if self.network else None
        async with gate or nullcontext(), self._open(sent, model_settings, params, run_context) as stream:
            try:
                yield stream
            finally:  # a stopped or broken response is kept in the history too
                secrets = self.requests.state.secrets
                if secrets:  # a model repeating the run's key: masked before anything keeps the response
                    secrets.mask_parts(stream.get().parts)
        response = stream.get()
        if response.state == "suspended":  # the provider goes on with it in the next segment
            self._suspended = response if self._suspended is None else merge_responses(self._suspended, response)
            return
        if self._suspended is not None:
            response, self._suspended = merge_responses(self._suspended, response), None
        fill_response_cost(response)  # as pydantic-ai does before its after-hooks
        if params.output_mode == "prompted":
            _repair(response, params)
        self.requests.after(self._kept, response)
        problem = check(response, params, self._expect(params))
        if problem is not None:  # the slot handles it (`answer_checks.py`), not pydantic-ai's retry prompt
            raise problem

    @asynccontextmanager
    async def _open(
        self,
        sent: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
        run_context: RunContext[Any] | None,
    ) -> AsyncGenerator[StreamedResponse]:
        """The wrapped model's stream; unstreamed (its whole answer replayed as one event per part) for a
        request with tools to a server that sends tool calls only so."""
        if params.function_tools and not self._expect(params).streamed:
            try:
                response = await self.wrapped.request(sent, settings, params)
            except EmptyResponse as exc:
                raise opened_empty(params, self._expect(params), _server_said(exc)) from exc
            yield CompletedStreamedResponse(response, model_request_parameters=params, replay_events=True)
            return
        try:
            async with self.wrapped.request_stream(sent, settings, params, run_context) as stream:
                yield stream
        except EmptyResponse as exc:  # not even a first chunk (raised on opening): the slot decides (answer_checks.py)
            raise opened_empty(params, self._expect(params), _server_said(exc)) from exc

    def _server_key(self) -> str:
        """`server_key(self.wrapped)`, made at its first use (the wrapped model is this object's for its life)."""
        if self._key is None:
            self._key = server_key(self.wrapped)
        return self._key

    def _expect(self, params: ModelRequestParameters) -> Expect:
        facts = self.requests.state.server
        key = self._server_key()
        return Expect(auto_tool=self.auto_tool and params.output_mode == "tool",
                      streamed=key not in facts.unstreamed_tools, network=self.network)

    async def _before(
        self, messages: list[ModelMessage], parameters: ModelRequestParameters, run_context: RunContext[Any] | None
    ) -> list[ModelMessage]:
        """The step's hook; returns what `before` made of the history as the model is sent it."""
        history, self._history, self._suspended = self._history, None, None
        if history is None:  # pydantic-ai prepared nothing for this request (a resumed suspended one)
            history = messages
        if run_context is None:
            raise RuntimeError("agentcell: a slot's model was asked to stream without its run context")
        kept = await self.requests.before(run_context, history, parameters)
        same = kept is history or (len(kept) == len(history) and all(map(operator.is_, kept, history)))
        sent = messages if same else self.wrapped.prepare_messages(kept, parameters)
        self._kept, self._sent = kept, sent
        return sent

    def _continues(self, messages: list[ModelMessage]) -> bool:
        """Whether `messages` asks for the next segment of a suspended response: the step's history plus it."""
        if self._suspended is None or not messages:
            return False
        last = messages[-1]
        return isinstance(last, ModelResponse) and last.state == "suspended"
