"""Pathological cells: each ends quickly in a result or one `TemplateSyntaxError`, never anything else.

(bench/bench_compile.py measures the same shapes up to 1 MB and shows the time is linear.)
"""

from __future__ import annotations

import contextlib
import random
import time

import pytest

from agentcell.errors import TemplateSyntaxError
from agentcell.template import compile_template

N = 200_000

CASES = {
    "open-slots": (
        "[[" * (N // 2),
        "'[[' inside a slot: the slot opened at line 1, column 1 is not closed with ']]'",
    ),
    "close-slots": ("]]" * (N // 2), "']]' without a matching '[['"),
    "open-variables": ("{{" * (N // 2), "unclosed '{{': no matching '}}'"),
    "open-braces": ("{" * N, "unclosed '{{': no matching '}}'"),
    "open-blocks": ("{%" * (N // 2), "unclosed '{%': no matching '%}'"),
    "open-comments": ("<!--" * (N // 4), "unclosed comment: '<!--' has no matching '-->'"),
    "nested-system": (
        "<system>" * (N // 8),
        "<system> cannot appear inside <system> … </system>: the tag opened at line 1, column 1",
    ),
    "deep-ifs": ("{% if a %}" * (N // 10), "Jinja blocks are nested more than 16 deep"),
    "deep-parens": (
        "{{ " + "(" * (N // 2) + "x" + ")" * (N // 2) + " }}",
        "Jinja here is nested too deeply to compile",
    ),
    "deep-lists": ("{{ " + "[" * 5000 + "]" * 5000 + " }}", "Jinja here is nested too deeply to compile"),
    "long-attribute-chain": ("{{ a" + ".b" * 5000 + " }}", "Jinja here is nested too deeply to compile"),
    "deep-not": ("{{ " + "not " * 5000 + "a }}", "Jinja here is nested too deeply to compile"),
    "unterminated-string": ("{{ '" + "a" * N, "unclosed '{{': no matching '}}'"),
    "unterminated-string-closed-later": ("{{ 'a }} " + "b" * N, "unterminated string in '{{ … }}'"),
    "angle-brackets": ("<" * N, None),
    "code-brackets": ("a[b[0]] " * (N // 8), None),
    "many-slots": ("".join(f"Q{i} [[s{i}]]\n" for i in range(N // 14)), None),
    "many-checkpoints": ("<checkpoint>" * (N // 12), None),
    "many-choices": ("[[pick:p|" + ",".join(f"w{i}" for i in range(N // 8)) + "]]", None),
    "many-variables": ("{{ x }} hello " * (N // 14), None),
    "newlines": ("\n" * N, None),
}


@pytest.mark.parametrize(("source", "error"), list(CASES.values()), ids=list(CASES))
def test_pathological_input_ends_quickly(source: str, error: str | None) -> None:
    started = time.perf_counter()
    if error is None:
        compile_template(source)
    else:
        with pytest.raises(TemplateSyntaxError) as caught:
            compile_template(source)
        assert caught.value.message == error
    assert time.perf_counter() - started < 15


def test_random_bytes_decoded_any_way_compile_or_fail_cleanly() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
        for text in (data.decode("latin-1"), data.decode("utf-8", "surrogateescape")):
            with contextlib.suppress(TemplateSyntaxError):
                compile_template(text)
