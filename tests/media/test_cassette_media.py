"""A cassette names each image by its digest: it replays the same picture and diverges on another."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from agentcell.engine import complete_async
from agentcell.errors import ReplayDivergence, RunError
from agentcell.providers.cassette import replay
from agentcell.providers.models import record
from agentcell.template import compile_template

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SOURCE = "What is this? {{ pic }}\n[[answer]]"


async def test_an_image_prompt_records_and_replays(tmp_path: Path) -> None:
    cassette = tmp_path / "run.json"
    red = Image.new("RGB", (40, 30), "red")
    first = await complete_async(compile_template(SOURCE), model=record(cassette, "offline:fast"), context={"pic": red},
                                 journal=False)
    text = cassette.read_text()
    assert "agentcell-media:" in text and len(text) < 20_000  # the digest, not the bytes
    again = await complete_async(compile_template(SOURCE), model=replay(cassette, delay=0), context={"pic": red},
                                 journal=False)
    assert again.answer == first.answer and "I was given a 40×30 PNG." in again.answer
    blue = Image.new("RGB", (40, 30), "blue")
    with pytest.raises((ReplayDivergence, RunError), match=r"differs|diverge"):
        await complete_async(compile_template(SOURCE), model=replay(cassette, delay=0), context={"pic": blue},
                             journal=False)
