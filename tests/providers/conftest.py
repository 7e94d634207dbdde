"""Fixtures for the real-provider tests: the scripted OpenAI server on 127.0.0.1 and models pointed at it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agentcell.events import Event
from agentcell.tools import readonly
from tests.openai_server import FakeOpenAI

MODULES = {"PSYC605": "Cognition and Emotion, led by Dr Ada Byron", "PSYC606": "Memory, led by Dr Alan Baddeley"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def user_model(server: FakeOpenAI, *, api_key: str = "test") -> OpenAIChatModel:
    """What a user pointing at Ollama writes: pydantic-ai's real OpenAI model with a base URL."""
    return OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=server.base_url, api_key=api_key))


@readonly
def lookup_module(module_code: str) -> str:
    """Look a module up by its code. Returns its title and who leads it."""
    return MODULES.get(module_code, "no such module")


def kinds(events: Sequence[Event], *, collapse: bool = False, skip: Sequence[str] = ()) -> list[str]:
    """Event kinds in order; `collapse` merges runs of one kind (delta granularity differs between streams)."""
    out: list[str] = []
    for event in events:
        if event.kind in skip or (collapse and out and out[-1] == event.kind):
            continue
        out.append(event.kind)
    return out


def of(events: Sequence[Event], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


async def eventually(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
