"""Fuzzing: whatever the cell holds, compiling raises nothing but `TemplateSyntaxError`, and rendering
a compiled cell (with every variable defined) raises nothing but `TemplateRenderError`.

Profiles live in conftest.py (`HYPOTHESIS_PROFILE=ci|local`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, note
from hypothesis import strategies as st

from agentcell.errors import TemplateRenderError, TemplateSyntaxError
from agentcell.template import SlotSpec, SlotStep, compile_template

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
]  # fmt: skip

templates = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


def context_for(template: Any) -> dict[str, object]:
    """A value for every variable; values of several shapes, so expressions get exercised."""
    shapes: list[object] = ["text", 0, ["a", "b"], {"y": 1}, None, 2.5]
    return {name: shapes[len(name) % len(shapes)] for name in sorted(template.variables)}


def compile_and_render(source: str) -> None:
    note(repr(source))
    try:
        template = compile_template(source)
    except TemplateSyntaxError:
        return
    context = context_for(template)
    template.check_context(context)
    for step in template.steps:
        if isinstance(step, SlotStep):
            with contextlib.suppress(TemplateRenderError):
                step.render(context)
            context[step.slot.name] = "answer"


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


names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
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
