"""An MCP tool's image or embedded file reaches the model as a content part (not a label, not base64 as JSON),
and every view shows it as media: a thumbnail in the transcript the widget, the static view and the lesson
read, its bytes once in the journal, its recorded result replayed as the same picture."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

import pytest
from PIL import Image
from pydantic_ai.messages import BinaryContent, ModelRequest, ToolReturnPart, UserPromptPart

from agentcell.engine import complete_async, stream
from agentcell.events import Event, MediaAdded, ToolCompleted
from agentcell.mcp_servers import mcp, registry
from agentcell.mcp_servers.tape import Tape
from agentcell.providers import replay
from agentcell.providers.models import record
from tests.engine.conftest import Call, Script, slot, template

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers

GUARD_S = 90
"""A hang guard around each run, not a timing under test."""

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"

SERVER = '''
import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.utilities.types import File, Image

folder = Path(sys.argv[1])
server = FastMCP("pictures")


@server.tool(annotations={"readOnlyHint": True})
def plot(title: str) -> Image:
    """Plot the data."""
    return Image(data=(folder / "plot.png").read_bytes(), format="png")


@server.tool(annotations={"readOnlyHint": True})
def report(title: str) -> list:
    """Write the report: a line of text and the PDF as an embedded resource."""
    return [f"the report {title!r} is attached",
            File(data=(folder / "report.pdf").read_bytes(), format="pdf", name="report")]


@server.tool(annotations={"readOnlyHint": True})
def huge(title: str) -> list:
    """5 MB of text and the plot."""
    return ["x" * (5 * 1024 * 1024), Image(data=(folder / "plot.png").read_bytes(), format="png")]


@server.tool(annotations={"readOnlyHint": True})
def blob(title: str) -> File:
    """A file no model reads as a part."""
    return File(data=bytes(range(256)) * 4, format="bin", name="raw")


server.run(show_banner=False)
'''


@pytest.fixture
def pictures(tmp_path: Path) -> tuple[str, bytes]:
    """The command of a FastMCP server written here, and the PNG its `plot` tool returns."""
    buffer = io.BytesIO()
    Image.effect_noise((300, 200), 40).convert("RGB").save(buffer, format="PNG")
    (tmp_path / "plot.png").write_bytes(buffer.getvalue())
    (tmp_path / "report.pdf").write_bytes(PDF)
    (tmp_path / "server.py").write_text(SERVER)
    return f"{sys.executable} {tmp_path / 'server.py'} {tmp_path}", buffer.getvalue()


def sent_parts(script: Script, request: int) -> tuple[list[ToolReturnPart], list[BinaryContent]]:
    message = script.requests[request].messages[-1]
    assert isinstance(message, ModelRequest)
    returns = [p for p in message.parts if isinstance(p, ToolReturnPart)]
    parts = [c for p in message.parts if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
             for c in p.content if isinstance(c, BinaryContent)]
    return returns, parts


async def run(script: Script, server: str, **options: object) -> list[Event]:
    async with asyncio.timeout(GUARD_S):
        return [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                        toolsets=[mcp(server, name="pictures")], **options)]  # type: ignore[arg-type]


async def test_an_mcp_image_reaches_the_model_and_every_view_as_an_image(
    pictures: tuple[str, bytes], tmp_path: Path
) -> None:
    from agentcell.events.json import to_wire
    from agentcell.render.html import transcript_html
    from agentcell.render.lesson import lesson_html
    from agentcell.transcript import Transcript

    server, png = pictures
    script = Script([Call("plot", {"title": "noise"}, id="p1")], ["A noisy picture."])
    events = await run(script, server, run_id="mcp-pic", journal=tmp_path / "journal")
    assert events[-1].result.status == "completed", events[-1].result.error

    returns, parts = sent_parts(script, 1)
    assert [r.content for r in returns] == ["[image: a 300×200 PNG]"]
    assert [(p.media_type, p.data) for p in parts] == [("image/png", png)]
    (done,) = [e for e in events if isinstance(e, ToolCompleted)]
    assert (done.ok, done.result) == (True, "[image: a 300×200 PNG]")
    (shown,) = [e for e in events if isinstance(e, MediaAdded)]
    assert shown.call_id == "p1" and shown.thumb.startswith("data:image/")

    transcript = Transcript.from_wire([to_wire(e, t=i / 100) for i, e in enumerate(events)])
    [item] = [it for r in transcript.slots["answer"].rounds.values() for it in r.items if it["type"] == "media"]
    assert item["call_id"] == "p1" and item["thumb"] == shown.thumb
    assert f'src="{shown.thumb}"' in transcript_html(transcript)
    assert f'src="{shown.thumb}"' in lesson_html([("mcp-pic", transcript)])
    assert [f.read_bytes() for f in (tmp_path / "journal" / "mcp-pic.media").iterdir()] == [png]


async def test_an_embedded_pdf_resource_is_a_document_part_beside_the_text(pictures: tuple[str, bytes]) -> None:
    server, _ = pictures
    script = Script([Call("report", {"title": "q3"})], ["Read it."])
    events = await run(script, server)
    assert events[-1].result.status == "completed", events[-1].result.error
    returns, parts = sent_parts(script, 1)
    label = f"the report 'q3' is attached\n[document: a PDF document ({len(PDF):,} bytes)]"
    assert [r.content for r in returns] == [label]
    assert [(p.media_type, p.data) for p in parts] == [("application/pdf", PDF)]
    (done,) = [e for e in events if isinstance(e, ToolCompleted)]
    assert done.result == label
    (shown,) = [e for e in events if isinstance(e, MediaAdded)]
    assert shown.media.media_kind == "document" and shown.thumb == ""


async def test_5_mb_of_text_beside_an_image_is_clipped_and_the_image_still_sent(pictures: tuple[str, bytes]) -> None:
    server, png = pictures
    script = Script([Call("huge", {"title": "x"})], ["ok"])
    events = await run(script, server)
    returns, parts = sent_parts(script, 1)
    (done,) = [e for e in events if isinstance(e, ToolCompleted)]
    assert done.ok and done.result.startswith("xxxx") and len(done.result) < 101_000
    assert "5,242,880" in done.result  # the clip note names the full size
    assert done.result.endswith("\n[image: a 300×200 PNG]")  # the image's label is never clipped away
    assert [(p.media_type, p.data) for p in parts] == [("image/png", png)]
    (ret,) = returns
    assert ret.content.startswith("xxxx") and len(ret.content) < 101_000  # the model's view may clip it further
    message = script.requests[1].messages[-1]
    assert isinstance(message, ModelRequest)
    (user,) = [p for p in message.parts if isinstance(p, UserPromptPart)]
    assert user.content[0] == "(the result of that call: [image: a 300×200 PNG])"  # the text is not sent twice


async def test_a_binary_no_model_reads_is_named_by_its_type_and_size(pictures: tuple[str, bytes]) -> None:
    server, _ = pictures
    script = Script([Call("blob", {"title": "x"})], ["ok"])
    events = await run(script, server)
    returns, parts = sent_parts(script, 1)
    assert [r.content for r in returns] == ["[a file of type application/bin, 1,024 bytes]"] and parts == []
    assert not [e for e in events if isinstance(e, MediaAdded)]


async def test_a_recorded_image_replays_as_the_same_picture(pictures: tuple[str, bytes], tmp_path: Path) -> None:
    server, png = pictures
    cassette = tmp_path / "run.json"
    tools = mcp(server, name="pictures")
    script = Script([Call("plot", {"title": "noise"}, id="p1")], ["A noisy picture."])
    async with asyncio.timeout(GUARD_S):
        recorded = await complete_async(template(slot("answer", use_tools=True)), model=record(cassette, script.model),
                                        toolsets=[tools.taped(Tape.recording(cassette))])
    assert recorded.status == "completed", recorded.error
    await registry.stop()

    seen: list[list[BinaryContent]] = []
    replayed_model = replay(cassette, delay=0)
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=replayed_model,
                                      toolsets=[tools.taped(Tape.replaying(cassette))])]
    assert events[-1].result.status == "completed", events[-1].result.error
    messages = events[-1].result.messages
    seen = [[c for p in m.parts if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
             for c in p.content if isinstance(c, BinaryContent)] for m in messages if isinstance(m, ModelRequest)]
    assert [(p.media_type, p.data) for group in seen for p in group] == [("image/png", png)]
    assert registry.running() == []
