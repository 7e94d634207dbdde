"""Pathological cells: each ends in a result or one `TemplateSyntaxError`, never anything else, with work linear in the input.

Linear is pinned by counting calls at two sizes, not by timing (no test asserts a duration);
bench/bench_compile.py measures the same shapes up to 1 MB and shows the time is linear.
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from agentcell.errors import TemplateSyntaxError
from agentcell.template import compile_template

N = 200_000

SHAPES: dict[str, tuple[Callable[[int], str], str | None]] = {
    "open-slots": (
        lambda n: "[[" * (n // 2),
        "'[[' inside a slot: the slot opened at line 1, column 1 is not closed with ']]'",
    ),
    "close-slots": (lambda n: "]]" * (n // 2), "']]' without a matching '[['"),
    "open-variables": (lambda n: "{{" * (n // 2), "unclosed '{{': no matching '}}'"),
    "open-braces": (lambda n: "{" * n, "unclosed '{{': no matching '}}'"),
    "open-blocks": (lambda n: "{%" * (n // 2), "unclosed '{%': no matching '%}'"),
    "open-comments": (lambda n: "<!--" * (n // 4), "unclosed comment: '<!--' has no matching '-->'"),
    "nested-system": (
        lambda n: "<system>" * (n // 8),
        "<system> cannot appear inside <system> … </system>: the tag opened at line 1, column 1",
    ),
    "deep-ifs": (lambda n: "{% if a %}" * (n // 10), "Jinja blocks are nested more than 16 deep"),
    "deep-parens": (
        lambda n: "{{ " + "(" * (n // 2) + "x" + ")" * (n // 2) + " }}",
        "Jinja here is nested too deeply to compile",
    ),
    "unterminated-string": (lambda n: "{{ '" + "a" * n, "unclosed '{{': no matching '}}'"),
    "unterminated-string-closed-later": (lambda n: "{{ 'a }} " + "b" * n, "unterminated string in '{{ … }}'"),
    "angle-brackets": (lambda n: "<" * n, None),
    "code-brackets": (lambda n: "a[b[0]] " * (n // 8), None),
    "many-slots": (lambda n: "".join(f"Q{i} [[s{i}]]\n" for i in range(n // 14)), None),
    "many-checkpoints": (lambda n: "<checkpoint>" * (n // 12), None),
    "many-choices": (lambda n: "[[pick:p|" + ",".join(f"w{i}" for i in range(n // 8)) + "]]", None),
    "many-variables": (lambda n: "{{ x }} hello " * (n // 14), None),
    "newlines": (lambda n: "\n" * n, None),
}
"""Inputs that grow with `n`, and the error each ends in (`None`: it compiles)."""

CASES = {
    **{name: (build(N), error) for name, (build, error) in SHAPES.items()},
    "deep-lists": ("{{ " + "[" * 5000 + "]" * 5000 + " }}", "Jinja here is nested too deeply to compile"),
    "long-attribute-chain": ("{{ a" + ".b" * 5000 + " }}", "Jinja here is nested too deeply to compile"),
    "deep-not": ("{{ " + "not " * 5000 + "a }}", "Jinja here is nested too deeply to compile"),
}


HANG_GUARD_S = 120
"""A hang guard, not a time limit under test: a compile that never ends fails the test after this long."""


def _compile(source: str) -> BaseException | None:
    """Compile in a daemon thread; the exception it ended in (`None`: it compiled)."""
    outcome: list[BaseException | None] = []

    def work() -> None:
        try:
            compile_template(source)
        except BaseException as exc:  # handed back to the test
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    if not outcome:
        raise AssertionError(f"hung: compile_template did not return within {HANG_GUARD_S} s")
    return outcome[0]


@pytest.mark.parametrize(("source", "error"), list(CASES.values()), ids=list(CASES))
def test_pathological_input_ends_in_a_result_or_one_syntax_error(source: str, error: str | None) -> None:
    ended = _compile(source)
    if error is None:
        assert ended is None
    else:
        assert isinstance(ended, TemplateSyntaxError), repr(ended)
        assert ended.message == error


def _python_calls(source: str) -> int:
    """How many Python and C functions compiling `source` calls: a measure of work that no load changes."""
    calls = 0

    def count(_frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        compile_template(source)
    except TemplateSyntaxError:
        pass
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("shape", list(SHAPES))
def test_work_grows_linearly_with_the_input(shape: str) -> None:
    """Twice the input costs at most about twice the calls (a quadratic scan would cost four times).

    Work done inside one C call (a regular expression, say) is not counted: bench/bench_compile.py
    times the same shapes up to 1 MB for that.
    """
    build, _ = SHAPES[shape]
    small, large = _python_calls(build(10_000)), _python_calls(build(20_000))
    assert large <= 2.2 * small + 100, (small, large)


def test_random_bytes_decoded_any_way_compile_or_fail_cleanly() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
        for text in (data.decode("latin-1"), data.decode("utf-8", "surrogateescape")):
            with contextlib.suppress(TemplateSyntaxError):
                compile_template(text)
