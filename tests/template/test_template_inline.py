"""Which slot prompts render on the event loop (`template/inline.py`) and which keep the worker thread.

A plain prompt (literal text and `{{ name }}` bound to builtin scalars) runs no user code, so the
engine skips the thread hop; anything that could run user code, loop, or grow large keeps it.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import pytest

from agentcell.engine import start_run
from agentcell.template import compile_template
from agentcell.template.inline import INLINE_CHARS, INLINE_REGIONS
from agentcell.template.program import SlotStep
from agentcell.template.render import SlotRenderer
from tests.engine.conftest import Script


def renderer(source: str) -> SlotRenderer:
    step = compile_template(source).steps[0]
    assert isinstance(step, SlotStep) and isinstance(step.render, SlotRenderer)
    return step.render


@pytest.mark.parametrize(
    "source",
    [
        "SHOUT: {{ item }} [[answer]]",
        "no jinja at all [[answer]]",
        "<system>You are {{ role }}.</system>\n{{ a }} and {{ b }} then {{a}} [[answer]]",
        "<header>{{ topic }}</header>\nQ: {{ q }} [[pick:answer|yes,no]]",
    ],
)
def test_plain_prompts_are_marked(source: str) -> None:
    render = renderer(source)
    render.renders_inline({})
    assert render.plain != [None]


@pytest.mark.parametrize(
    "source",
    [
        "{{ item|upper }} [[answer]]",
        "{{ item.name }} [[answer]]",
        "{{ item() }} [[answer]]",
        "{{ item[0] }} [[answer]]",
        "{{ a ~ b }} [[answer]]",
        "{{- item }} [[answer]]",
        "{% if x %}yes{% endif %} [[answer]]",
        "{% set y = 1 %}{{ y }} [[answer]]",
        "{# note #}{{ x }} [[answer]]",
        "{{ range }} [[answer]]",
        "<system>{{ role|title }}</system>\n{{ item }} [[answer]]",
        "{{ item }} [[answer|temperature={{ t }}]]",
        "{{ item }} [[pick:answer|{{ moods }}]]",
        "{{ x }} " * (INLINE_REGIONS + 1) + "[[answer]]",
    ],
)
def test_prompts_that_could_run_code_or_grow_are_not(source: str) -> None:
    render = renderer(source)
    render.renders_inline({})
    assert render.plain == [None]


class Loud(str):
    def __str__(self) -> str:  # user code Jinja would run
        return "LOUD"


@pytest.mark.parametrize(
    ("value", "inline"),
    [
        ("word", True),
        (3, True),
        (2.5, True),
        (True, True),
        (None, True),
        (Loud("x"), False),
        (["a"], False),
        (b"bytes", False),
        (object(), False),
        ("x" * (INLINE_CHARS + 1), False),
    ],
)
def test_only_builtin_scalars_of_bounded_size_render_inline(value: object, inline: bool) -> None:
    assert renderer("SHOUT: {{ item }} [[answer]]").renders_inline({"item": value}) is inline


def test_a_missing_name_keeps_the_thread_path_and_its_error() -> None:
    assert renderer("{{ item }} [[answer]]").renders_inline({}) is False


def test_repeated_references_count_toward_the_size() -> None:
    render = renderer("{{ x }} {{ x }} {{ x }} [[answer]]")
    third = INLINE_CHARS // 3
    assert render.renders_inline({"x": "y" * (third - 10)})
    assert not render.renders_inline({"x": "y" * (third + 10)})


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("source", "context", "threads", "prompt"),
    [
        ("SHOUT: {{ item }} [[answer]]", {"item": "hi"}, 0, "SHOUT: hi"),
        ("SHOUT: {{ item|upper }} [[answer]]", {"item": "hi"}, 1, "SHOUT: HI"),
        ("SHOUT: {{ item }} [[answer]]", {"item": Loud("hi")}, 1, "SHOUT: LOUD"),
    ],
)
async def test_the_engine_skips_the_render_thread_only_for_plain_prompts(
    monkeypatch: pytest.MonkeyPatch, source: str, context: dict[str, Any], threads: int, prompt: str
) -> None:
    calls: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(func)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    result = await start_run(source, model=Script(["ok"]).model, context=context, journal=False).wait()
    assert result.status == "completed"
    assert sum(getattr(f, "__name__", "") == "render" for f in calls) == threads
    assert result.messages[0].parts[-1].content == prompt  # type: ignore[union-attr]
