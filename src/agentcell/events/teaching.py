"""The events of the teaching view: what each model request sent and got back, and the HTTP exchange.

They are part of the `agentcell.events.Event` union and importable from `agentcell.events` like every
event; they live in their own module to keep `run.py` within the module size limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequestSent:
    """What one request sends, for the teaching view: the messages (OpenAI shape) and the tools offered.

    `messages` holds the request's messages from index `offset` on; the ones before were sent by
    earlier requests of the slot, so a long run does not re-send its whole history every round.
    """

    run_id: str
    slot: str
    round: int
    messages: tuple[dict[str, Any], ...] = ()
    offset: int = 0
    tools: tuple[str, ...] = ()
    """Names of the tools this request offers (empty for a tool-free request)."""
    pydantic_ai: tuple[dict[str, Any], ...] = ()
    """The same new messages as pydantic-ai's own JSON (`ModelMessagesTypeAdapter`), for the wire view."""
    kind: Literal["model_request"] = "model_request"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponseReceived:
    """What one request got back, for the teaching view: the response parts as JSON."""

    run_id: str
    slot: str
    round: int
    parts: tuple[dict[str, Any], ...] = ()
    usage: Usage = field(default_factory=Usage)
    model_name: str = ""
    kind: Literal["model_response"] = "model_response"


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpExchange:
    """One HTTP request to a model provider and its response, captured at the HTTP layer (teaching view).

    Credentials never travel: auth and key headers are replaced by `[redacted]` and key-shaped text in
    the body and URL is masked before the event is made (`providers/wire_capture.py`). Long contents
    and long event streams are clipped (the answer itself already streamed), so the widget's bytes
    stay linear in the text.
    """

    run_id: str
    slot: str | None
    request: dict[str, Any] = field(default_factory=dict)
    """`{method, url, headers, body}`: `body` is the parsed JSON as sent (or its text)."""
    response: dict[str, Any] = field(default_factory=dict)
    """`{status, headers, events}` for a stream (each SSE `data:` parsed), `{status, headers, body}` otherwise."""
    elapsed_ms: float = 0.0
    kind: Literal["http_exchange"] = "http_exchange"
