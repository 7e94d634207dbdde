"""The whole struckdown 0.18 template language, template by template: each case pins the
exact slot list it compiles to, as `(key, type as written)` pairs; errors pin message, line and column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcell.errors import TemplateSyntaxError, UndefinedVariableError
from agentcell.template import (
    ForStep,
    IfStep,
    SlotOptions,
    SlotSpec,
    SlotStep,
    TextStep,
    TogetherStep,
    compile_template,
)


def slots(source: str, **kwargs: Any) -> list[tuple[str, str]]:
    return [(spec.key, spec.type_label) for spec in compile_template(source, **kwargs).slots]


def error(source: str, **kwargs: Any) -> tuple[str, int, int]:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template(source, **kwargs)
    return caught.value.message, caught.value.line, caught.value.col


def options(source: str, context: dict[str, Any] | None = None) -> SlotOptions:
    step = next(s for s in compile_template(source).steps if isinstance(s, SlotStep))
    return step.render(context or {}).options


# -- 1. quantifiers ------------------------------------------------------------------------------

QUANTIFIED = [
    ("[[int*:x]]", [("x", "int*")], (0, None)),
    ("[[int+:x]]", [("x", "int+")], (1, None)),
    ("[[int?:x]]", [("x", "int?")], (0, 1)),
    ("[[int{3}:x]]", [("x", "int{3}")], (3, 3)),
    ("[[int{2,}:x]]", [("x", "int{2,}")], (2, None)),
    ("[[int{1,3}:x]]", [("x", "int{1,3}")], (1, 3)),
    ("[[ideas{3}]]", [("ideas", "text{3}")], (3, 3)),
    ("[[int *:x]]", [("x", "int*")], (0, None)),
    ("[[x {2}]]", [("x", "text{2}")], (2, 2)),
    ("[[ int { 1 , 4 } : x ]]", [("x", "int{1,4}")], (1, 4)),
    ("[[!int{2}:]]", [("_int_1", "int{2}")], (2, 2)),
    ("[[pick{2,3}:tags|urgent, billing, bug]]", [("tags", "pick{2,3}")], (2, 3)),
    ("[[extract+:quotes]]", [("quotes", "extract+")], (1, None)),
    ("[[date*:mondays]]", [("mondays", "date*")], (0, None)),
    ("[[{0}]]".replace("{0}", "record{0,}:rows"), [("rows", "record*")], (0, None)),
]


@pytest.mark.parametrize(("source", "expected", "bounds"), QUANTIFIED, ids=[case[0] for case in QUANTIFIED])
def test_quantifiers(source: str, expected: list[tuple[str, str]], bounds: tuple[int, int | None]) -> None:
    assert slots(source) == expected
    assert compile_template(source).slots[0].quantifier == bounds


@pytest.mark.parametrize(
    ("source", "message", "col"),
    [
        ("[[int:x*]]", "a quantifier goes before the ':' (write [[int*:x]])", 8),
        ("[[int{3,1}:x]]", "{3,1} asks for at least 3 and at most 1 items", 6),
        ("[[int{ {{n}} }:x]]", "a quantifier is written {n}, {n,} or {n,m} with whole numbers (e.g. [[ideas{3}]]); "
                               "it cannot be a {{ }} value", 6),
        ("[[*:x]]", "a quantifier follows a type or a name, as in [[int*:x]] or [[ideas{3}]]", 3),
        ("[[@set*:x]]", "an action runs once: it takes no quantifier", 7),
        ("[[score*:s|a, b]]", "[[score{…}:…]]: a score slot gives one answer, so it takes no quantifier", 1),
        ("[[halt+:g]]", "[[halt{…}:…]]: a halt slot gives one answer, so it takes no quantifier", 1),
    ],
    ids=["after-name", "reversed", "jinja", "alone", "action", "score", "halt"],
)
def test_quantifier_errors(source: str, message: str, col: int) -> None:
    assert error(source) == (message, 1, col)


# -- 2. types and aliases --------------------------------------------------------------------------

TYPED = [
    ("[[extract:quote]]", [("quote", "extract")]),
    ("[[think:plan]]", [("plan", "think")]),
    ("[[speak:line]]", [("line", "speak")]),
    ("[[poem:verse]]", [("verse", "poem")]),
    ("[[decide:go]]", [("go", "decide")]),
    ("[[decide:route|left, right]]", [("route", "decide")]),
    ("[[score:q|poor, fair, good]]", [("q", "score")]),
    ("[[record:row]]", [("row", "record")]),
    ("[[date:d]]", [("d", "date")]),
    ("[[datetime:when]]", [("when", "datetime")]),
    ("[[time:at]]", [("at", "time")]),
    ("[[duration:length]]", [("length", "duration")]),
    ("[[date_rule:rule]]", [("rule", "date_rule")]),
    ("[[default:d]]", [("d", "text")]),
    ("[[boolean:ok]]", [("ok", "bool")]),
    ("[[respond:r]]", [("r", "text")]),
    ("[[Person:person]]", [("person", "Person")]),
    ("[[Person*:people]] [[Person:]]", [("people", "Person*"), ("_Person_1", "Person")]),
    ("[[think:]] [[date:]] [[think:]]", [("_think_1", "think"), ("_date_1", "date"), ("_think_2", "think")]),
]


@pytest.mark.parametrize(("source", "expected"), TYPED, ids=[case[0] for case in TYPED])
def test_types_and_aliases(source: str, expected: list[tuple[str, str]]) -> None:
    assert slots(source) == expected


def test_score_levels_and_decide_choices_are_the_values_without_a_key() -> None:
    assert options("[[score:q|poor, fair, good]]").choices == ("poor", "fair", "good")
    assert options("[[decide:route|left, right]]").choices == ("left", "right")
    assert error("[[score:q|only]]") == (
        "[[score:q]] needs two or more levels after '|', lowest first, e.g. [[score:q|poor, fair, good]]", 1, 1)


def test_an_unknown_lower_case_type_lists_the_types_and_says_how_classes_are_named() -> None:
    message, line, col = error("[[dat:d]]")
    assert message.startswith("unknown slot type 'dat'; did you mean 'date'? (known types: text, respond, default,")
    assert message.endswith("a notebook class is named with a capital, e.g. [[Person:p]])")
    assert (line, col) == (1, 3)


def test_an_action_name_used_as_a_type_says_to_write_the_at_sign() -> None:
    assert error("[[fetch:page]]") == ("'fetch' is an action, not a type: write [[@fetch:name|…]]", 1, 3)


def test_a_notebook_type_is_checked_against_the_context_with_close_names() -> None:
    template = compile_template("Who?\n[[Persn:p]]")
    with pytest.raises(TemplateSyntaxError) as caught:
        template.check_context({"Person", "question"})
    assert str(caught.value) == (
        "<cell>, line 2, column 1: no type or notebook class named 'Persn' (close: Person): define a pydantic "
        "model, dataclass or TypedDict of that name in the notebook, or pass it with --context\n    [[Persn:p]]\n    ^"
    )
    template.check_context({"Persn"})


# -- 3. constraint options -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("[[int:n|min=1, max=5]]", SlotOptions(ge=1, le=5)),
        ("[[int:n|ge=-5, lt=10, gt=-6]]", SlotOptions(ge=-5, lt=10, gt=-6)),
        ("[[number:x|min=0.5]]", SlotOptions(ge=0.5)),
        ('[[answer|pattern="^\\d{3}$"]]', SlotOptions(pattern="^\\d{3}$")),
        ('[[extract:code|regex="[A-Z]+"]]', SlotOptions(pattern="[A-Z]+")),
        ("[[answer|minlength=2, maxlength=9]]", SlotOptions(min_length=2, max_length=9)),
        ('[[date:d|min="2024-01-01"]]', SlotOptions(ge="2024-01-01")),
        ("[[a|seed=7, thinking=off, mode=decision, block]]", SlotOptions(seed=7, thinking=False, mode="decision",
                                                                         block=True)),
        ("[[int*:xs|max=9]]", SlotOptions(le=9)),
        ("[[pick:p|a, b, required]]", SlotOptions(choices=("a", "b"))),
    ],
    ids=["int", "signed", "number", "pattern", "regex-alias", "lengths", "iso-date", "llm-keys", "list-items",
         "pick-required"],
)
def test_constraint_and_model_options(source: str, expected: SlotOptions) -> None:
    assert options(source) == expected


@pytest.mark.parametrize(
    ("source", "message", "col"),
    [
        ("[[bool:ok|min=1]]", "option 'min' does not apply to a bool slot (it fits: date, datetime, int, number, "
                              "time)", 11),
        ('[[int:n|pattern="x"]]', "option 'pattern' does not apply to a int slot (it fits: extract, poem, speak, "
                                  "text, think)", 9),
        ("[[pick:p|a, b, max_length=3]]", "option 'max_length' does not apply to a pick slot (it fits: extract, "
                                          "poem, speak, text, think)", 16),
        ('[[int:n|min="low"]]', "option 'min' expects a number, got 'low'", 9),
        ("[[date:d|min=3]]", "option 'min' on a date slot is ISO text, e.g. \"2024-01-31\"", 10),
        ('[[date:d|max="31/01/2024"]]', "option 'max' is not an ISO date: '31/01/2024'", 10),
        ('[[answer|pattern="(unclosed"]]', "option 'pattern' is not a valid regular expression (missing ), "
                                           "unterminated subpattern at position 0): '(unclosed'", 10),
        ("[[a|seed=-1]]", "option 'seed' expects a whole number of at least 0, got -1", 5),
        ("[[a|mode=fast]]", "option 'mode' accepts only mode=decision, got 'fast'", 5),
        ("[[a|thinking=none]]", "option 'thinking' expects true, false, off or one of minimal, low, medium, high, "
                                "xhigh, max, got 'none'", 5),
        ("[[int:a|min=1, ge=2]]", "option 'ge' is given twice", 16),
    ],
    ids=["min-on-bool", "pattern-on-int", "length-on-pick", "word-bound", "number-on-date", "bad-iso", "bad-regex",
         "negative-seed", "mode", "thinking", "alias-twice"],
)
def test_a_constraint_where_it_does_not_fit_is_an_error_at_its_column(source: str, message: str, col: int) -> None:
    assert error(source) == (message, 1, col)


def test_mode_decision_warns_that_it_runs_on_the_ordinary_model() -> None:
    [warning] = compile_template("[[decide:go|mode=decision]]").warnings
    assert warning.message == "mode=decision: [[go]] runs on its ordinary model (agentcell has no decision models)"


# -- 4. actions ------------------------------------------------------------------------------------

ACTIONS = [
    ('[[@fetch:page|url="https://example.com"]]', [("page", "@fetch")]),
    ("[[@set|1]]", [("set", "@set")]),
    ("[[@set:|1]] [[@set:|2]]", [("_set_1", "@set"), ("_set_2", "@set")]),
    ("[[@timestamp]] [[answer]]", [("timestamp", "@timestamp"), ("answer", "text")]),
    ("[[@evidence:guidance|query=topic, n=3]] Answer: [[answer]]", [("guidance", "@evidence"), ("answer", "text")]),
    ("[[ @ search : hits | 'owls' ]]", [("hits", "@search")]),
    ("[[@lookup:info|code]]", [("info", "@lookup")]),
]


@pytest.mark.parametrize(("source", "expected"), ACTIONS, ids=[case[0] for case in ACTIONS])
def test_action_forms(source: str, expected: list[tuple[str, str]]) -> None:
    assert slots(source) == expected


def test_action_options_are_arguments_and_unquoted_names_are_variables() -> None:
    template = compile_template('[[@evidence:g|query=topic, n=3, "lit", flag=true, url="https://x", w=gpt-4o]]')
    assert template.variables == frozenset({"topic"})
    rendered = template.slot_steps[0].render({"topic": "owls"})
    assert rendered.options.arguments == (
        ("query", "owls"), ("n", 3), (None, "lit"), ("flag", True), ("url", "https://x"), ("w", "gpt-4o"),
    )  # fmt: skip
    with pytest.raises(UndefinedVariableError, match="undefined variable 'topic'"):
        template.check_context(set())


def test_actions_need_a_built_in_or_an_action_in_the_context() -> None:
    template = compile_template("[[@lookp:x]]")
    with pytest.raises(TemplateSyntaxError, match="no action named 'lookp'"):
        template.check_context({"lookup"})
    compile_template("[[@fetch:x|'u']]").check_context(set())


@pytest.mark.parametrize(
    ("source", "message", "col"),
    [
        ("[[!@set:x]]", "an action takes no '!': write [[@name:var]]", 4),
        ("[[@:x]]", "expected an action name after '@' (e.g. [[@fetch:page|url=\"…\"]])", 4),
        ("[[@set:x|a=1, a=2]]", "option 'a' is given twice", 15),
    ],
    ids=["bang", "no-name", "twice"],
)
def test_action_errors(source: str, message: str, col: int) -> None:
    assert error(source) == (message, 1, col)


# -- 5. tags: <system> modifiers, <header>, <together> -----------------------------------------------


def _systems(source: str) -> list[str | None]:
    template = compile_template(source)
    return [step.render({}).system for step in template.slot_steps]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("<system>G</system><system local>L</system>A [[a]]<checkpoint>B [[b]]", ["G\n\nL", "G"]),
        ("<system>G</system>A [[a]]<system append>More</system>B [[b]]", ["G", "G\n\nMore"]),
        ("<system>G</system>A [[a]]<system replace>R</system>B [[b]]", ["G", "R"]),
        ("<system>G</system>A [[a]]<system>New</system>B [[b]]", ["G", "G\n\nNew"]),
        ("<system local>L1</system>A [[a]]<system local append>L2</system>B [[b]]<checkpoint>C [[c]]",
         ["L1", "L1\n\nL2", None]),
        ("<system>G</system><system local>L</system>A [[a]]<system local replace></system>B [[b]]", ["G\n\nL", "G"]),
    ],
    ids=["local-ends-at-checkpoint", "append", "replace", "plain-appends-too", "local-append", "replace-clears"],
)
def test_system_scopes_and_modifiers(source: str, expected: list[str | None]) -> None:
    assert _systems(source) == expected


def test_header_blocks_render_per_slot_and_slots_in_them_are_errors() -> None:
    template = compile_template("<header>Essay: {{ essay }}</header>Grade. [[grade]]<checkpoint>Comment. [[c]]")
    assert [s.render({"essay": "E"}).header for s in template.slot_steps] == ["Essay: E", "Essay: E"]
    assert [(spec.key, spec.type_label) for spec in template.slots] == [("grade", "text"), ("c", "text")]
    assert error("<header>H [[x]]</header>") == (
        "slots cannot appear inside <header> … </header>: the tag opened at line 1, column 1", 1, 11)


def test_together_groups_its_slots_into_one_step() -> None:
    source = "Review: {{ r }}\n<together>Sentiment? [[pick:s|pos, neg]] Complaint? [[c]]</together> Reply. [[reply]]"
    template = compile_template(source)
    assert slots(source) == [("s", "pick"), ("c", "text"), ("reply", "text")]
    kinds = [type(step).__name__ for step in template.steps]
    assert kinds == ["TextStep", "TogetherStep", "SlotStep"]
    together = template.steps[1]
    assert isinstance(together, TogetherStep)
    assert [s.render({}).turns[-1].text for s in together.steps] == ["Sentiment?", "Complaint?"]


@pytest.mark.parametrize(
    ("source", "message", "line", "col"),
    [
        ("<together>A [[a]] B {{ a }} [[b]]</together>",
         "'a' is answered in the same <together> block, so it is not known yet here: slots in a <together> block "
         "cannot read each other's answers", 1, 24),
        ("<together>A [[a]] [[b|model={{ a }}]]</together>",
         "'a' is answered in the same <together> block, so it is not known yet here: slots in a <together> block "
         "cannot read each other's answers", 1, 32),
        ("<together>A [[a]] <together>[[b]]</together></together>",
         "<together> blocks cannot nest: the one at line 1, column 1 is still open", 1, 19),
        ("<together>A [[a]]", "unclosed <together>: no matching </together>", 1, 1),
        ("A [[a]]</together>", "stray </together>: there is no open <together>", 1, 8),
        ("<together>A [[a]]<checkpoint>B [[b]]</together>",
         "<checkpoint> cannot be inside a <together> block that holds slots", 1, 18),
        ("<together>{% if x %}[[a]]{% endif %}</together>", "{% if %} with slots cannot be inside a <together> block",
         1, 11),
    ],
    ids=["sibling-in-text", "sibling-in-option", "nested", "unclosed", "stray", "checkpoint", "if"],
)
def test_together_errors(source: str, message: str, line: int, col: int) -> None:
    assert error(source) == (message, line, col)


# -- 6. includes -------------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "rubric.sd").write_text("<system>Grade strictly.</system>\nRubric: {{ rubric }} [[focus]]\n")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "outer.sd").write_text('Outer [[o]] <include src="inner.sd"/>')
    (tmp_path / "parts" / "inner.sd").write_text("Inner [[i]]")
    (tmp_path / "loop_a.sd").write_text('A <include src="loop_b.sd"/>')
    (tmp_path / "loop_b.sd").write_text('B {% include "loop_a.sd" %}')
    (tmp_path / "bad.sd").write_text("fine\n  [[jsno:x]]\n")
    (tmp_path / "undefined.sd").write_text("Uses {{ missing }} [[u]]\n")
    return tmp_path


def test_includes_splice_the_files_slots(files: Path) -> None:
    assert slots('<include src="rubric.sd"/> Essay [[grade]]', base_dir=files) == [("focus", "text"), ("grade", "text")]
    assert slots("{% include 'parts/outer.sd' %} [[last]]", base_dir=files) == [
        ("o", "text"), ("i", "text"), ("last", "text")]  # fmt: skip
    assert slots("<include src='outer.sd' />", include_paths=[files / "parts"]) == [("o", "text"), ("i", "text")]


def test_an_include_cycle_shows_the_chain(files: Path) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template('<include src="loop_a.sd"/>', base_dir=files)
    assert caught.value.message == "include cycle: loop_a.sd → loop_b.sd → loop_a.sd"
    assert caught.value.name.endswith("loop_b.sd") and (caught.value.line, caught.value.col) == (1, 3)


def test_errors_inside_an_included_file_point_into_it(files: Path) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template('Intro\n<include src="bad.sd"/>', base_dir=files)
    assert caught.value.name == str(files / "bad.sd")
    assert (caught.value.line, caught.value.col) == (2, 5)
    assert str(caught.value).endswith("\n      [[jsno:x]]\n        ^")
    template = compile_template('<include src="undefined.sd"/>', base_dir=files)
    with pytest.raises(UndefinedVariableError) as undefined:
        template.check_context(set())
    assert (undefined.value.name, undefined.value.line, undefined.value.col) == (str(files / "undefined.sd"), 1, 9)


def test_a_missing_include_names_where_it_looked(files: Path) -> None:
    assert error('<include src="nope.sd"/>', base_dir=files) == (
        f"included file 'nope.sd' not found (searched: {files})", 1, 1)
    assert error('<include src="x.sd">', base_dir=files)[0].startswith('an include is written <include src="file.sd"/>')
    assert error("{% include name %}", base_dir=files)[0] == (
        'write {% include "file.sd" %}: the file name in quotes, nothing else')


def test_an_include_inside_a_comment_or_raw_block_is_not_resolved(files: Path) -> None:
    assert slots('<!-- <include src="nope.sd"/> --> {% raw %}<include src="nope.sd"/>{% endraw %} [[a]]') == [
        ("a", "text")]  # fmt: skip


# -- 7. slots inside {% if %} / {% for %} ----------------------------------------------------------------

BLOCKS = [
    ("Urgent? [[!bool:urgent]]\n{% if urgent %}Who acts? [[owner]]{% endif %}", [("urgent", "bool"), ("owner", "text")]),
    ("{% if a %}[[x]]{% elif b %}[[y]]{% else %}[[z]]{% endif %}", [("x", "text"), ("y", "text"), ("z", "text")]),
    ("{% if a %}[[x]]{% else %}[[x]]{% endif %} then {{ x }} [[done]]", [("x", "text"), ("x", "text"),
                                                                          ("done", "text")]),
    ("{% for item in items %}Summarise {{ item }}. [[summary]]{% endfor %}", [("summary", "text")]),
    ("{% for k, v in pairs %}{{ k }}={{ v }} [[bool:ok]]{% endfor %}", [("ok", "bool")]),
    ("{% for x in xs if x %}[[a]]{% else %}none [[b]]{% endfor %}", [("a", "text"), ("b", "text")]),
    ("{% for x in xs %}{% if x > 1 %}[[big]]{% endif %}{% endfor %}", [("big", "text")]),
    ("{% for x in xs %}[[@set:seen|x]]{% endfor %}", [("seen", "@set")]),
    ("{% if a %}{% for x in xs %}- {{ x }}\n{% endfor %}{% endif %}[[plain]]", [("plain", "text")]),
    ("{% if x %}A [[a]]{% endif %}{% if y %}B{% endif %}[[b]]", [("a", "text"), ("b", "text")]),
]


@pytest.mark.parametrize(("source", "expected"), BLOCKS, ids=[case[0][:40] for case in BLOCKS])
def test_slots_inside_jinja_blocks(source: str, expected: list[tuple[str, str]]) -> None:
    assert slots(source) == expected


def test_if_and_for_become_structured_steps_and_loop_variables_are_not_context_variables() -> None:
    template = compile_template("Intro {{ topic }}\n{% for item in items %}{{ item }} {{ loop.index }} [[s]]{% endfor %}")
    assert [type(step).__name__ for step in template.steps] == ["TextStep", "ForStep"]
    loop = template.steps[1]
    assert isinstance(loop, ForStep) and loop.targets == ("item",) and loop.slots == ("s",)
    assert loop.items({"items": ["a", "b"]}) == [{"item": "a"}, {"item": "b"}]
    assert template.variables == frozenset({"topic", "items"})
    assert template.slots[0].in_loop
    branch = compile_template("{% if a %}[[x]]{% else %}T{% endif %}").steps[0]
    assert isinstance(branch, IfStep) and branch.slots == ("x",)
    assert [b.has_test for b in branch.branches] == [True, False]
    assert isinstance(branch.branches[1].steps[0], TextStep)
    assert branch.branches[0].test is not None and branch.branches[0].test({"a": 1}) is True


def test_a_jinja_block_without_slots_stays_text() -> None:
    template = compile_template("{% for x in xs %}- {{ x }}\n{% endfor %}[[a]]")
    assert [type(step).__name__ for step in template.steps] == ["SlotStep"]
    assert template.slot_steps[0].render({"xs": [1, 2]}).turns[-1].text == "- 1\n- 2"


@pytest.mark.parametrize(
    ("source", "message", "col"),
    [
        ("{% if x %}[[a]]", "unclosed {% if %}: add {% endif %}", 1),
        ("{% for x in xs %}[[a]]", "unclosed {% for %}: add {% endfor %}", 1),
        ("{% if x %}[[a]]{% else %}[[b]]{% elif y %}[[c]]{% endif %}", "{% elif %} after {% else %}: the else arm "
                                                                        "must come last", 31),
        ("{% for x.y in xs %}[[a]]{% endfor %}", "a loop that holds slots names its variables plainly (for a, b "
                                                 "in …), not 'x.y in xs'", 1),
        ("{% if x %}[[halt:g]]{% endif %}", "a [[halt:…]] guard cannot be inside {% if %} or {% for %}: put it "
                                            "before the block", 11),
        ("{% for x in xs %}<system>S</system>[[a]]{% endfor %}", "<system> cannot be inside a {% for %} block that "
                                                                 "holds slots", 18),
        ("{% if x %}[[a]]{% endif %} [[a]]", "duplicate slot name 'a': [[a]] is already at line 1, column 11 in this "
                                              "segment (a name may be used again only after a <checkpoint>)", 28),
        ("{% if 1 + %}[[a]]{% endif %}", "invalid Jinja: unexpected 'end of print statement'", 7),
    ],
    ids=["unclosed-if", "unclosed-for", "elif-after-else", "dotted-target", "guard", "system", "duplicate", "test"],
)
def test_block_errors(source: str, message: str, col: int) -> None:
    assert error(source) == (message, 1, col)


def test_loop_items_are_values_never_markup() -> None:
    loop = compile_template("{% for x in xs %}Item: {{ x }} [[s]]{% endfor %}")
    assert len(loop.slots) == 1
    step = loop.steps[0]
    assert isinstance(step, ForStep)
    assert step.items({"xs": ["[[evil]]"]}) == [{"x": "[[evil]]"}]


# -- 8. dynamic options, re-used names, hints ---------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "context", "expected"),
    [
        ('[[pick:shade|"light {{ colour }}", "dark {{ colour }}"]]', {"colour": "red"}, ("light red", "dark red")),
        ('[[pick:mood|"{{ moods }}"]]', {"moods": ["calm", "glad"]}, ("calm", "glad")),
        ("[[pick:mood|{{ moods|join(',') }}]]", {"moods": ["calm", "glad"]}, ("calm", "glad")),
        ('[[pick:c|"{{ x }}, still one"]]', {"x": "a"}, ("a, still one",)),
        ('[[pick:c|"[[x]] <system>"]]', {}, ("[[x]] <system>",)),
    ],
    ids=["quoted-template", "quoted-list", "join-idiom", "quoted-keeps-commas", "no-jinja-literal"],
)
def test_quoted_options_with_jinja_render_when_the_slot_is_reached(
    source: str, context: dict[str, Any], expected: tuple[str, ...]
) -> None:
    assert slots(source)[0][1] == "pick"
    assert options(source, context).choices == expected


def test_a_rendered_option_is_never_parsed_as_markup() -> None:
    assert options('[[pick:c|"{{ x }}"]]', {"x": "[[evil]] <together>"}).choices == ("[[evil]] <together>",)
    assert options('[[a|model="{{ m }}"]]', {"m": "openai:{{ x }}"}).model == "openai:{{ x }}"


def test_names_may_be_used_again_after_a_checkpoint() -> None:
    source = "Draft [[draft]]\n<checkpoint>\nImprove {{ draft }} [[draft]]\n<checkpoint>\n[[draft]]"
    assert slots(source) == [("draft", "text"), ("draft#2", "text"), ("draft#3", "text")]
    assert compile_template(source).variables == frozenset()


def test_star_and_at_in_a_name_get_the_right_hint() -> None:
    assert error("[[my*name]]") == ("unexpected 'name' in slot: expected ':', '|' or ']]'", 1, 6)
    assert error("[[a@b]]")[0] == "unexpected '@' in slot: expected ':', '|' or ']]'"
    assert "raw" in error("[[my-answer]]")[0]


def test_a_bare_type_name_is_a_text_slot_with_a_warning() -> None:
    template = compile_template("[[date]]")
    assert [(s.key, s.type_label) for s in template.slots] == [("date", "text")]
    assert [w.message for w in template.warnings] == [
        "[[date]] is a text slot named 'date'; for a date value write [[date:]]"]  # fmt: skip


def test_nothing_is_dropped_text_after_a_loop_is_warned() -> None:
    template = compile_template("{% for x in xs %}[[a]] trailing {{ x }}{% endfor %}")
    assert [w.message for w in template.warnings] == [
        "text after the last slot is never sent to the model; add a slot below it or remove it"]  # fmt: skip


def test_the_slot_spec_of_a_new_style_slot() -> None:
    spec = compile_template("{% if go %}[[!int{2,3}:xs]]{% endif %}").slots[0]
    assert spec == SlotSpec(name="xs", type="int", required=True, line=1, col=12, quantifier=(2, 3), conditional=True)


def test_a_together_cut_short_inside_an_if_is_an_error_not_a_hang() -> None:
    """Found by the fuzz test: the `{% else %}` of the enclosing `{% if %}` cannot end a `<together>`'s text."""
    assert error("{% if n %}<together>A [[a]] </[[b]]together>{% else %}[[d]]{% endif %}") == (
        "{% endif %} has no matching {% if %}", 1, 60)
