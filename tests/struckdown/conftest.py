"""Two backends for struckdown's own examples: a scripted model, and the OpenAI-compatible fixture server.

A scenario is written once, backend-neutral (`Use`, `Say`, `Reason`, `Wait`, and an optional guard
verdict), and each backend turns it into what it speaks: `Script` items for the scripted pydantic-ai
model (`tests/engine/conftest.py`), `Reply` steps for `tests/openai_server.py`. The reader's `model` and
`credentials` are what a struckdown user would write for each: the scripted model with no credentials,
or a real provider model name (`openai:gpt-4o-mini`) with `LLMCredentials` carrying the server's base
URL and a dummy key, which the server requires as its bearer key.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import agentcell
from tests import openai_server as srv
from tests.engine import conftest as scripted

KEY = "sk-struckdown-dummy-key-7f3a9c2e"
"""The dummy provider key: the fixture server requires it, and no event, journal line, error or repr may show it."""

MODULES = {"PSYC601": "Research Methods, led by Dr Ada Byron", "PSYC605": "Cognition and Emotion, led by Dr Ada Byron"}


@dataclass(frozen=True)
class Use:
    """The model calls a tool."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Say:
    """The model writes answer text, in `pieces` deltas."""

    text: str
    pieces: int = 1


@dataclass(frozen=True)
class Reason:
    """The model thinks aloud (reasoning the provider returns)."""

    text: str


@dataclass(frozen=True)
class Wait:
    """The model pauses mid-response, with the request still open."""

    seconds: float


Item = Use | Say | Reason | Wait
Round = Sequence[Item]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _pieces(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // max(pieces, 1)))
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedBackend:
    """A scripted pydantic-ai model (`FunctionModel`), passed as `model=`; `credentials=None`."""

    name = "scripted"

    def __init__(self) -> None:
        self.main = scripted.Script()
        self.guard: scripted.Script | None = None

    def script(self, *rounds: Round, guard: tuple[bool, str] | None = None) -> None:
        self.main = scripted.Script(*(self._items(r) for r in rounds))
        self.guard = scripted.Script(scripted.verdict(*guard)) if guard is not None else None

    @staticmethod
    def _items(round_: Round) -> list[scripted.Item]:
        out: list[scripted.Item] = []
        for item in round_:
            match item:
                case Use():
                    out.append(scripted.Call(item.name, item.args))
                case Say():
                    out.extend(_pieces(item.text, item.pieces))
                case Reason():
                    out.append(scripted.Think(item.text))
                case Wait():
                    out.append(scripted.Sleep(item.seconds))
        return out

    @property
    def model(self) -> Any:
        return scripted.routed(self.guard, self.main) if self.guard is not None else self.main.model

    credentials: Any = None

    def tools_offered(self) -> list[list[str]]:
        return self.main.tools_per_request

    def requests(self) -> int:
        return len(self.main.requests)

    def cancelled(self) -> bool:
        return self.main.cancelled > 0


class ServerBackend:
    """The fixture server, reached as a struckdown user reaches a proxy: a model name plus credentials."""

    name = "server"
    model = "openai:gpt-4o-mini"

    def __init__(self, server: srv.FakeOpenAI) -> None:
        self.server = server
        self.credentials = agentcell.LLMCredentials(api_key=KEY, base_url=server.base_url)
        self._main: deque[srv.Reply] = deque()
        self._guard: deque[tuple[bool, str]] = deque()
        server.default = self._respond

    def script(self, *rounds: Round, guard: tuple[bool, str] | None = None) -> None:
        self._main.extend(srv.Reply(*self._steps(r)) for r in rounds)
        if guard is not None:
            self._guard.append(guard)

    @staticmethod
    def _steps(round_: Round) -> list[srv.Step]:
        out: list[srv.Step] = []
        for item in round_:
            match item:
                case Use():
                    out.append(srv.Call(item.name, item.args))
                case Say():
                    out.append(srv.Text(item.text, pieces=item.pieces))
                case Reason():
                    out.append(srv.Think(item.text))
                case Wait():
                    out.append(srv.Pause(item.seconds))
        return out

    def _respond(self, body: dict[str, Any]) -> srv.Scripted:
        if _is_guard(body) and self._guard:
            triggered, reason = self._guard.popleft()
            output = next(t["function"]["name"] for t in body["tools"] if _triggered(t))
            return srv.Reply(srv.Call(output, {"triggered": triggered, "reason": reason}))
        if not _is_guard(body) and self._main:
            return self._main.popleft()
        return srv.Fail(500, "fake server: no scripted reply left")

    def main_requests(self) -> list[srv.Recorded]:
        return [r for r in self.server.chat_requests if not _is_guard(r.body)]

    def tools_offered(self) -> list[list[str]]:
        return [
            [t["function"]["name"] for t in r.body.get("tools") or [] if t["function"]["name"] != "final_result"]
            for r in self.main_requests()
        ]

    def requests(self) -> int:
        return len(self.main_requests())

    def cancelled(self) -> bool:
        return any(r.outcome == "disconnected" for r in self.main_requests())


def _triggered(tool: dict[str, Any]) -> bool:
    return "triggered" in tool["function"].get("parameters", {}).get("properties", {})


def _is_guard(body: dict[str, Any]) -> bool:
    return any(_triggered(t) for t in body.get("tools") or [])


Backend = ScriptedBackend | ServerBackend


@pytest.fixture(params=["scripted", "server"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "scripted":
        yield ScriptedBackend()
        return
    with srv.FakeOpenAI(require_key=KEY) as server:
        yield ServerBackend(server)


def journal_text() -> str:
    """Everything every run of the test session has journaled so far."""
    folder = Path(os.environ["AGENTCELL_JOURNAL"])
    return "".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True

