"""The parser: tokens to nodes, syntax only (types and options are checked by the compiler)."""

from __future__ import annotations

from agentcell.template import (
    Checkpoint,
    Const,
    Document,
    Dynamic,
    Message,
    Option,
    Slot,
    System,
    Text,
    TextPart,
    parse,
)


def test_text_jinja_and_a_slot() -> None:
    assert parse("Hi {{ name }}\n[[answer]]") == Document(
        (
            Text(
                (
                    TextPart("data", "Hi ", 1, 1, 0),
                    TextPart("variable", "{{ name }}", 1, 4, 3),
                    TextPart("data", "\n", 1, 14, 13),
                ),
                1,
                1,
            ),
            Slot("answer", None, False, (), 2, 1),
        )
    )


def test_every_slot_form() -> None:
    slots = [node for node in parse("[[a]][[json:b]][[json:]][[!c]][[ ! int : d ]][[!pick:]]").nodes]
    assert slots == [
        Slot("a", None, False, (), 1, 1),
        Slot("b", "json", False, (), 1, 6, 1, 8),
        Slot(None, "json", False, (), 1, 16, 1, 18),
        Slot("c", None, True, (), 1, 25, 0, 0),
        Slot("d", "int", True, (), 1, 31, 1, 36),
        Slot(None, "pick", True, (), 1, 46, 1, 49),
    ]


def test_options_keep_what_was_written() -> None:
    (slot,) = parse("[[pick:mood|happy, 'very sad', {{ more }}, use_tools, max_iter=3, model=\"x\"]]").nodes
    assert isinstance(slot, Slot)
    assert slot.options == (
        Option(None, Const("happy"), 1, 13),
        Option(None, Const("very sad", quoted=True), 1, 20),
        Option(None, Dynamic("{{ more }}", 1, 32, 31), 1, 32),
        Option(None, Const("use_tools"), 1, 44),
        Option("max_iter", Const("3"), 1, 55),
        Option("model", Const("x", quoted=True), 1, 67),
    )


def test_trailing_comma_is_allowed() -> None:
    (slot,) = parse("[[x|use_tools,]]").nodes
    assert isinstance(slot, Slot)
    assert slot.options == (Option(None, Const("use_tools"), 1, 5),)


def test_tags() -> None:
    nodes = parse("<system>S</system><user>U</user><assistant>A</assistant><checkpoint>Two</checkpoint>").nodes
    assert nodes == (
        System(Text((TextPart("data", "S", 1, 9, 8),), 1, 9), 1, 1),
        Message("user", Text((TextPart("data", "U", 1, 25, 24),), 1, 25), 1, 19),
        Message("assistant", Text((TextPart("data", "A", 1, 44, 43),), 1, 44), 1, 33),
        Checkpoint("Two", 1, 57),
    )


def test_checkpoint_forms() -> None:
    nodes = parse("<checkpoint>\nnext<checkpoint/><obliviate></obliviate><checkpoint> </checkpoint>").nodes
    assert nodes == (
        Checkpoint(None, 1, 1),
        Text((TextPart("data", "\nnext", 1, 13, 12),), 1, 13),
        Checkpoint(None, 2, 5),
        Checkpoint(None, 2, 18),
        Checkpoint(None, 2, 41),
    )


def test_empty_tag_bodies_are_empty_texts() -> None:
    assert parse("<system></system>").nodes == (System(Text((), 1, 9), 1, 1),)


def test_jinja_blocks_inside_text_are_fine() -> None:
    (text, slot) = parse("{% for x in xs %}- {{ x }}\n{% endfor %}[[a]]").nodes
    assert isinstance(text, Text)
    assert [part.kind for part in text.parts] == ["block", "data", "variable", "data", "block"]
    assert slot == Slot("a", None, False, (), 2, 13)


def test_comments_are_gone_and_adjacent_text_joins() -> None:
    assert parse("a<!-- x -->b").nodes == (Text((TextPart("data", "ab", 1, 1, 0),), 1, 1),)


def test_other_tags_and_brackets_are_text() -> None:
    (text,) = parse("<question>x[y[0]]</question>").nodes
    assert isinstance(text, Text)
    assert text.source == "<question>x[y[0]]</question>"
