"""agentcell from plain Python (no kernel, no event loop) against the real server."""

from __future__ import annotations

import pytest

import agentcell
from tests.real_model.llama_server import LlamaServer

pytestmark = pytest.mark.real_model


def test_complete_runs_a_template_to_the_end(server: LlamaServer) -> None:
    mark = server.log_mark()
    result = agentcell.complete("Say hello in one short sentence.\n[[answer]]", model=server.model())
    assert result.status == "completed", result.error
    assert isinstance(result.answer, str) and result.answer.strip()
    assert result["answer"] == result.answer
    assert server.log_since(mark).count("POST /v1/chat/completions HTTP/1.1") == 1
