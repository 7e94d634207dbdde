"""A tool that returns a picture or a table: the model's next request carries it as a content part."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from pydantic_ai.messages import BinaryContent, ModelRequest, ToolReturnPart, UserPromptPart

from agentcell.engine import stream
from agentcell.events import MediaAdded, ToolCompleted
from agentcell.template import compile_template
from tests.engine.conftest import Call, Script

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def chart() -> Image.Image:
    """Draw the chart."""
    return Image.new("RGB", (300, 200), "blue")


async def test_a_pil_image_from_a_tool_reaches_the_next_request_as_a_part() -> None:
    script = Script([Call("chart")], [Call("chart")], ["I see a blue chart."])
    events = [e async for e in stream(compile_template("Draw it [[answer|use_tools]]"), model=script.model,
                                      tools=[chart])]
    assert events[-1].result.status == "completed", events[-1].result.error
    second = script.requests[1].messages[-1]
    assert isinstance(second, ModelRequest)
    [ret] = [p for p in second.parts if isinstance(p, ToolReturnPart)]
    assert ret.content == "[image: a 300×200 PNG]"
    [user] = [p for p in second.parts if isinstance(p, UserPromptPart)]
    images = [c for c in user.content if isinstance(c, BinaryContent)]
    assert len(images) == 1 and images[0].media_type == "image/png"
    assert Image.open(io.BytesIO(images[0].data)).size == (300, 200)
    done = [e for e in events if isinstance(e, ToolCompleted)]
    assert [e.result for e in done] == ["[image: a 300×200 PNG]"] * 2
    shown = [e for e in events if isinstance(e, MediaAdded)]
    # Called twice with the same picture: two cards, one thumbnail.
    assert [e.call_id for e in shown] == [done[0].call_id, done[1].call_id]
    assert shown[0].thumb.startswith("data:image/") and shown[1].thumb == ""
    assert shown[0].media.digest == shown[1].media.digest and (shown[0].media.width, shown[0].media.height) == (300, 200)


async def test_a_dataframe_from_a_tool_is_a_markdown_table() -> None:
    pd = pytest.importorskip("pandas")

    def rows() -> object:
        """The rows."""
        return pd.DataFrame({"x": range(50)})

    script = Script([Call("rows")], ["ok"])
    events = [e async for e in stream(compile_template("Go [[answer|use_tools]]"), model=script.model, tools=[rows])]
    assert events[-1].result.status == "completed"
    [ret] = [p for p in script.requests[1].messages[-1].parts if isinstance(p, ToolReturnPart)]
    assert ret.content.splitlines()[0] == "DataFrame: 50 rows × 1 columns"
    assert ret.content.splitlines()[-1] == "… 30 more rows (showing the first 20)"


async def test_a_tool_picture_is_shown_by_every_view_and_journaled_once(tmp_path: Path) -> None:
    """The acceptance case end to end: the model reads the picture, the transcript every view reads (the widget's
    reducer twin, the static view, the lesson) holds its thumbnail, the journal holds its bytes once."""
    from agentcell.events.json import to_wire
    from agentcell.render.html import transcript_html
    from agentcell.render.lesson import lesson_html
    from agentcell.transcript import Transcript

    picture = Image.effect_noise((300, 200), 40).convert("RGB")

    def plot() -> Image.Image:
        """Plot it."""
        return picture

    script = Script([Call("plot", id="p1")], ["A noisy picture."])
    events = [e async for e in stream(compile_template("Plot it [[answer|use_tools]]"), model=script.model,
                                      tools=[plot], run_id="tool-pic", journal=tmp_path)]
    assert events[-1].result.status == "completed"
    [image] = [c for p in script.requests[1].messages[-1].parts if isinstance(p, UserPromptPart)
               for c in p.content if isinstance(c, BinaryContent)]
    transcript = Transcript.from_wire([to_wire(e, t=i / 100) for i, e in enumerate(events)])
    [item] = [it for r in transcript.slots["answer"].rounds.values() for it in r.items if it["type"] == "media"]
    assert item["call_id"] == "p1" and item["thumb"].startswith("data:image/jpeg;base64,")
    assert f'src="{item["thumb"]}"' in transcript_html(transcript)
    assert f'src="{item["thumb"]}"' in lesson_html([("tool-pic", transcript)])
    assert [f.read_bytes() for f in (tmp_path / "tool-pic.media").iterdir()] == [image.data]
