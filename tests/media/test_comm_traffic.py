"""A 4 MB PNG in a 200-streamed-token run: the widget's comm grows by the image's thumbnail, once."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from pydantic_ai.models.function import FunctionModel

from agentcell.frontends import handle as handle_module
from agentcell.frontends.launch import LaunchSpec
from agentcell.media.convert import prompt_value
from agentcell.media.parts import MediaPart
from agentcell.options import RunOptions
from agentcell.template import compile_template

pytestmark = pytest.mark.anyio

TOKENS = 200


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def four_mb_png() -> bytes:
    noise = np.random.default_rng(42).integers(0, 256, size=(1160, 1160, 3), dtype=np.uint8)  # incompressible
    part = prompt_value(noise)
    assert isinstance(part, MediaPart)
    return part.data


async def _traffic(source: str, context: dict[str, Any]) -> tuple[list[str], str, list[Any]]:
    """The run's custom messages (as JSON), its `final` trait (as JSON), and what the model received."""
    received: list[Any] = []

    async def fn(messages: list[Any], info: Any) -> Any:
        received.append(messages)
        for i in range(TOKENS):
            yield f"t{i} "

    sent: list[str] = []
    options = RunOptions(model=FunctionModel(stream_function=fn), journal=False, context=context)
    handle = handle_module.launch(LaunchSpec(template=compile_template(source), options=options))
    assert handle.widget is not None
    handle.widget.send = lambda content, buffers=None: sent.append(json.dumps(content))  # type: ignore[method-assign]
    await handle
    return sent, json.dumps(handle.widget.final), received


async def test_a_4mb_png_costs_the_comm_one_thumbnail_not_one_per_message() -> None:
    png = four_mb_png()
    assert len(png) > 4_000_000
    plain_sent, plain_final, _ = await _traffic("Look: {{ img }}\n[[answer]]", {"img": "no picture"})
    sent, final, received = await _traffic("Look: {{ img }}\n[[answer]]", {"img": png})
    # The model got the whole image…
    assert any(getattr(c, "data", None) == png for m in received[0] for p in m.parts for c in getattr(p, "content", ()))
    # …the browser got a thumbnail: in exactly one live message, and once in the saved state.
    [event] = [e for m in sent for e in json.loads(m).get("events", []) if e.get("kind") == "media_added"]
    thumb = event["thumb"]
    assert thumb.startswith("data:image/jpeg;base64,") and len(thumb) < 100_000
    assert sum(m.count(thumb) for m in sent) == 1 and final.count(thumb) == 1
    assert len(sent) > 1  # the tokens came in several batches; none of the others holds the image
    live_growth = sum(map(len, sent)) - sum(map(len, plain_sent))
    final_growth = len(final) - len(plain_final)
    assert len(thumb) <= live_growth < len(thumb) + 3_000  # the thumbnail plus its event and the teaching refs
    assert len(thumb) <= final_growth < len(thumb) + 3_000
    assert png[:1000].hex() not in "".join(sent) + final
    print(f"\nimage {len(png):,} B; thumbnail {len(thumb):,} chars; live comm +{live_growth:,} chars over "
          f"{len(sent)} messages; final trait +{final_growth:,} chars")
