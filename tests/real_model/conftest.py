"""The real model server for every `real_model` test: one llama.cpp server per session, on 127.0.0.1.

The tests are part of the full run and fail, never skip, when the server cannot be found or started
(`scripts/setup` builds it). A fast local tier leaves them out explicitly: `-m "not real_model"`, or
`AGENTCELL_SKIP_REAL_MODEL=1`, which also spares `scripts/setup` the llama.cpp build. On CI (`CI` set)
the variable is refused, so a CI run cannot drop them by accident.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.real_model.llama_server import SKIP_ENV, LlamaServer, start


def skip_requested() -> bool:
    if os.environ.get(SKIP_ENV, "") in ("", "0"):
        return False
    if os.environ.get("CI"):
        raise pytest.UsageError(f"{SKIP_ENV} is set on CI: the real-model tests must run there")
    return True


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    if skip_requested():
        pytest.skip(f"{SKIP_ENV} is set: the real-model tests are left out of this run")
    server = start(tmp_path_factory.mktemp("llama-server") / "server.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server(llama_server: LlamaServer) -> LlamaServer:
    """The session's server, checked alive before each test (a crash in one test names itself here)."""
    assert llama_server.alive(), f"the llama.cpp server died (status {llama_server.process.returncode}):\n" + (
        llama_server.log()[-4000:]
    )
    return llama_server


@pytest.fixture(scope="session")
def function_calling_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A second server in llama-cpp-python's tool-calling chat format (`--chat_format chatml-function-calling`):
    it answers tool calls, but only to unstreamed requests."""
    if skip_requested():
        pytest.skip(f"{SKIP_ENV} is set: the real-model tests are left out of this run")
    server = start(tmp_path_factory.mktemp("llama-fc") / "server.log", extra_args=("--chat_format",
                                                                                   "chatml-function-calling"))
    try:
        yield server
    finally:
        server.stop()
