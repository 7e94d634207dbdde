"""The journal keeps each image once, by digest, beside the run (0700 folder, 0600 files), and reads it back."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest
from PIL import Image
from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

from agentcell.engine import complete_async
from agentcell.journal.reader import load
from agentcell.template import compile_template
from tests.engine.conftest import Call, Script

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _picture() -> Image.Image:
    return Image.effect_noise((300, 200), 60).convert("RGB")  # noise: its PNG does not compress away


async def test_an_image_sent_twice_is_stored_once(tmp_path: Path) -> None:
    picture = _picture()

    def chart() -> Image.Image:
        """Draw the chart."""
        return picture

    script = Script([Call("chart")], [Call("chart")], ["seen"])
    result = await complete_async(compile_template("Look {{ pic }}\n[[answer|use_tools]]"), model=script.model,
                                  tools=[chart], context={"pic": picture}, run_id="pics", journal=tmp_path)
    assert result.status == "completed"
    sent = [c for m in result.messages if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, UserPromptPart) and not isinstance(p.content, str) for c in p.content
            if isinstance(c, BinaryContent)]
    assert len(sent) == 2 and len({c.data for c in sent}) == 1  # the prompt's and the tool's (its repeat is a nudge)
    folder = tmp_path / "pics.media"
    [stored] = list(folder.iterdir())
    assert stored.read_bytes() == sent[0].data
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(stored.stat().st_mode) == 0o600
    text = (tmp_path / "pics.jsonl").read_text()
    assert base64.b64encode(sent[0].data[:600]).decode()[:400] not in text  # no copy of the bytes in the rows
    assert len(text) < len(sent[0].data)

    record = load("pics", path=tmp_path)
    again = [c for m in record.messages if isinstance(m, ModelRequest) for p in m.parts
             if isinstance(p, UserPromptPart) and not isinstance(p.content, str) for c in p.content
             if isinstance(c, BinaryContent)]
    assert [c.data for c in again] == [c.data for c in sent]
