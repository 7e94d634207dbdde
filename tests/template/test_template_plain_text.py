"""A text of literal pieces and `{{ name }}` regions renders without Jinja's machinery (`jinja.Plain`), exactly
as Jinja renders it: the same string, the same errors, the same media marks; anything else keeps Jinja."""

from __future__ import annotations

import contextlib
from typing import Any

import jinja2
import pytest

from agentcell.template import compile_template
from agentcell.template.jinja import CompiledText, make_environment
from agentcell.template.program import SlotStep
from agentcell.template.render import SlotRenderer


def first_text(source: str) -> CompiledText:
    step = compile_template(source).steps[0]
    assert isinstance(step, SlotStep) and isinstance(step.render, SlotRenderer)
    return step.render.turns[0].text


class Shouty:
    def __str__(self) -> str:
        return "LOUD"

    def __repr__(self) -> str:  # the test's id: the same in every pytest-xdist worker (no address)
        return "Shouty()"


class Broken:
    def __str__(self) -> str:
        raise ValueError("no text for you")


SOURCES = [
    "SHOUT: {{ item }} [[answer]]",
    "{{item}}{{ item }}\r\nline two\rline three {{ other }}\n [[answer]]",
    "{{ other }} then {{ item }}, {{ item }} again [[answer]]",
]
VALUES: list[Any] = ["w00001", 7, 2.5, None, True, "", "é ✓", Shouty(), ["a", 1], {"k": "v"}]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_plain_text_renders_as_jinja_does(source: str, value: Any) -> None:
    text = first_text(source)
    context = {"item": value, "other": "o"}
    ours = text.render(context)
    assert text.plain and text.plain[0] is not None  # it took the plain way
    jinja = make_environment().from_string(text.node.source).render(context)
    assert ours == jinja
    sizes: list[int] = []
    assert text.render(context, check=sizes.append) == jinja
    assert sum(sizes) == len(jinja)  # the render's budget counts every character, as with Jinja's pieces


def test_an_undefined_name_fails_as_jinja_says() -> None:
    text = first_text("SHOUT: {{ item }} [[answer]]")
    with pytest.raises(jinja2.UndefinedError, match="'item' is undefined"):
        text.render({})


def test_a_value_whose_str_raises_raises_that() -> None:
    text = first_text("SHOUT: {{ item }} [[answer]]")
    with pytest.raises(ValueError, match="no text for you"):
        text.render({"item": Broken()})


@pytest.mark.parametrize(
    "source",
    ["{{ item|upper }} [[answer]]", "{{ self }} [[answer]]", "{{ image }} [[answer]]", "{# c #}{{ x }} [[answer]]",
     "{{- item }} [[answer]]"],
)
def test_anything_else_keeps_jinja(source: str) -> None:
    text = first_text(source)
    with contextlib.suppress(Exception):  # only which way it took matters here
        text.render({"item": "x", "x": "y"})
    assert text.plain == [None]


def test_the_slot_renders_the_same_turns_and_shares_its_constant_options() -> None:
    step = compile_template("SHOUT: {{ item }} [[answer|temperature=0.5]]").steps[0]
    assert isinstance(step, SlotStep) and isinstance(step.render, SlotRenderer)
    first, second = step.render({"item": "a"}), step.render({"item": "b"})
    assert [t.text for t in first.turns] == ["SHOUT: a"] and [t.text for t in second.turns] == ["SHOUT: b"]
    assert first.options is second.options and first.options.temperature == 0.5


def test_computed_options_are_computed_per_render() -> None:
    step = compile_template("{{ item }} [[answer|temperature={{ t }}]]").steps[0]
    assert isinstance(step, SlotStep) and isinstance(step.render, SlotRenderer)
    first, second = step.render({"item": "a", "t": 0.1}), step.render({"item": "a", "t": 0.9})
    assert (first.options.temperature, second.options.temperature) == (0.1, 0.9)
