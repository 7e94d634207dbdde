"""The cheap check (`analysis.Analyzer`) answers only when the full one agrees.

Whenever the analyzer gives a text's variables, the full way (parse the whole text, generate and
compile its Python) must succeed and find the same names; otherwise the analyzer must say `None`.
"""

from __future__ import annotations

import contextlib
from typing import NoReturn

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from agentcell.errors import TemplateSyntaxError
from agentcell.template import Message, System, Text, compile_template, parse
from agentcell.template.analysis import MAX_DEPTH, Analyzer
from agentcell.template.jinja import _compile_tree, make_environment

FRAGMENTS = [
    "{{ x }}", "{{ y.z }}", "{{ x | upper }}", "{{ x | nosuch }}", "{{ x is odd }}", "{{ x is nosuch }}",
    "{{ self }}", "{{ loop.index }}", "{{ range(3) }}", "{{ caller() }}", "{{ a if b else c }}", "{{ (x }}",
    "{{ x[0:1] }}", "{{ {'k': v} }}", "{{ f(k=w) }}", "{{ 'lit' }}", "{{- x -}}", "{{ x + }}",
    "{% if x %}", "{% elif y %}", "{% else %}", "{% endif %}", "{% for i in xs %}", "{% for loop in xs %}",
    "{% for i in xs if i %}", "{% endfor %}", "{% with w = x %}", "{% endwith %}", "{% filter upper %}",
    "{% filter nosuch %}", "{% endfilter %}", "{% call f() %}", "{% call(caller) f() %}", "{% endcall %}",
    "{% set s = x %}", "{% set t %}", "{% endset %}", "{% macro m(a) %}", "{% endmacro %}", "{% break %}",
    "{% continue %}", "{% block b %}", "{% endblock %}", "{% autoescape true %}", "{% endautoescape %}",
    "{% raw %}{{ no }}{% endraw %}", "{# c #}", "{", "}", "{{", "<!-- -->", " ", "\n", "text", "i", "s", "{{ i }}",
    "{{ s }}", "{{ t }}", "{{ m(1) }}", "{{ w }}",
    "{% for a, b in xs.y %}", "{% if not x %}", "{%- if y.z -%}", "{% elif not i %}", "{{ x +}}", "{{ a }}",
    "{% for i in i %}", "{% if loop %}", "{% for i in range %}", "{%+ else +%}",
]  # fmt: skip
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)


def full_variables(text: Text) -> frozenset[str]:
    env = make_environment()
    return _compile_tree(env.parse(text.source), env)[1]


def texts_of(source: str) -> list[Text]:
    found: list[Text] = []
    for node in parse(source).nodes:
        if isinstance(node, Text):
            found.append(node)
        elif isinstance(node, System | Message):
            found.append(node.body)
    return found


@given(texts)
def test_the_analyzer_agrees_with_the_full_check(source: str) -> None:
    note(repr(source))
    with contextlib.suppress(TemplateSyntaxError):
        for text in texts_of(source):
            fast = Analyzer(make_environment()).variables(text)
            if fast is not None:
                assert fast == full_variables(text)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{{ x }} and {{ y.z | upper }}", {"x", "y"}),
        ("{% for i in xs %}{{ i }} {{ loop.index }} {{ q }}{% endfor %}", {"xs", "q"}),
        ("{{ self }}{{ range(2) }}", set()),
        ("{% if a %}{{ b }}{% elif c %}{% else %}{{ d }}{% endif %}", {"a", "b", "c", "d"}),
        ("{% for k, v in d.items %}{% if not v.ok %}{{ k }}{% elif q %}{{ loop.index }}{% endif %}"
         "{% else %}{{ v }}{% endfor %}", {"d", "q", "v"}),
        ("{%- for i in xs -%}{% for j in i.parts %}{{ j }}{{ i }}{% endfor %}{%+ endfor +%}", {"xs"}),
    ],
)
def test_the_analyzer_answers_common_texts(source: str, expected: set[str]) -> None:
    (text,) = texts_of(source)
    assert Analyzer(make_environment()).variables(text) == expected == full_variables(text)


@pytest.mark.parametrize(
    "source",
    [
        "{% set s = 1 %}{{ s }}",  # a declaration other chunks could read
        "{% macro m() %}{% endmacro %}{{ m() }}",
        "{% for i in xs %}{% break %}{% endfor %}",  # Python decides whether a break is legal
        "{{ x | nosuch }}",  # unknown filters fail when Jinja generates code
        "{{ x is nosuch }}",
        "{{ x + }}",  # the full way reports the error
        "{{ x +}}",  # `+}}` is not a closing Jinja knows (only `-}}`)
        "{% for i in xs %}{% elif y %}{% endfor %}",  # Jinja's parser says why
        "{% if x %}{% else %}{% else %}{% endif %}",
        "{{ a" + ".b" * MAX_DEPTH + " }}",  # too deep to be sure Python compiles it
        "{<!-- -->{ x }}",  # data that Jinja reads as a region
    ],
)
def test_the_analyzer_leaves_the_rest_to_the_full_check(source: str) -> None:
    for text in texts_of(source):
        assert Analyzer(make_environment()).variables(text) is None


def test_a_repeated_chunk_is_parsed_once() -> None:
    analyzer = Analyzer(make_environment())
    (text,) = texts_of("{{ question }} and again {{ question }}")
    assert analyzer.variables(text) == {"question"}
    assert list(analyzer.chunks) == ["{{ question }}"]


def test_python_is_compiled_at_the_first_render_once() -> None:
    template = compile_template("Hi {{ name|title }}\n[[a]]")
    (step,) = template.slot_steps
    text = step.render.turns[0].text  # type: ignore[attr-defined]
    assert text.compiled == []
    step.render({"name": "ada"})
    step.render({"name": "bob"})
    assert len(text.compiled) == 1
    assert step.render({"name": "cy"}).turns[0].text == "Hi Cy"


def test_a_plain_text_is_never_compiled() -> None:
    template = compile_template("Hi {{ name }}\n[[a]]")
    (step,) = template.slot_steps
    text = step.render.turns[0].text  # type: ignore[attr-defined]
    step.render({"name": "Ada"})
    assert step.render({"name": "Cy"}).turns[0].text == "Hi Cy"
    assert text.compiled == []  # literal pieces and `{{ name }}` regions render without Jinja (`jinja.Plain`)


class _NoParser(type(make_environment())):  # type: ignore[misc]
    def parse(self, *args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("Jinja's parser was called")


@pytest.mark.parametrize(
    "source",
    [
        "{% for item in items %}- {{ item.name }}: {{ item.description }}\n{% endfor %}",
        "{% if not urgent %}{{ a.b }}{% elif x %}y{% else %}z{% endif %}",
    ],
)
def test_plain_loops_and_conditions_are_read_without_jinjas_parser(source: str) -> None:
    """The commonest blocks need no parse (it dominated compiling them); the answer still matches."""
    env = _NoParser(undefined=make_environment().undefined)
    (text,) = texts_of(source)
    assert Analyzer(env).variables(text) == full_variables(text)


def test_a_plus_before_the_closing_braces_is_an_error_at_compile_time() -> None:
    with pytest.raises(TemplateSyntaxError, match="invalid Jinja"):
        compile_template("Hi {{ name +}}\n[[a]]")
