"""Bad input and limits: one clear sentence before any request, naming the value and the slot."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.profiles import ModelProfile

from agentcell.engine import complete_async
from agentcell.errors import MediaError, RunError
from agentcell.media import image
from agentcell.media.convert import prompt_value
from agentcell.media.limits import check_url
from agentcell.media.parts import MediaPart
from agentcell.media.tables import table_markdown
from agentcell.media.thumbs import thumbnail
from agentcell.template import compile_template

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _counting_model(profile: ModelProfile | None = None) -> tuple[FunctionModel, list[Any]]:
    calls: list[Any] = []

    async def fn(messages: list[Any], info: Any) -> Any:
        calls.append(messages)
        yield "ok"

    return FunctionModel(stream_function=fn, model_name="blind", profile=profile), calls


async def test_a_model_that_cannot_see_is_one_sentence_and_no_request() -> None:
    model, calls = _counting_model(ModelProfile(supports_image_input=False))
    img = Image.new("RGB", (640, 480))
    with pytest.raises(RunError) as caught:
        await complete_async(compile_template("Look {{ photo }}\n[[answer]]"), model=model, context={"photo": img})
    assert calls == []
    assert str(caught.value) == (
        "the prompt of [[answer]] holds {{ photo }}, a 640×480 PNG, and the model 'blind' does not accept images; "
        "use a model that does, leave {{ photo }} out, or run with --describe-media to send a text description instead"
    )


async def test_an_image_over_the_byte_cap_is_refused_before_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCELL_MAX_IMAGE_BYTES", "1000")
    model, calls = _counting_model()
    noise = np.random.default_rng(1).integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
    with pytest.raises(RunError, match=r"cannot render the prompt of \[\[answer\]\]: noise is a 64×64 PNG of "
                                       r"0\.0 MB; the limit is 0\.0 MB per image \(AGENTCELL_MAX_IMAGE_BYTES\)"):
        await complete_async(compile_template("Look {{ noise }}\n[[answer]]"), model=model, context={"noise": noise})
    assert calls == []


async def test_images_over_the_request_cap_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCELL_MAX_REQUEST_BYTES", "20000")
    model, calls = _counting_model()
    rng = np.random.default_rng(2)
    a, b = (rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8) for _ in range(2))
    with pytest.raises(RunError, match=r"the prompt of \[\[answer\]\] carries 0\.0 MB of images and files; the limit "
                                       r"is 0\.0 MB per request"):
        await complete_async(compile_template("{{ a }} {{ b }}\n[[answer]]"), model=model, context={"a": a, "b": b})
    assert calls == []


def test_a_file_that_is_not_what_its_extension_says(tmp_path: Path) -> None:
    fake = tmp_path / "photo.png"
    fake.write_bytes(b"%PDF-1.7\n...")
    with pytest.raises(MediaError, match=r"^photo\.png is not a PNG image: its bytes are a PDF document$"):
        image(str(fake))
    text = tmp_path / "chart.jpg"
    text.write_text("hello")
    with pytest.raises(MediaError, match=r"^chart\.jpg is not a JPEG image: its bytes are text$"):
        image(str(text))


@pytest.mark.parametrize("url", ["http://127.0.0.1/x.png", "http://10.0.0.7/a.png", "http://localhost:8888/files/a.png",
                                 "http://[::1]/a.png", "http://169.254.169.254/latest/meta-data", "http://printer.local/a"])
def test_a_url_to_a_private_address_is_refused_unless_allowed(url: str) -> None:
    with pytest.raises(MediaError, match="points to a private address"):
        check_url(url)
    assert check_url(url, allow_private=True) == url


def test_a_public_url_and_other_schemes() -> None:
    assert check_url("https://example.org/cat.jpg") == "https://example.org/cat.jpg"
    with pytest.raises(MediaError, match="is not an http"):
        check_url("file:///etc/passwd")


def test_a_100_megapixel_image_gets_a_small_thumbnail() -> None:
    big = np.zeros((10_000, 10_000), dtype=np.uint8)  # 100 megapixels, grey
    part = prompt_value(big)
    assert isinstance(part, MediaPart) and (part.width, part.height) == (10_000, 10_000)
    thumb = thumbnail(part)
    assert thumb.startswith("data:image/")
    import base64
    import io

    small = Image.open(io.BytesIO(base64.b64decode(thumb.split(",", 1)[1])))
    assert max(small.size) <= 256


def test_ten_million_rows_format_only_the_shown_rows() -> None:
    df = pd.DataFrame({"a": np.arange(10_000_000), "b": np.zeros(10_000_000)})
    started = time.perf_counter()
    text = table_markdown(df)
    elapsed = time.perf_counter() - started
    assert text.splitlines()[-1] == "… 9,999,980 more rows (showing the first 20)"
    assert len(text) < 2_000
    print(f"\n10,000,000-row table rendered in {elapsed * 1000:.1f} ms")


async def test_describe_media_sends_a_description_to_a_model_that_cannot_see() -> None:
    model, calls = _counting_model(ModelProfile(supports_image_input=False))
    img = Image.new("RGB", (640, 480))
    result = await complete_async(compile_template("Look {{ photo }}\n[[answer]]"), model=model,
                                  context={"photo": img}, describe_media="offline:fast")
    assert result.answer == "ok"
    [messages] = calls
    content = messages[-1].parts[-1].content
    assert not any(getattr(c, "data", None) for c in content)  # no image reached the blind model
    text = "".join(c if isinstance(c, str) else str(getattr(c, "content", c)) for c in content)
    assert "I was given a 640×480 PNG." in text  # the offline describer's words, in the image's place
