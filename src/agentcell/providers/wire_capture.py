"""The teaching view's wire: the exact HTTP request a provider was sent and what it answered.

`capturing(model, ...)` wraps, once, the transport of the httpx client under a pydantic-ai model (any
SDK client that keeps one as `client._client`: OpenAI's is `httpx2`, Anthropic's `httpx`), and turns
capture on for the requests made inside it (a context variable, so concurrent runs and slots never mix). Each request
becomes one `HttpExchange` event when its response is closed: the body as sent (parsed JSON), the
status, and for a stream each SSE `data:` event as received.

Credentials never leave this module: `Authorization`, `api-key` and similar headers become
`[redacted]`, and the body, URL and events go through `mask_secrets` with the request's own key added
(so a server echoing it is masked too). Long strings are clipped and long streams keep their first and
last events, so a long answer does not cost its size again on the comm.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any

from ..events.teaching import HttpExchange
from .secrets import env_secrets, mask_secrets, safe_url

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie", "set-cookie",
})
"""Headers whose value is never shown (lower case)."""
MAX_STRING = 4_000
"""A string in a body or event longer than this is clipped (the answer itself already streamed)."""
HEAD_EVENTS, TAIL_EVENTS = 24, 8
"""A stream keeps its first and last events; the ones between are counted, not kept."""
MAX_CAPTURE = 2_000_000
"""Bytes of a response kept for parsing; beyond that the rest streams through uncaptured."""

Emit = Callable[[HttpExchange], None]
Sink = tuple[Callable[[dict[str, Any]], None], list[str]]
"""Where a captured exchange goes, and the environment's secrets read when the capture began (`env_secrets`)."""
_sink: ContextVar[Sink | None] = ContextVar("agentcell_wire_sink", default=None)


def _may_hold_long(text: str) -> bool:
    """Whether JSON `text` may hold a string longer than `MAX_STRING` (so `_clip` has work to do), found
    in C: with each escaped backslash and escaped quote made one plain character, every string's
    characters lie between two quotes, and a string's JSON is at least as long as its text. A request
    body holds the whole conversation: walking it in Python on every request cost O(conversation) calls
    a round.
    """
    if len(text) <= MAX_STRING:
        return False
    bare = text.replace("\\\\", "_").replace('\\"', "_")
    return max(map(len, bare.split('"'))) > MAX_STRING


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_STRING:
        return f"{value[:MAX_STRING]}… [{len(value) - MAX_STRING} more characters]"
    if isinstance(value, list):
        return [_clip(v) for v in value]
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in value.items()}
    return value


def _headers(headers: Any) -> dict[str, str]:
    return {k: REDACTED if k.lower() in SECRET_HEADERS else v for k, v in headers.items()}


def _secrets_of(headers: Any) -> list[str]:
    """The credential values this request carries (so they are masked wherever they appear)."""
    out = []
    for name in SECRET_HEADERS:
        value = headers.get(name)
        if value:
            out += [value, value.partition(" ")[2]]
    return [v for v in out if v]


def _parsed(raw: bytes, secrets: list[str], env: list[str]) -> Any:
    text = mask_secrets(raw.decode("utf-8", errors="replace"), secrets, env=env)
    try:
        value = json.loads(text)
    except ValueError:
        return _clip(text)
    return _clip(value) if _may_hold_long(text) else value


def _events(raw: bytes, secrets: list[str], env: list[str]) -> dict[str, Any]:
    """An SSE body as its `data:` events (parsed), the middle of a long stream counted, not kept."""
    text = mask_secrets(raw.decode("utf-8", errors="replace"), secrets, env=env)
    events: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if not data:
            continue
        try:
            events.append(json.loads(data))
        except ValueError:
            events.append(data)
    clip = _clip if _may_hold_long(text) else _same
    if len(events) <= HEAD_EVENTS + TAIL_EVENTS:
        return {"events": clip(events)}
    omitted = len(events) - HEAD_EVENTS - TAIL_EVENTS
    kept = [*events[:HEAD_EVENTS], f"… {omitted} more events …", *events[-TAIL_EVENTS:]]
    return {"events": clip(kept), "events_total": len(events)}


def _same(value: Any) -> Any:
    return value


@functools.cache
def _classes(mod: ModuleType) -> tuple[type[Any], type[Any]]:
    """The tee stream and capturing transport for one httpx flavour (`httpx`, or the OpenAI SDK's `httpx2`)."""

    class Tee(mod.AsyncByteStream):  # type: ignore[name-defined,misc]
        """The response body passed through unchanged, a copy kept; the exchange is reported on close."""

        def __init__(self, inner: Any, done: Callable[[bytes, bool], None]) -> None:
            self._inner, self._done = inner, done
            self._kept = bytearray()
            self._complete = False
            self._reported = False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                if len(self._kept) < MAX_CAPTURE:
                    self._kept += chunk
                yield chunk
            self._complete = True

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                if not self._reported:
                    self._reported = True
                    self._done(bytes(self._kept), self._complete)

    class Transport(mod.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        """Passes every request through; while a sink is set (`capturing`), reports it as an exchange."""

        captures = True

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            capture = _sink.get()
            if capture is None:
                return await self.inner.handle_async_request(request)
            return await _captured(self.inner, request, capture, tee=Tee, response_type=mod.Response)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Tee, Transport


async def _captured(inner: Any, request: Any, capture: Sink, *, tee: type[Any], response_type: type[Any]) -> Any:
    started = time.monotonic()
    sink, env = capture
    secrets = _secrets_of(request.headers)
    sent = {
        "method": request.method,
        "url": safe_url(str(request.url)),
        "headers": _headers(request.headers),
        "body": _parsed(request.content, secrets, env) if request.content else None,
    }
    response = await inner.handle_async_request(request)
    stream = "text/event-stream" in response.headers.get("content-type", "")

    def done(raw: bytes, complete: bool) -> None:
        got: dict[str, Any] = {"status": response.status_code, "headers": _headers(response.headers)}
        got.update(_events(raw, secrets, env) if stream else {"body": _parsed(raw, secrets, env) if raw else None})
        if not complete:
            got["cut_off"] = True
        sink({"request": sent, "response": got, "elapsed_ms": round((time.monotonic() - started) * 1000, 1)})

    return response_type(
        status_code=response.status_code,
        headers=response.headers,
        stream=tee(response.stream, done),
        extensions=response.extensions,
        request=request,
    )


def _http_client(model: Any) -> Any:
    """The httpx (or httpx2) client under a pydantic-ai model (through wrappers), if it has one."""
    for _ in range(8):
        client = getattr(getattr(model, "client", None), "_client", None)
        if client is not None and hasattr(client, "_transport") and hasattr(client, "send"):
            return client
        model = getattr(model, "wrapped", None)
        if model is None:
            return None
    return None


def install(model: Any) -> bool:
    """Wrap the transport of `model`'s httpx client (once). False when the model has no HTTP client."""
    client = _http_client(model)
    if client is None:
        return False
    transport = client._transport
    if not getattr(transport, "captures", False):
        mod = sys.modules[type(client).__module__.partition(".")[0]]
        client._transport = _classes(mod)[1](transport)
    return True


@contextmanager
def capturing(model: Any, *, emit: Emit, run_id: str, slot: str | None) -> Iterator[None]:
    """Report each HTTP exchange `model` makes inside the block as an `HttpExchange` of `slot`."""
    if not install(model):
        yield
        return

    def sink(exchange: dict[str, Any]) -> None:
        emit(HttpExchange(run_id=run_id, slot=slot, **exchange))

    token = _sink.set((sink, env_secrets()))  # the environment read once per run, not per request
    try:
        yield
    finally:
        _sink.reset(token)
