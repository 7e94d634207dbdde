"""`image()`, `document()`, `audio()` in a template: the matching part, a text file as text, URLs as URL parts."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import BinaryContent, DocumentUrl, ImageUrl, ModelRequest, UserPromptPart

from agentcell.engine import stream
from agentcell.template import compile_template
from tests.engine.conftest import Script

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _content(source: str, **context: Any) -> Any:
    script = Script(["ok"])
    events = [e async for e in stream(compile_template(source), model=script.model, context=context)]
    assert events[-1].result.status == "completed", events[-1].result.error
    message = script.requests[0].messages[-1]
    assert isinstance(message, ModelRequest)
    [part] = [p for p in message.parts if isinstance(p, UserPromptPart)]
    return part.content


def _wav() -> bytes:
    data = b"\x00\x00" * 800
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 1, 8000, 16000, 2, 16,
                         b"data", len(data))
    return header + data


async def test_document_audio_and_a_text_file(tmp_path: Path) -> None:
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (tmp_path / "q.wav").write_bytes(_wav())
    (tmp_path / "notes.txt").write_text("plain notes")
    content = await _content(
        '{{ document(d + "/paper.pdf") }} {{ audio(d + "/q.wav") }} {{ document(d + "/notes.txt") }}\n[[answer]]',
        d=str(tmp_path))
    binaries = [c for c in content if isinstance(c, BinaryContent)]
    assert [b.media_type for b in binaries] == ["application/pdf", "audio/wav"]
    assert any(isinstance(c, str) and "plain notes" in c for c in content)


async def test_urls_become_url_parts() -> None:
    content = await _content('{{ image("https://example.org/cat.jpg") }} {{ document("https://example.org/a.pdf") }}'
                             "\n[[answer]]")
    assert [type(c) for c in content if not isinstance(c, str)] == [ImageUrl, DocumentUrl]
    assert content[0].url == "https://example.org/cat.jpg"


async def test_a_private_url_in_a_template_fails_before_any_request() -> None:
    script = Script()
    events = [e async for e in stream(compile_template('{{ image("http://192.168.1.4/cam.jpg") }}\n[[answer]]'),
                                      model=script.model)]
    result = events[-1].result
    assert result.status == "failed" and script.requests == []
    assert "http://192.168.1.4/cam.jpg points to a private address (192.168.1.4)" in result.error
