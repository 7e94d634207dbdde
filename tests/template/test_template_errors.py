"""Every common mistake gives one `TemplateSyntaxError`, pinned here exactly: message, line, column, caret."""

from __future__ import annotations

import pytest

from agentcell.errors import TemplateSyntaxError, UndefinedVariableError
from agentcell.template import compile_template

DEEP = "{% if a %}" * 17 + "x" + "{% endif %}" * 17
CASES = [
    (
        "unclosed-slot",
        "Question?\n[[answer",
        "<cell>, line 2, column 1: unclosed slot: '[[' has no matching ']]'\n    [[answer\n    ^",
    ),
    (
        "close-without-open",
        "Question?\n[answer]]",
        "<cell>, line 2, column 8: ']]' without a matching '[['\n    [answer]]\n           ^",
    ),
    (
        "unknown-type-typo",
        "Plan it.\n[[jsno:plan]]",
        "<cell>, line 2, column 3: unknown slot type 'jsno'; did you mean 'json'? (known types: text, respond, "
        "default, json, bool, boolean, int, number, pick, halt, extract, think, speak, poem, decide, score, record, "
        "date, datetime, time, duration, date_rule; a notebook class is named with a capital, e.g. [[Person:p]])"
        "\n    [[jsno:plan]]\n      ^",
    ),
    (
        "unknown-type-synonym",
        "[[integer:n]]",
        "<cell>, line 1, column 3: unknown slot type 'integer'; did you mean 'int'? (known types: text, respond, "
        "default, json, bool, boolean, int, number, pick, halt, extract, think, speak, poem, decide, score, record, "
        "date, datetime, time, duration, date_rule; a notebook class is named with a capital, e.g. [[Person:p]])"
        "\n    [[integer:n]]\n      ^",
    ),
    (
        "unknown-option-typo",
        "[[answer|max_iters=3]]",
        "<cell>, line 1, column 10: unknown option 'max_iters'; did you mean 'max_iter'? (known options: "
        "use_tools, max_iter, max_calls, tools, model, temperature, max_tokens, thinking, when, required, retries, output_mode, "
        "min, max, "
        "ge, le, gt, lt, min_length, max_length, minlength, maxlength, pattern, regex, seed, mode, block)\n"
        "    [[answer|max_iters=3]]\n             ^",
    ),
    (
        "option-without-value",
        "[[answer|use_tools, max_iter=]]",
        "<cell>, line 1, column 21: option 'max_iter' has no value after '='\n"
        "    [[answer|use_tools, max_iter=]]\n                        ^",
    ),
    (
        "option-needs-value",
        "[[answer|max_iter]]",
        "<cell>, line 1, column 10: option 'max_iter' needs a value, e.g. max_iter=3\n"
        "    [[answer|max_iter]]\n             ^",
    ),
    (
        "bad-option-type",
        "[[answer|use_tools=true, max_iter=abc]]",
        "<cell>, line 1, column 26: option 'max_iter' expects a whole number of at least 1, got 'abc'\n"
        "    [[answer|use_tools=true, max_iter=abc]]\n                             ^",
    ),
    (
        "bad-bool",
        "[[answer|use_tools=yes]]",
        "<cell>, line 1, column 10: option 'use_tools' expects true or false, got 'yes'\n"
        "    [[answer|use_tools=yes]]\n             ^",
    ),
    (
        "duplicate-slot",
        "One [[a]]\nTwo [[a]]",
        "<cell>, line 2, column 5: duplicate slot name 'a': [[a]] is already at line 1, column 5 in this segment "
        "(a name may be used again only after a <checkpoint>)\n"
        "    Two [[a]]\n        ^",
    ),
    (
        "duplicate-option",
        "[[a|model=x, model=y]]",
        "<cell>, line 1, column 14: option 'model' is given twice\n    [[a|model=x, model=y]]\n                 ^",
    ),
    (
        "slot-inside-with",
        "{% with x = 1 %}\nExplain. [[a]]\n{% endwith %}",
        "<cell>, line 2, column 10: slots cannot appear inside {% with %} … {% endwith %}: the block opened at "
        "line 1, column 1 is still open here\n    Explain. [[a]]\n             ^",
    ),
    (
        "checkpoint-inside-if",
        "{% if x %}A [[a]]<checkpoint>B [[b]]{% endif %}",
        "<cell>, line 1, column 18: <checkpoint> cannot be inside an {% if %} block that holds slots\n"
        "    {% if x %}A [[a]]<checkpoint>B [[b]]{% endif %}\n                     ^",
    ),
    (
        "unclosed-system",
        "<system>Be brief.\nQ?",
        "<cell>, line 1, column 1: unclosed <system>: no matching </system>\n    <system>Be brief.\n    ^",
    ),
    (
        "slot-inside-system",
        "<system>Be brief.\n[[a]]",
        "<cell>, line 2, column 1: slots cannot appear inside <system> … </system>: the tag opened at line 1, "
        "column 1\n    [[a]]\n    ^",
    ),
    (
        "stray-close-system",
        "Be brief.</system>\n[[a]]",
        "<cell>, line 1, column 10: stray </system>: there is no open <system>\n    Be brief.</system>\n             ^",
    ),
    (
        "unclosed-variable",
        "Hi {{ name\n[[a]]",
        "<cell>, line 1, column 4: unclosed '{{': no matching '}}'\n    Hi {{ name\n       ^",
    ),
    (
        "jinja-syntax",
        "Intro\nHi {{ name + }}!\n[[a]]",
        "<cell>, line 2, column 4: invalid Jinja: unexpected 'end of print statement'\n    Hi {{ name + }}!\n       ^",
    ),
    (
        "jinja-unknown-tag",
        "a\n\n{% frobnicate %}\n[[a]]",
        "<cell>, line 3, column 1: invalid Jinja: Encountered unknown tag 'frobnicate'.\n    {% frobnicate %}\n    ^",
    ),
    (
        "jinja-in-option",
        "[[a|max_iter={{ 1 + }}]]",
        "<cell>, line 1, column 14: invalid Jinja: unexpected 'end of print statement'\n"
        "    [[a|max_iter={{ 1 + }}]]\n                 ^",
    ),
    (
        "pick-without-choices",
        "How do they feel?\n[[pick:mood]]",
        "<cell>, line 2, column 1: [[pick:mood]] needs its choices after '|', e.g. [[pick:mood|happy, sad]]\n"
        "    [[pick:mood]]\n    ^",
    ),
    (
        "empty-slot",
        "Q [[ ]]",
        "<cell>, line 1, column 3: empty slot: write a name ([[answer]]) or a type ([[json:]])\n    Q [[ ]]\n      ^",
    ),
    (
        "nested-slot",
        "[[a [[b]]",
        "<cell>, line 1, column 5: '[[' inside a slot: the slot opened at line 1, column 1 is not closed with "
        "']]'\n    [[a [[b]]\n        ^",
    ),
    (
        "unclosed-comment",
        "[[a]]\n<!-- hidden [[x]]",
        "<cell>, line 2, column 1: unclosed comment: '<!--' has no matching '-->'\n    <!-- hidden [[x]]\n    ^",
    ),
    (
        "bad-slot-name",
        "[[my-answer]]",
        "<cell>, line 1, column 5: unexpected '-' in a slot name: use letters, digits and '_' (for a literal '[[' "
        "write {% raw %}[[{% endraw %})\n    [[my-answer]]\n        ^",
    ),
    (
        "two-words",
        "[[my answer]]",
        "<cell>, line 1, column 6: unexpected 'answer' in slot: expected ':', '|' or ']]'\n"
        "    [[my answer]]\n         ^",
    ),
    (
        "when-on-non-guard",
        "[[answer|when=false]]",
        "<cell>, line 1, column 10: option 'when' only applies to [[halt:…]] guards\n"
        "    [[answer|when=false]]\n             ^",
    ),
    (
        "mismatched-endblock",
        "{% for x in y %}{% endif %}",
        "<cell>, line 1, column 17: {% endif %} does not close the {% for %} at line 1, column 1\n"
        "    {% for x in y %}{% endif %}\n                    ^",
    ),
    (
        "unclosed-if",
        "{% if x %}\nyes",
        "<cell>, line 1, column 1: unclosed {% if %}: add {% endif %}\n    {% if x %}\n    ^",
    ),
    (
        "include-missing",
        "{% include 'other.sd' %}",
        "<cell>, line 1, column 1: included file 'other.sd' not found (searched: /nowhere)\n"
        "    {% include 'other.sd' %}\n    ^",
    ),
    (
        "tag-modifier",
        "<system lokal>x</system>",
        "<cell>, line 1, column 1: <system> takes the modifiers local, global, append, replace, not 'lokal' (to "
        "show the tag literally, wrap it in {% raw %}…{% endraw %})\n    <system lokal>x</system>\n    ^",
    ),
    (
        "tag-attributes",
        "<user id=1>x</user>",
        "<cell>, line 1, column 1: <user> takes no attributes: write <user> (to show the tag literally, "
        "wrap it in {% raw %}…{% endraw %})\n    <user id=1>x</user>\n    ^",
    ),
    (
        "required-contradiction",
        "[[!answer|required=false]]",
        "<cell>, line 1, column 1: '!' and required=false contradict each other\n    [[!answer|required=false]]\n    ^",
    ),
    (
        "unterminated-option-string",
        "[[x|model='gpt]]",
        "<cell>, line 1, column 11: unterminated string in slot options (strings end on their line)\n"
        "    [[x|model='gpt]]\n              ^",
    ),
    (
        "deep-jinja-nesting",
        DEEP,
        # A line past 160 characters is shown as the 160 around the column (the caret still under it).
        "<cell>, line 1, column 161: Jinja blocks are nested more than 16 deep\n    "
        + "…"
        + DEEP[80:240]
        + "…"
        + "\n    "
        + " " * 81
        + "^",
    ),
]


@pytest.mark.parametrize(("source", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_exact_message(source: str, message: str) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template(source, base_dir="/nowhere")
    assert str(caught.value) == message
    line, col = message.split(": ", 1)[0].split(", line ")[1].split(", column ")
    assert (caught.value.line, caught.value.col) == (int(line), int(col))


def test_errors_use_the_template_name() -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template("[[]]", name="lesson.sd")
    assert str(caught.value).startswith("lesson.sd, line 1, column 1: empty slot")


UNDEFINED = [
    (
        "typo",
        "Answer this:\n{{ qestion }}\n[[answer]]",
        {"question"},
        "<cell>, line 2, column 4: undefined variable 'qestion'; did you mean 'question'?\n    {{ qestion }}\n       ^",
    ),
    (
        "no-suggestion",
        "Hi {{ zzz | upper }} [[answer]]",
        {"question"},
        "<cell>, line 1, column 7: undefined variable 'zzz'; define it in the notebook, pass it with --context, "
        "or answer it with an earlier slot\n    Hi {{ zzz | upper }} [[answer]]\n          ^",
    ),
    (
        "earlier-slot-suggested",
        "[[summary]]\nUse {{ sumary }} [[b]]",
        set(),
        "<cell>, line 2, column 8: undefined variable 'sumary'; did you mean 'summary'?\n"
        "    Use {{ sumary }} [[b]]\n           ^",
    ),
    (
        "slot-read-too-early",
        "Draft: {{ draft }}\n[[draft]]",
        set(),
        "<cell>, line 1, column 11: 'draft' is read before the slot [[draft]] at line 2 has answered it; use it "
        "below that slot\n    Draft: {{ draft }}\n              ^",
    ),
    (
        "in-a-block",
        "{% for x in itemz %}{{ x }}{% endfor %}\n[[a]]",
        {"items"},
        "<cell>, line 1, column 13: undefined variable 'itemz'; did you mean 'items'?\n"
        "    {% for x in itemz %}{{ x }}{% endfor %}\n                ^",
    ),
    (
        "in-system",
        "<system>You help {{ usr }}.</system>\n[[a]]",
        {"user"},
        "<cell>, line 1, column 21: undefined variable 'usr'; did you mean 'user'?\n"
        "    <system>You help {{ usr }}.</system>\n                        ^",
    ),
    (
        "in-option",
        "[[a|model={{ modle }}]]",
        {"model"},
        "<cell>, line 1, column 14: undefined variable 'modle'; did you mean 'model'?\n"
        "    [[a|model={{ modle }}]]\n                 ^",
    ),
    (
        "first-in-source-order",
        "{{ b1 }} {{ a1 }} [[x]]",
        set(),
        "<cell>, line 1, column 4: undefined variable 'b1'; define it in the notebook, pass it with --context, "
        "or answer it with an earlier slot\n    {{ b1 }} {{ a1 }} [[x]]\n       ^",
    ),
]


@pytest.mark.parametrize(
    ("source", "names", "message"), [case[1:] for case in UNDEFINED], ids=[case[0] for case in UNDEFINED]
)
def test_undefined_variables(source: str, names: set[str], message: str) -> None:
    template = compile_template(source)
    with pytest.raises(UndefinedVariableError) as caught:
        template.check_context(names)
    assert str(caught.value) == message


def test_set_lasts_until_the_next_slot() -> None:
    template = compile_template("{% set tone = 'dry' %}Be {{ tone }}. [[a]]\nAgain, be {{ tone }}. [[b]]")
    with pytest.raises(UndefinedVariableError) as caught:
        template.check_context(set())
    assert str(caught.value) == (
        "<cell>, line 2, column 14: undefined variable 'tone': a {% set %} lasts only until the next slot or tag; "
        "set it again here or pass it with --context\n    Again, be {{ tone }}. [[b]]\n                 ^"
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "<assistant>[[a]]</assistant>",
            "slots cannot appear inside <assistant> … </assistant>: the tag opened at line 1, column 1",
        ),
        (
            "<system><checkpoint></system>",
            "<checkpoint> cannot appear inside <system> … </system>: the tag opened at line 1, column 1",
        ),
        ("<user></assistant>", "unexpected </assistant>: the <user> at line 1, column 1 is still open"),
        (
            "</checkpoint>",
            "stray </checkpoint>: a checkpoint name is plain text on one line, as in <checkpoint>Name</checkpoint>",
        ),
        ("<system/>", "<system/> is empty: write <system>…</system>"),
        ("</checkpoint/>", "'</checkpoint/>' is not a tag: write </checkpoint>"),
        ("[[a|]]", "expected options after '|'"),
        ("[[a|,b]]", "empty option: remove the extra ','"),
        ("[[a|=b]]", "expected an option name before '='"),
        ("[[a|'x']]", "only [[pick:…]], [[decide:…]] and [[score:…]] slots take values without a key (their choices or levels)"),
        ("[[a|use_tools=false, tools=x]]", "use_tools=false contradicts tools=…: drop one of them"),
        ("[[a|max_iter=0]]", "option 'max_iter' expects a whole number of at least 1, got 0"),
        ("[[a|model='']]", "option 'model' expects a model name such as openai:gpt-4o-mini, got ''"),
        ("[[{{ x }}]]", "unexpected '{{ x }}' in slot: expected a name, a type or ']]'"),
        ("[[json:{{ x }}]]", "unexpected '{{ x }}' in slot: expected a name, '|' or ']]'"),
        ("{% endfor %}", "{% endfor %} has no matching {% for %}"),
        ("[[bool:true]]", "slot name 'true' is a Jinja keyword, so {{ }} could not read it; choose another name"),
        ("{% extends 'base' %}", "{% extends %} is not available in a cell: a cell cannot load other templates"),
    ],
    ids=repr,
)
def test_more_messages(source: str, message: str) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template(source)
    assert caught.value.message == message


def test_undefined_variable_error_names_the_variable() -> None:
    template = compile_template("{{ qestion }} [[a]]")
    with pytest.raises(UndefinedVariableError) as caught:
        template.check_context(["question"])
    assert (caught.value.variable, caught.value.line, caught.value.col) == ("qestion", 1, 4)


def test_defined_context_passes() -> None:
    template = compile_template("{{ q }} [[a]] {{ a }} {{ range(2) | list }} [[b|model={{ m }}]]")
    assert template.check_context({"q", "m"}) is None
