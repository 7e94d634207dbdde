"""`{{ fig }}`, `{{ img }}` and `{{ df }}` in a slot's prompt: the user message a model receives."""

from __future__ import annotations

import io
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest
from PIL import Image
from pydantic_ai.messages import ModelRequest, UserPromptPart

from agentcell.engine import stream
from agentcell.template import compile_template
from tests.engine.conftest import Script

matplotlib.use("Agg")
from matplotlib.figure import Figure

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _user_content(script: Script) -> Any:
    [request] = script.requests
    first = request.messages[-1]
    assert isinstance(first, ModelRequest)
    [part] = [p for p in first.parts if isinstance(p, UserPromptPart)]
    return part.content


async def _run(source: str, **context: Any) -> Script:
    script = Script(["ok"])
    events = [e async for e in stream(compile_template(source), model=script.model, context=context)]
    assert events[-1].kind == "processing_complete"
    assert events[-1].result.status == "completed", events[-1].result.error
    return script


async def test_figure_and_image_arrive_as_parts_in_template_order() -> None:
    fig = Figure(figsize=(6.4, 4.8), dpi=100)
    fig.add_subplot().plot([1, 2, 3])
    img = Image.new("RGB", (32, 16), "red")
    script = await _run("Look: {{ fig }} and {{ img }}\n[[answer]]", fig=fig, img=img)
    content = _user_content(script)
    assert [type(c).__name__ for c in content] == ["str", "BinaryContent", "str", "BinaryContent"]
    assert content[0] == "Look: " and content[2] == " and "
    assert content[1].media_type == "image/png" and content[1].data.startswith(b"\x89PNG")
    assert content[3].media_type == "image/png"
    assert Image.open(io.BytesIO(content[1].data)).size == (640, 480)
    assert Image.open(io.BytesIO(content[3].data)).size == (32, 16)


async def test_a_5000_row_dataframe_is_a_markdown_table_of_20_rows() -> None:
    df = pd.DataFrame({"a": range(5000), "b": [f"x{i}" for i in range(5000)], "c": np.arange(5000) / 4})
    content = _user_content(await _run("Data:\n{{ df }}\n[[answer]]", df=df))
    assert isinstance(content, str)
    lines = content.splitlines()
    assert "DataFrame: 5,000 rows × 3 columns" in lines
    assert "| a | b | c |" in lines
    assert "| 19 | x19 | 4.75 |" in lines and "| 20 | x20 | 5.0 |" not in lines
    assert lines[-1] == "… 4,980 more rows (showing the first 20)"


async def test_table_helper_picks_rows_and_columns() -> None:
    df = pd.DataFrame({"a": range(100), "b": range(100), "c": range(100)})
    content = _user_content(await _run('{{ table(df, rows=3, cols=["c", "a"], dtypes=True) }}\n[[answer]]', df=df))
    assert content.splitlines()[2:] == [
        "| c | a |",
        "|---|---|",
        "| *int64* | *int64* |",
        "| 0 | 0 |",
        "| 1 | 1 |",
        "| 2 | 2 |",
        "… 97 more rows (showing the first 3)",
        "… 1 more columns (showing 2)",
    ]


async def test_plain_values_are_still_their_str() -> None:
    content = _user_content(await _run("n={{ n }} s={{ s }} l={{ l }}\n[[answer]]", n=3, s="x", l=[1, 2]))
    assert content == "n=3 s=x l=[1, 2]"


async def test_to_openai_gives_the_standard_content_part_list() -> None:
    img = Image.new("RGB", (4, 2), "red")
    script = Script(["ok"])
    from agentcell.engine import complete_async

    result = await complete_async(compile_template("See {{ img }} now\n[[answer]]"), model=script.model,
                                  context={"img": img})
    [user, answer] = result.to_openai()
    assert answer == {"role": "assistant", "content": "ok"}
    assert user["role"] == "user"
    text1, image, text2 = user["content"]
    assert text1 == {"type": "text", "text": "See "} and text2 == {"type": "text", "text": " now"}
    assert image["type"] == "image_url"
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    import base64

    assert Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size == (4, 2)
