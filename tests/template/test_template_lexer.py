"""The lexer: characters to tokens, with Jinja regions and slots recognised; whole token lists."""

from __future__ import annotations

import pytest

from agentcell.template.lexer import Token, tokenize
from agentcell.template.source import Source


def lex(text: str) -> list[tuple[str, str]]:
    return [(token.kind, token.value) for token in tokenize(Source(text))]


def test_plain_text_is_one_data_token_then_eof() -> None:
    assert list(tokenize(Source("hello"))) == [Token("data", "hello", "hello", 0), Token("eof", "", "", 5)]


def test_slot_tokens_with_options() -> None:
    assert lex("Q [[!json:plan|use_tools=true, tools=a+b, model='x y']]") == [
        ("data", "Q "),
        ("slot_begin", "[["),
        ("bang", "!"),
        ("name", "json"),
        ("colon", ":"),
        ("name", "plan"),
        ("pipe", "|"),
        ("word", "use_tools"),
        ("equals", "="),
        ("word", "true"),
        ("comma", ","),
        ("word", "tools"),
        ("equals", "="),
        ("word", "a+b"),
        ("comma", ","),
        ("word", "model"),
        ("equals", "="),
        ("string", "x y"),
        ("slot_end", "]]"),
        ("eof", ""),
    ]


def test_whitespace_and_newlines_inside_brackets_are_skipped() -> None:
    assert lex("[[ ! answer |\n  max_iter = 3 ]]") == [
        ("slot_begin", "[["),
        ("bang", "!"),
        ("name", "answer"),
        ("pipe", "|"),
        ("word", "max_iter"),
        ("equals", "="),
        ("word", "3"),
        ("slot_end", "]]"),
        ("eof", ""),
    ]


def test_option_words_keep_inner_spaces_and_apostrophes() -> None:
    assert lex("[[pick:m|very happy , don't]]")[5:8] == [("word", "very happy"), ("comma", ","), ("word", "don't")]


def test_quoted_strings_unescape_and_may_hold_brackets() -> None:
    assert lex(r'[[x|model="a]]\"b"]]')[5] == ("string", 'a]]"b')


def test_jinja_expression_in_options_is_one_token_even_with_brackets_and_pipes() -> None:
    assert lex("[[pick:c|{{ xs[0] | join(']]') }}]]")[5] == ("expr", "{{ xs[0] | join(']]') }}")


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("a {{ x }} b", [("data", "a "), ("variable", "{{ x }}"), ("data", " b")]),
        ("{{ {'a': {'b': 1}} }}", [("variable", "{{ {'a': {'b': 1}} }}")]),
        ('{{ "}}" }}', [("variable", '{{ "}}" }}')]),
        ("{% if x %}", [("block", "{% if x %}")]),
        ("{%- if '%}' -%}", [("block", "{%- if '%}' -%}")]),
        ("{# [[x]] #}", [("comment", "{# [[x]] #}")]),
        ("{% raw %}[[x]] {{ y }}{% endraw %}", [("raw", "{% raw %}[[x]] {{ y }}{% endraw %}")]),
        ("{'a': {'b': 1}}", [("data", "{'a': {'b': 1}}")]),
    ],
    ids=[
        "variable",
        "dict-in-expression",
        "string-with-closer",
        "block",
        "block-ws-control",
        "jinja-comment",
        "raw",
        "python-dict-is-text",
    ],
)
def test_jinja_regions(text: str, kinds: list[tuple[str, str]]) -> None:
    tokens = lex(text)
    assert [token for token in tokens if token[0] != "eof"] == kinds


def test_html_comments_vanish_and_hide_slots() -> None:
    assert lex("a<!-- [[x]] {{ -->b") == [("data", "a"), ("data", "b"), ("eof", "")]


def test_tags_are_canonical_and_others_are_text() -> None:
    assert lex("<system></system><obliviate/><checkpoint >x</checkpoint><question>") == [
        ("tag_open", "system"),
        ("tag_close", "system"),
        ("tag_empty", "checkpoint"),
        ("tag_open", "checkpoint"),
        ("data", "x"),
        ("tag_close", "checkpoint"),
        ("data", "<question>"),
        ("eof", ""),
    ]


def test_closing_brackets_of_code_are_text() -> None:
    assert lex("a[b[0]] and [x] <users>") == [("data", "a[b[0]] and [x] <users>"), ("eof", "")]


def test_tokens_carry_offsets() -> None:
    tokens = list(tokenize(Source("ab\n[[x]]")))
    assert [(token.kind, token.pos) for token in tokens] == [
        ("data", 0),
        ("slot_begin", 3),
        ("name", 5),
        ("slot_end", 6),
        ("eof", 8),
    ]
