"""The teaching view's wire: the exact HTTP request a provider was sent and what it answered.

`capturing(model, ...)` wraps, once, the transports of the httpx client under a pydantic-ai model (any
SDK client that keeps one as `client._client`: OpenAI's is `httpx2`, Anthropic's `httpx`; the user's own
`AsyncOpenAI`/`AsyncAzureOpenAI` and their client's mounts included), and turns capture on for the
requests made inside it (a context variable, so concurrent runs and slots never mix). Each request
becomes one `HttpExchange` event when its response is closed: the body as sent (parsed JSON), the
status, and for a stream each SSE `data:` event as received.

Capture never fails a run: a client it cannot attach to, or a request it cannot record, passes through
untouched and the run's warning (shown in the teaching view) says the wire was not captured.

Credentials never leave this module: every header whose name looks like a credential
becomes `[redacted]`, the other header values, the body, URL and events go through `mask_secrets` with
the request's own credentials added (so a server echoing one is masked too). Long strings are clipped
and long streams keep their first and last events, so a long answer does not cost its size again on
the comm.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any, NamedTuple

from ..events.teaching import HttpExchange
from .known_secrets import MIN_LENGTH, secret_header
from .secrets import env_secrets, mask_secrets, safe_url

REDACTED = "[redacted]"
MAX_STRING = 4_000
"""A string in a body or event longer than this is clipped (the answer itself already streamed)."""
HEAD_EVENTS, TAIL_EVENTS = 24, 8
"""A stream keeps its first and last events; the ones between are counted, not kept."""
MAX_CAPTURE = 2_000_000
"""Bytes of a response kept for parsing; beyond that the rest streams through uncaptured."""

Emit = Callable[[HttpExchange], None]
Warn = Callable[[str], None]


class Sink(NamedTuple):
    """Where a captured exchange goes, the environment's secrets read when the capture began
    (`env_secrets`), and whom to tell that an exchange could not be recorded."""

    sink: Callable[[dict[str, Any]], None]
    env: list[str]
    failed: Warn


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


def _headers(headers: Any, secrets: list[str], env: list[str]) -> dict[str, str]:
    """The headers with credentials redacted and every other value masked (a proxy may echo a key anywhere)."""
    return {k: REDACTED if secret_header(k) else mask_secrets(v, secrets, env=env) for k, v in headers.items()}


def _secrets_of(headers: Any) -> list[str]:
    """The credential values this request carries (so they are masked wherever they appear): each
    credential header's value, and the value without its scheme (`Bearer sk-…` → `sk-…`). Short values
    are left out: a header named like a credential may say `true`, which must not mask the body's JSON."""
    out = []
    for name, value in headers.items():
        if value and secret_header(name):
            out += [value, value.partition(" ")[2]]
    return [v for v in out if len(v) >= MIN_LENGTH]


_ASCII_ESCAPE = re.compile(r"\\u00[2-7][0-9a-fA-F]|\\/")
"""A JSON escape of a printable ASCII character (`\\u0073` is `s`): how a body can spell a key so that
masking its text misses it. Escapes of other characters (an SDK's `ensure_ascii` output of a non-English
conversation) cannot spell a key, so such a body is not walked per request."""


def _escaped(text: str) -> bool:
    """Whether JSON `text` spells a printable ASCII character as an escape, which a mask of the text cannot see."""
    return ("\\u" in text or "\\/" in text) and _ASCII_ESCAPE.search(text) is not None


def _masked(value: Any, secrets: list[str], env: list[str]) -> Any:
    """Parsed JSON with every string (and key) masked: what the escapes spelled, now as plain characters."""
    if isinstance(value, str):
        return mask_secrets(value, secrets, env=env)
    if isinstance(value, list):
        return [_masked(v, secrets, env) for v in value]
    if isinstance(value, dict):
        return {mask_secrets(k, secrets, env=env): _masked(v, secrets, env) for k, v in value.items()}
    return value


def _parsed(raw: bytes, secrets: list[str], env: list[str]) -> Any:
    text = mask_secrets(raw.decode("utf-8", errors="replace"), secrets, env=env)
    try:
        value = json.loads(text)
    except ValueError:
        return _clip(text)
    if _escaped(text):
        value = _masked(value, secrets, env)
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
            continue
        if _escaped(data):
            events[-1] = _masked(events[-1], secrets, env)
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

        async def __aenter__(self) -> Any:
            await self.inner.__aenter__()
            return self

        async def __aexit__(self, *exc: Any) -> None:
            await self.inner.__aexit__(*exc)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Tee, Transport


def _not_captured(capture: Sink, exc: BaseException) -> None:
    capture.failed(mask_secrets(f"{type(exc).__name__}: {exc}", env=capture.env))


async def _captured(inner: Any, request: Any, capture: Sink, *, tee: type[Any], response_type: type[Any]) -> Any:
    """The request sent through `inner`; its exchange reported when the response closes. Whatever goes
    wrong in recording it (a body not read yet, an odd response) only loses the exchange, said once."""
    started = time.monotonic()
    env = capture.env
    try:
        secrets = _secrets_of(request.headers)
        sent = {
            "method": request.method,
            "url": safe_url(str(request.url)),
            "headers": _headers(request.headers, secrets, env),
            "body": _parsed(request.content, secrets, env) if request.content else None,
        }
    except Exception as exc:
        _not_captured(capture, exc)
        return await inner.handle_async_request(request)
    response = await inner.handle_async_request(request)

    def done(raw: bytes, complete: bool) -> None:
        try:
            stream = "text/event-stream" in response.headers.get("content-type", "")
            got: dict[str, Any] = {"status": response.status_code, "headers": _headers(response.headers, secrets, env)}
            got.update(_events(raw, secrets, env) if stream else {"body": _parsed(raw, secrets, env) if raw else None})
            if not complete:
                got["cut_off"] = True
            exchange = {"request": sent, "response": got, "elapsed_ms": round((time.monotonic() - started) * 1000, 1)}
        except Exception as exc:
            _not_captured(capture, exc)
            return
        capture.sink(exchange)

    try:
        return response_type(
            status_code=response.status_code,
            headers=response.headers,
            stream=tee(response.stream, done),
            extensions=response.extensions,
            request=request,
        )
    except Exception as exc:
        _not_captured(capture, exc)
        return response


def _http_client(model: Any) -> Any:
    """The HTTP client under a pydantic-ai model (through wrappers), if it has one."""
    for _ in range(8):
        client = getattr(getattr(model, "client", None), "_client", None)
        if client is not None and hasattr(client, "_transport") and hasattr(client, "send"):
            return client
        model = getattr(model, "wrapped", None)
        if model is None:
            return None
    return None


_FLAVOUR = ("AsyncClient", "AsyncBaseTransport", "AsyncByteStream", "Response")
"""What a package must define to be an httpx flavour the capture can wrap."""


def _flavour(client: Any) -> ModuleType:
    """The httpx flavour `client` is built on, found among its class's bases: an SDK subclasses the
    client in its own package (the OpenAI SDK's `AsyncHttpxClientWrapper` lives in `openai`)."""
    for cls in type(client).__mro__:
        mod = sys.modules.get(cls.__module__.partition(".")[0])
        if mod is not None and all(isinstance(getattr(mod, name, None), type) for name in _FLAVOUR) \
                and isinstance(client, mod.AsyncClient):
            return mod
    name = f"{type(client).__module__}.{type(client).__qualname__}"
    raise TypeError(f"its HTTP client ({name}) is not an async httpx client")


def install(model: Any) -> bool:
    """Wrap the transports of `model`'s httpx client (once): its own and each mount's (a proxy, or the
    user's transport for some URLs). False when the model has no HTTP client; raises when it cannot be wrapped."""
    client = _http_client(model)
    if client is None:
        return False
    wrap = _classes(_flavour(client))[1]
    if not getattr(client._transport, "captures", False):
        client._transport = wrap(client._transport)
    mounts = getattr(client, "_mounts", None)
    if isinstance(mounts, dict):
        for pattern, transport in list(mounts.items()):
            if transport is not None and not getattr(transport, "captures", False):
                mounts[pattern] = wrap(transport)
    return True


@contextmanager
def capturing(
    model: Any, *, emit: Emit, warn: Warn, run_id: str, slot: str | None
) -> Iterator[None]:
    """Report each HTTP exchange `model` makes inside the block as an `HttpExchange` of `slot`.

    Never fails the block: a client that cannot be wrapped, or an exchange that cannot be recorded, is
    passed to `warn` as one sentence saying the wire was not captured (the same for every slot: the
    caller says it once), and the requests go through.
    """
    try:
        attached = install(model)
    except Exception as exc:
        said = mask_secrets(str(exc) or type(exc).__name__)
        warn(f"the HTTP wire was not captured ({said}); the run goes on without it")
        attached = False
    if not attached:
        yield
        return

    def sink(exchange: dict[str, Any]) -> None:
        emit(HttpExchange(run_id=run_id, slot=slot, **exchange))

    def failed(reason: str) -> None:
        warn(f"an HTTP exchange was not captured ({reason}); the request went through")

    token = _sink.set(Sink(sink, env_secrets(), failed))  # the environment read once per run, not per request
    try:
        yield
    finally:
        _sink.reset(token)
