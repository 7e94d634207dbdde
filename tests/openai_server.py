"""A scripted OpenAI Chat Completions server on 127.0.0.1 for provider tests (and `scripts/fake_openai_server.py`).

Real HTTP/1.1 over `asyncio.start_server`, in its own thread and event loop, so the client (pydantic-ai's
`OpenAIChatModel` through the OpenAI SDK and httpx) sees exactly what it would see from Ollama or vLLM:
`text/event-stream` responses in chunked transfer encoding, each SSE event written and drained on its own.

Each POST to `/v1/chat/completions` takes the next scripted `Reply` (or `Fail`) from the queue:

    server.script(
        Reply(Think("Let me look."), Call("lookup", {"code": "PSYC605"}, pieces=3), Usage(12, 7)),
        Fail(429, "slow down", retry_after=0.2),
        Reply(Text("Dr Ada Byron leads it.", pieces=5, delay=0.02)),
    )

Every request is recorded (`server.requests`): its JSON body, headers, any shape problems found in it
(`problems`; a request with problems is answered 400 like OpenAI would), and timing — notably
`disconnected_at`, the `time.monotonic()` at which the server saw the client close the connection
while a response was still being written.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# ---- the script ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Answer text, sent as `pieces` content deltas `delay` seconds apart."""

    text: str
    pieces: int = 1
    delay: float = 0.0


@dataclass(frozen=True)
class Think:
    """Reasoning text in the `reasoning_content` delta field (DeepSeek, vLLM, Ollama style)."""

    text: str
    pieces: int = 1
    delay: float = 0.0
    field: str = "reasoning_content"


@dataclass(frozen=True)
class Call:
    """A tool call; its JSON arguments are split across `pieces` deltas. `raw` sends arguments verbatim."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    pieces: int = 1
    raw: str | None = None

    @property
    def arguments(self) -> str:
        return self.raw if self.raw is not None else json.dumps(dict(self.args))


@dataclass(frozen=True)
class Usage:
    """The usage to report (sent when the client asked for `stream_options.include_usage`; default: a word count)."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Pause:
    """Wait before the next chunk (the connection stays open)."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly, mid-stream (no final chunk, no `[DONE]`)."""


@dataclass(frozen=True)
class Cut:
    """End the stream with no finish reason, then `[DONE]`: what llama.cpp's server does to a stream when another
    request waits (indistinguishable from a short answer but for the missing `finish_reason`)."""


@dataclass(frozen=True)
class NoUsage:
    """Report no usage at all, streamed or not (llama.cpp's server streams none)."""


Step = Text | Think | Call | Usage | Pause | Drop | Cut | NoUsage


@dataclass(frozen=True)
class Reply:
    """One successful response, streamed or not depending on the request."""

    steps: tuple[Step, ...]
    model: str = "fake-model"

    def __init__(self, *steps: Step, model: str = "fake-model") -> None:
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "model", model)


@dataclass(frozen=True)
class Fail:
    """An HTTP error with an OpenAI-style error body."""

    status: int
    message: str = "error"
    retry_after: float | None = None
    type: str = "server_error"
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


Scripted = Reply | Fail
Responder = Callable[[dict[str, Any]], Scripted]


# ---- what the server saw ---------------------------------------------------------------------


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float
    problems: list[str] = field(default_factory=list)
    status: int = 0
    outcome: str = "pending"
    """`completed`, `error` (an HTTP error status), `dropped` (a scripted Drop) or `disconnected`."""
    disconnected_at: float | None = None
    """`time.monotonic()` when the client closed the connection before the response was complete."""
    chunks_sent: int = 0
    finished_at: float | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


# ---- request validation (what OpenAI itself refuses) -----------------------------------------

_ROLES = {"system", "developer", "user", "assistant", "tool"}


def validate_chat_request(body: Any) -> list[str]:
    """Shape problems OpenAI would answer with a 400; empty when the request is acceptable."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages must be a non-empty list"]
    open_calls: dict[str, str] = {}
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict) or msg.get("role") not in _ROLES:
            problems.append(f"{where}: role must be one of {sorted(_ROLES)}")
            continue
        role = msg["role"]
        if role != "tool" and open_calls:
            problems.append(f"{where}: tool calls {sorted(open_calls)} were not answered by tool messages")
            open_calls.clear()
        content = msg.get("content")
        if role in ("system", "developer", "user"):
            if not (isinstance(content, str) or _is_parts(content)):
                problems.append(f"{where}: {role} content must be a string or a list of content parts")
        elif role == "assistant":
            calls = msg.get("tool_calls")
            if content is None and not calls:
                problems.append(f"{where}: assistant message needs content or tool_calls")
            if content is not None and not (isinstance(content, str) or _is_parts(content)):
                problems.append(f"{where}: assistant content must be a string, parts or null")
            for j, call in enumerate(calls or []):
                fn = call.get("function") if isinstance(call, dict) else None
                if not (
                    isinstance(call, dict)
                    and call.get("type") == "function"
                    and isinstance(call.get("id"), str)
                    and isinstance(fn, dict)
                    and isinstance(fn.get("name"), str)
                    and isinstance(fn.get("arguments"), str)
                ):
                    problems.append(f"{where}.tool_calls[{j}]: needs id, type=function, function.name/arguments")
                    continue
                open_calls[call["id"]] = fn["name"]
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in open_calls:
                problems.append(f"{where}: tool_call_id {call_id!r} answers no preceding assistant tool call")
            open_calls.pop(call_id, None)
            if not (isinstance(content, str) or _is_parts(content)):
                problems.append(f"{where}: tool content must be a string or parts")
    if open_calls:
        problems.append(f"tool calls {sorted(open_calls)} at the end were not answered")
    for k, tool in enumerate(body.get("tools") or []):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not (isinstance(tool, dict) and tool.get("type") == "function" and isinstance(fn, dict) and fn.get("name")):
            problems.append(f"tools[{k}]: needs type=function and function.name")
    return problems


def _is_parts(content: Any) -> bool:
    return isinstance(content, list) and all(isinstance(p, dict) and "type" in p for p in content)


# ---- the server ------------------------------------------------------------------------------


class FakeOpenAI:
    """The server. Use as a context manager (`with FakeOpenAI() as server:`) or `start()` / `close()`."""

    def __init__(
        self,
        *,
        require_key: str | None = None,
        default: Responder | None = None,
        port: int = 0,
    ) -> None:
        self.require_key = require_key
        """When set, requests must carry `Authorization: Bearer <require_key>`; others get a 401."""
        self.default = default
        """Answers a request when the script is empty (otherwise: a 500 naming the problem)."""
        self.requests: list[Recorded] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.host = "127.0.0.1"
        self.port = 0

    # lifecycle
    def start(self) -> FakeOpenAI:
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(loop)
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=main, name="fake-openai", daemon=True)
        self._thread.start()
        ready.wait()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, self.host, self._port), loop
        ).result(5)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def close(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None:
            return

        async def shutdown() -> None:
            server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(5)
        loop.close()
        self._loop = self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # scripting
    def script(self, *replies: Scripted) -> None:
        """Queue replies; each chat-completions request takes the next one."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def open_connections(self) -> int:
        """Connections the server is serving right now (a client holding one open counts)."""
        return len(self._connections)

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.partition("?")[0].endswith("/chat/completions")]

    def _next(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.default is not None:
            return self.default(body)
        return Fail(500, "fake server: no scripted reply left for this request")

    # HTTP
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # One request per connection (`Connection: close`): the client's only later byte is its close.
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsable": raw.decode("utf-8", "replace")}
        rec = Recorded(path=path, body=body, headers=headers, received_at=time.monotonic())
        self.requests.append(rec)
        route = path.partition("?")[0].rstrip("/")  # Azure's client adds `?api-version=…`
        if method == "GET" and route.endswith("/models"):
            await self._json(writer, rec, 200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
            return
        if method != "POST" or not route.endswith("/chat/completions"):
            await self._json(writer, rec, 404, _error_body("no such route", "invalid_request_error", None))
            return
        if self.require_key is not None and headers.get("authorization") != f"Bearer {self.require_key}":
            sent = headers.get("authorization", "").removeprefix("Bearer ")
            # Like OpenAI, the message echoes (here: all of) the key it refused; agentcell must not show it.
            message = f"Incorrect API key provided: {sent}. You can find your API key in your account settings."
            await self._json(writer, rec, 401, _error_body(message, "invalid_request_error", "invalid_api_key"))
            return
        rec.problems = validate_chat_request(body)
        if rec.problems:
            await self._json(writer, rec, 400, _error_body("; ".join(rec.problems), "invalid_request_error", None))
            return
        scripted = self._next(body)
        if isinstance(scripted, Fail):
            extra = dict(scripted.headers)
            if scripted.retry_after is not None:
                extra["Retry-After"] = f"{scripted.retry_after:g}"
            error = _error_body(scripted.message, scripted.type, scripted.code)
            await self._json(writer, rec, scripted.status, error, extra)
            return
        if rec.stream:
            await self._stream(reader, writer, rec, scripted)
        else:
            await self._json(writer, rec, 200, _completion(scripted))

    async def _json(
        self,
        writer: asyncio.StreamWriter,
        rec: Recorded,
        status: int,
        payload: Any,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
            "Connection: close",
            *(f"{k}: {v}" for k, v in (extra or {}).items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()
        rec.status = status
        rec.outcome = "completed" if status == 200 else "error"
        rec.finished_at = time.monotonic()

    async def _stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rec: Recorded, reply: Reply
    ) -> None:
        rec.status = 200
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode())
        await writer.drain()
        # The client sends nothing more on this connection, so a read that returns means it closed.
        gone = asyncio.ensure_future(reader.read(1))
        include_usage = bool((rec.body.get("stream_options") or {}).get("include_usage"))
        try:
            for item in _events(reply, include_usage):
                if isinstance(item, Pause):
                    await asyncio.wait([gone], timeout=item.seconds)
                elif isinstance(item, Drop):
                    rec.outcome = "dropped"
                    rec.finished_at = time.monotonic()
                    transport = writer.transport
                    transport.abort()
                    return
                else:
                    data = f"data: {item}\n\n".encode()
                    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    await writer.drain()
                    rec.chunks_sent += 1
                if gone.done():
                    rec.disconnected_at = rec.disconnected_at or time.monotonic()
                    rec.outcome = "disconnected"
                    return
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            rec.outcome = "completed"
            rec.finished_at = time.monotonic()
        except ConnectionError:
            rec.disconnected_at = rec.disconnected_at or time.monotonic()
            rec.outcome = "disconnected"
        finally:
            if not gone.done():
                gone.cancel()


def _split(text: str, pieces: int) -> list[str]:
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


_counter = iter(range(1, 1_000_000))


def _events(reply: Reply, include_usage: bool) -> Iterator[str | Pause | Drop]:
    """The SSE `data:` payloads (and pauses/drops) of one streamed reply."""
    ident = f"chatcmpl-{next(_counter)}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return json.dumps(
            {"id": ident, "object": "chat.completion.chunk", "created": created, "model": reply.model,
             "choices": [choice]}
        )

    # The role chunk goes out with the first real step, so a leading Drop breaks off before any chunk.
    opened = False
    call_index = 0
    usage: Usage | None = None
    for step in reply.steps:
        if isinstance(step, Cut | NoUsage):
            continue
        if not opened and not isinstance(step, Pause | Drop | Usage):
            opened = True
            yield chunk({"role": "assistant", "content": ""})
        if isinstance(step, Text | Think):
            key = "content" if isinstance(step, Text) else step.field
            for i, piece in enumerate(_split(step.text, step.pieces)):
                if i and step.delay:
                    yield Pause(step.delay)
                yield chunk({key: piece})
        elif isinstance(step, Call):
            call_id = step.id or f"call_{call_index + 1}"
            pieces = _split(step.arguments, step.pieces)
            first = {"index": call_index, "id": call_id, "type": "function",
                     "function": {"name": step.name, "arguments": ""}}
            yield chunk({"tool_calls": [first]})
            for piece in pieces:
                yield chunk({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]})
            call_index += 1
        elif isinstance(step, Usage):
            usage = step
        else:
            yield step
    if not opened:
        yield chunk({"role": "assistant", "content": ""})
    if not any(isinstance(s, Cut) for s in reply.steps):
        yield chunk({}, "tool_calls" if call_index else "stop")
    usage = usage or _default_usage(reply)
    if include_usage and not any(isinstance(s, NoUsage) for s in reply.steps):
        total = usage.prompt_tokens + usage.completion_tokens
        yield json.dumps(
            {"id": ident, "object": "chat.completion.chunk", "created": created, "model": reply.model, "choices": [],
             "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                       "total_tokens": total}}
        )
    yield "[DONE]"


def _completion(reply: Reply) -> dict[str, Any]:
    """The same reply as one non-streamed chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: list[dict[str, Any]] = []
    usage = None
    for step in reply.steps:
        if isinstance(step, Text):
            message["content"] = (message["content"] or "") + step.text
        elif isinstance(step, Think):
            message[step.field] = message.get(step.field, "") + step.text
        elif isinstance(step, Call):
            calls.append({"id": step.id or f"call_{len(calls) + 1}", "type": "function",
                          "function": {"name": step.name, "arguments": step.arguments}})
        elif isinstance(step, Usage):
            usage = _usage_json(step)
    usage = usage or _usage_json(_default_usage(reply))
    if calls:
        message["tool_calls"] = calls
    if any(isinstance(s, NoUsage) for s in reply.steps):
        usage = None
    return {
        "id": f"chatcmpl-{next(_counter)}", "object": "chat.completion", "created": int(time.time()),
        "model": reply.model, "usage": usage,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                     "logprobs": None}],
    }


def _default_usage(reply: Reply) -> Usage:
    """Like a real server, always report usage: a word count when the script gives none."""
    words = sum(len(s.text.split()) for s in reply.steps if isinstance(s, Text | Think))
    calls = sum(1 for s in reply.steps if isinstance(s, Call))
    return Usage(10, words + 5 * calls)


def _usage_json(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens}


def _error_body(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


# ---- a demo responder for the dev script ------------------------------------------------------


def demo_reply(body: dict[str, Any], *, delay: float = 0.04) -> Reply:
    """A plausible answer to any request: call the first tool once, then answer about the prompt."""
    messages = body.get("messages", [])
    prompt = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
    last = messages[-1] if messages else {}
    tools = body.get("tools") or []
    if tools and last.get("role") == "user":
        name = tools[0]["function"]["name"]
        props = tools[0]["function"].get("parameters", {}).get("properties", {})
        args = {key: prompt.split()[-1].strip("?.!") if prompt.split() else key for key in props}
        return Reply(Think(f"I should call {name} first.", pieces=3, delay=delay), Call(name, args, pieces=3),
                     Usage(40, 12))
    said = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "tool")[:200]
    text = f"The fake OpenAI server read your prompt: {prompt[:120]!r}." + (f" Tools said: {said}." if said else "")
    words = len(text.split())
    return Reply(Think("Writing the answer.", pieces=2, delay=delay), Text(text, pieces=words, delay=delay),
                 Usage(60, words))
