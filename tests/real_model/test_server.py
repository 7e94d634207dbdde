"""The server itself, before agentcell meets it: it is up, lists its model and streams a chat answer.

A multi-token prompt is the case that crashes a llama.cpp built for the wrong CPU features (see
docs/real-model-server.md), so this is the test that says "the build is wrong" rather than a kernel
test timing out on a dead server.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.real_model.llama_server import LlamaServer

pytestmark = pytest.mark.real_model


def test_models_lists_the_served_gguf(server: LlamaServer) -> None:
    with urllib.request.urlopen(f"{server.base_url}/models", timeout=30) as response:
        models = json.load(response)["data"]
    assert [m["id"] for m in models] == [str(server.model_path)]


def test_a_multi_token_prompt_streams_an_answer(server: LlamaServer) -> None:
    body = {
        "model": "anything",
        "messages": [{"role": "user", "content": "Name three colours of the rainbow, please."}],
        "stream": True,
        "max_tokens": 16,
    }
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        lines = [line.decode().strip() for line in response]
    events = [line.removeprefix("data: ") for line in lines if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text.strip(), f"no answer text in {events}"
    # It reads `max_tokens` (one token per content chunk): agentcell's slot max_tokens must reach it by that name.
    assert len([c for c in chunks if c["choices"][0]["delta"].get("content")]) <= 16
    assert server.alive()
