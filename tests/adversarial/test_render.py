"""Slot prompts render off the loop, bounded in size and time.

Before: a render ran on the kernel's loop: 150,000 `{{ x }}` blocked it for 51 s and
`{{ lipsum(100000) }}` for 19 s, with Stop (and every other cell) waiting; a lone surrogate in a
rendered pick choice failed the slot with pydantic's `SchemaError`; `{<!-- -->{ x }}` was literal
text alone but evaluated as `{{ x }}` when other Jinja was in the same text. After: the render runs
in a worker thread Stop abandons at once; past `RENDER_CHARS` characters or `RENDER_SECONDS` it ends
in `TemplateRenderError`; choices are valid UTF-8; the comment join stays literal.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentcell.engine import execute, start_run
from agentcell.template import compile_template, render_limits
from agentcell.template.render_limits import RENDER_CHARS
from tests.engine.conftest import Final, Script

pytestmark = pytest.mark.anyio


async def test_a_huge_render_ends_in_a_render_error() -> None:
    tpl = "{% for i in range(100000) %}{% for j in range(1000) %}xxxxxxxxxx{% endfor %}{% endfor %}\n[[a]]"
    result = await start_run(tpl, model=Script(["never"]).model, journal=False).wait()
    assert result.status == "failed"
    assert result.error == (
        "TemplateRenderError: <cell>, line 1, column 1: cannot render the prompt of [[a]]: the prompt grew past "
        f"{RENDER_CHARS:,} characters; render less (a loop over too much, a huge value?)"
    )


async def test_a_slow_render_ends_at_the_time_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_limits, "RENDER_SECONDS", 0.05)
    tpl = '{% for i in range(100000) %}{% for j in range(100000) %}{{ "" }}{% endfor %}{% endfor %}\n[[a]]'
    result = await start_run(tpl, model=Script(["never"]).model, journal=False).wait()
    assert result.status == "failed"
    assert result.error is not None and result.error.endswith(
        "cannot render the prompt of [[a]]: rendering took longer than 0.05 s; render less or simplify the expressions"
    )


async def test_one_expression_that_never_returns_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute, "RENDER_SECONDS", 0.05)
    monkeypatch.setattr(execute, "RENDER_GRACE_S", 0.0)
    release = threading.Event()

    def stuck() -> str:
        release.wait(10)
        return "late"

    result = await start_run("{{ stuck() }}\n[[a]]", model=Script(["never"]).model, context={"stuck": stuck}, journal=False).wait()
    release.set()
    assert result.status == "failed"
    assert result.error == (
        "TemplateRenderError: cannot render the prompt of [[a]]: rendering took longer than 0.05 s; "
        "render less or simplify the expressions"
    )


async def test_stop_acts_while_a_slot_renders() -> None:
    entered, release = threading.Event(), threading.Event()

    def slow() -> str:
        entered.set()
        release.wait(10)
        return "late"

    run = start_run("{{ slow() }}\n[[a]]", model=Script(["never"]).model, context={"slow": slow}, journal=False)
    while not entered.is_set():
        await asyncio.sleep(0.01)
    run.cancel()
    result = await run.wait()  # ends while `slow` still blocks its thread: the loop was never held
    assert not release.is_set() and result.status == "stopped"
    release.set()


async def test_a_lone_surrogate_in_a_rendered_pick_choice() -> None:
    tpl = "Pick one.\n[[pick:c|{{ options }}]]"
    result = await start_run(tpl, model=Script([Final("b\ufffd")]).model, context={"options": ["a", "b\ud83d"]}, journal=False).wait()
    assert (result.status, result.answer) == ("completed", "b\ufffd")


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("{<!-- -->{ x }}", "{{ x }}"),
        ("{{ y }} {<!-- -->{ x }}", "Y {{ x }}"),
        ("{{ y }} {<!-- -->% if x %}", "Y {% if x %}"),
        ("{{ y }} a<!-- c -->b", "Y ab"),
    ],
    ids=["alone", "beside-jinja", "block-opener", "ordinary-comment"],
)
def test_a_comment_never_joins_braces_into_jinja(source: str, text: str) -> None:
    step = compile_template(f"{source}\n[[a]]").steps[0]
    assert step.render({"x": "X", "y": "Y"}).turns[0].text == text  # type: ignore[union-attr]
