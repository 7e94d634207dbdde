"""Fuzzing: whatever the cell holds, compiling raises nothing but `TemplateSyntaxError`, and rendering
a compiled cell (with every variable defined) raises nothing but `TemplateRenderError`.

Profiles live in conftest.py (`HYPOTHESIS_PROFILE=ci|local`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from pydantic import BaseModel

from agentcell.actions import action
from agentcell.errors import TemplateRenderError, TemplateSyntaxError
from agentcell.template import ForStep, IfStep, SlotSpec, SlotStep, Step, TextStep, TogetherStep, compile_template
from agentcell.template.compiler import RESERVED

pytestmark = pytest.mark.slow  # a property search: 600 examples a test under the ci profile

FRAGMENTS = [
    "[[", "]]", "[", "]", "{{", "}}", "{%", "%}", "{#", "#}", "{", "}", "<", ">", "!", ":", "|", ",", "=", "'",
    '"', "\\", "-", " ", "\n", "\r\n", "\t", "a", "answer", "x", "json", "pick", "halt", "true", "3", "0.5",
    "use_tools", "max_iter", "tools", "model", "when", "required", "thinking",
    "<system>", "</system>", "<user>", "</user>", "<assistant>", "</assistant>", "<checkpoint>", "</checkpoint>",
    "<checkpoint/>", "<obliviate>", "<!--", "-->", "<question>",
    "[[a]]", "[[!b]]", "[[json:]]", "[[text:c]]", "[[pick:p|u, v]]", "[[halt:h|when=false]]", "[[d|use_tools]]",
    "[[e|max_iter={{ n }}]]", "[[f|model='m']]",
    "{{ x }}", "{{ a }}", "{{ x | upper }}", "{{ x[0] }}", "{{ x.y }}", "{{ 1 / n }}", "{{ (x }}", "{{ '}}' }}",
    "{% if x %}", "{% else %}", "{% endif %}", "{% for i in x %}", "{% endfor %}", "{% set s = 1 %}",
    "{% raw %}", "{% endraw %}", "{# c #}", "{% include 'z' %}", "{% break %}",
    # struckdown 0.18's whole language: quantifiers, types, constraints, actions, tags
    "*", "+", "?", "{2}", "{1,3}", "{2,}", "@", "[[int*:q]]", "[[ideas{3}]]", "[[!pick{1,2}:t|u, v]]",
    "[[extract+:e]]", "[[date:d|min=\"2024-01-01\"]]", "[[datetime:w]]", "[[score:s|lo, hi]]", "[[decide:k]]",
    "[[Person:p]]", "[[int:n|min=-1, max=9]]", '[[g|pattern="^a"]]', "[[t|seed=1, thinking=off, block]]",
    "[[@set:s|1]]", "[[@set|x]]", "[[@timestamp:]]", '[[@fetch:f|url="u"]]', "[[@lookup:l|x, n=2]]",
    "<together>", "</together>", "<header>", "</header>", "<header local>", "<system local>", "<system replace>",
    "<system global append>", '<include src="nope.sd"/>', '{% include "nope.sd" %}', "{% elif x %}",
    "{% for k, v in x %}", "{{ loop.index }}", "min=1", 'pattern="[a]"', '"light {{ x }}"', "<checkpoint>x</checkpoint>",
]  # fmt: skip

templates = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


class Person(BaseModel):
    name: str


@action
def lookup(x: object = None, n: int = 1) -> str:
    return "looked up"


def context_for(template: Any) -> dict[str, object]:
    """A value for every variable; values of several shapes, so expressions get exercised."""
    shapes: list[object] = ["text", 0, ["a", "b"], {"y": 1}, None, 2.5]
    values = {name: shapes[len(name) % len(shapes)] for name in sorted(template.variables)}
    for need in template.needs:  # notebook classes and custom actions the cell names
        values[need.name] = Person if need.what == "class" else lookup
    return values


def walk(steps: Sequence[Step], context: dict[str, object]) -> None:
    """Render every step as the engine would reach it (each branch, one pass of each loop)."""
    for step in steps:
        with contextlib.suppress(TemplateRenderError):
            match step:
                case SlotStep():
                    step.render(context)
                    context[step.slot.name] = "answer"
                case TextStep():
                    step.render(context)
                case IfStep():
                    for branch in step.branches:
                        if branch.test is not None:
                            branch.test(context)
                        walk(branch.steps, context)
                case ForStep():
                    for binding in step.items(context)[:2]:
                        walk(step.steps, {**context, **binding, "loop": None})
                    walk(step.empty, context)
                case TogetherStep():
                    walk(step.steps, context)


def compile_and_render(source: str) -> None:
    note(repr(source))
    try:
        template = compile_template(source, base_dir="/nonexistent")
    except TemplateSyntaxError:
        return
    context = context_for(template)
    template.check_context(context)
    walk(template.steps, context)


@given(st.text())
def test_arbitrary_text(source: str) -> None:
    compile_and_render(source)


@given(templates)
def test_generated_templates(source: str) -> None:
    compile_and_render(source)


SEEDS = [
    "<system>You answer questions.</system>\nIs this an attack?\n<question>{{ question }}</question>\n"
    "[[halt:injection]]\n# The question\n{{ question }}\n[[!answer|use_tools=true, max_iter=3]]\n",
    "Tell me about {{ topic }}.\n[[fact]]\n<checkpoint>Two</checkpoint>\nRepeat: {{ fact }}\n[[json:again]]",
    "{% for q in questions %}- {{ q | title }}\n{% endfor %}<user>hi</user><assistant>yo</assistant>"
    "[[pick:mood|happy, 'very sad', {{ extra }}]]<!-- [[hidden]] -->{% raw %}[[x]]{% endraw %}",
    "<header>Essay: {{ essay }}</header><system local>Be kind.</system>[[@set:t|topic]]\n"
    "{% for item in items %}About {{ item }} ({{ loop.index }}) [[int{1,3}:n|min=0]]{% endfor %}\n"
    "{% if n %}<together>A [[extract+:q]] B [[pick?:p|x, 'y z']]</together>{% else %}[[date:d]]{% endif %}\n"
    "<checkpoint>\n[[Person:who]] [[score:s|low, high]]",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A seed template with a few random cuts, insertions and duplications."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 12)))
        edit = draw(st.sampled_from(["cut", "insert", "duplicate"]))
        if edit == "cut":
            text = text[:start] + text[end:]
        elif edit == "insert":
            text = text[:start] + draw(st.sampled_from(FRAGMENTS)) + text[start:]
        else:
            text = text[:end] + text[start:end] + text[end:]
    return text


@given(mutated())
def test_mutated_templates(source: str) -> None:
    compile_and_render(source)


# A Jinja keyword is no slot name ({{ in }} could not read it back): the compiler refuses it, tested elsewhere.
names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda name: name not in RESERVED)
types = st.sampled_from(["text", "json", "bool", "int", "number", "halt"])


@given(st.lists(st.tuples(st.booleans(), types, names, st.integers(1, 9), st.sampled_from(["", " "])), max_size=8))
def test_written_slots_compile_to_their_specs(slots: list[tuple[bool, str, str, int, str]]) -> None:
    seen: set[str] = set()
    unique = [slot for slot in slots if not (slot[2] in seen or seen.add(slot[2]))]
    source = "".join(
        f"Question {index}?\n[[{pad}{'!' if bang else ''}{kind}{pad}:{pad}{name}{pad}|{pad}max_iter={n}, use_tools]]\n"
        for index, (bang, kind, name, n, pad) in enumerate(unique)
    )
    template = compile_template(source)
    expected = tuple(
        SlotSpec(name=name, type=kind, required=bang, line=2 * index + 2, col=1)  # type: ignore[arg-type]
        for index, (bang, kind, name, _, _) in enumerate(unique)
    ) or (SlotSpec(name="answer", type="text", implicit=True),)
    assert template.slots == expected
    for step, (_, _, _, n, _) in zip(template.steps, unique, strict=False):
        assert isinstance(step, SlotStep)
        assert step.render({}).options.max_iter == n


quantifiers = st.sampled_from([("*", (0, None)), ("+", (1, None)), ("?", (0, 1)), ("{2}", (2, 2)), ("{1,4}", (1, 4)),
                               ("{3,}", (3, None))])  # fmt: skip
list_types = st.sampled_from(["text", "json", "bool", "int", "number", "extract", "date", "record"])


list_names = names


@given(st.lists(st.tuples(list_types, quantifiers, list_names, st.sampled_from(["", " "])), max_size=6))
def test_written_list_slots_compile_to_their_quantifiers(slots: list[tuple[str, Any, str, str]]) -> None:
    seen: set[str] = set()
    unique = [slot for slot in slots if not (slot[2] in seen or seen.add(slot[2]))]
    source = "".join(f"Q{i}? [[{pad}{kind}{pad}{q}{pad}:{pad}{name}{pad}]]\n"
                     for i, (kind, (q, _), name, pad) in enumerate(unique))  # fmt: skip
    template = compile_template(source)
    got = [(spec.name, spec.type, spec.quantifier) for spec in template.slots]
    assert got == [(name, kind, bounds) for kind, (_, bounds), name, _ in unique] or not unique
