"""The offline model says what it was given: image sizes and table shapes, from the prompt and from tools."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from agentcell.engine import complete_async
from agentcell.template import compile_template

matplotlib.use("Agg")
from matplotlib.figure import Figure

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_offline_model_describes_a_figure_and_a_dataframe() -> None:
    fig = Figure(figsize=(6.4, 4.8), dpi=100)
    df = pd.DataFrame({"a": range(5000), "b": np.arange(5000) * 2, "c": ["x"] * 5000})
    result = await complete_async(compile_template("Plot {{ fig }} of\n{{ df }}\n[[answer]]"),
                                  model="offline:fast", context={"fig": fig, "df": df})
    assert "I was given a 640×480 PNG and a table of 5,000 rows × 3 columns (showing 20)." in result.answer


async def test_offline_model_describes_a_picture_a_tool_drew() -> None:
    def draw_chart() -> Image.Image:
        """Draw the chart."""
        return Image.new("RGB", (320, 240), "white")

    result = await complete_async(compile_template("Draw the chart and read it [[answer|use_tools]]"),
                                  model="offline:fast", tools=[draw_chart])
    assert "The tool `draw_chart` returned: “[image: a 320×240 PNG]”." in result.answer
    assert "I was given a 320×240 PNG." in result.answer


async def test_a_table_after_text_on_its_line_is_still_counted() -> None:
    df = pd.DataFrame({"a": range(120), "b": range(120)})
    result = await complete_async(compile_template("The marks: {{ df }}\n[[answer]]"), model="offline:fast",
                                  context={"df": df})
    assert "I was given a table of 120 rows × 2 columns (showing 20)." in result.answer
