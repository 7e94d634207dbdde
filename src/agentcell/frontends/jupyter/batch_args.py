"""The `%%agent` flags of a batch (`--over` and its options), kept out of `magics.py`.

Light on purpose: `magics.py` imports it at `%load_ext` time, so it imports nothing but IPython's
argument decorators. `batch_launch.py` reads the parsed values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from IPython.core.magic_arguments import argument

F = TypeVar("F", bound=Callable[..., Any])

_ARGUMENTS = (
    argument("--over", metavar="EXPR",
             help="Run the template once per row of EXPR: a DataFrame, a list of dicts or strings, or a quoted "
                  "glob of files (each row's fields are variables)."),
    argument("--keep", action="store_true", help="With --over: keep the input columns in the results."),
    argument("--concurrency", type=int, default=8, metavar="N", help="With --over: rows running at once (8)."),
    argument("--max-rows", type=int, metavar="N", help="With --over: run only the first N rows."),
    argument("--max-cost", type=float, metavar="USD",
             help="Stop once the known cost reached USD: with --over no row starts after, on one run no request "
                  "is sent after (a model with no published price never reaches it)."),
    argument("--resume", action="store_true", help="With --over: skip rows an earlier run of this template finished."),
    argument("--engine", choices=("kernel", "dask"), default="kernel",
             help="With --over: run the rows in this kernel, or on the Dask cluster of this kernel's client."),
    argument("--expect", action="append", metavar="SLOT=COLUMN",
             help="With --over: score slot SLOT against the rows' column COLUMN (repeatable); the results gain "
                  "`passed` and a score column per evaluator."),
    argument("--evaluators", metavar="EXPR",
             help="With --over: score with EXPR, a list of functions (output, expected, row) -> bool | float | dict "
                  "or pydantic-evals Evaluators (default with --expect: a type-aware equality)."),
    argument("--baseline", metavar="NAME|last",
             help="With --over: compare the scores with an earlier batch: `last` (this cell's previous batch) or a "
                  "variable holding a batch or its result."),
)


def batch_arguments(fn: F) -> F:
    """Add the batch flags to a magic (one decorator for all of them)."""
    for add in reversed(_ARGUMENTS):
        fn = add(fn)
    return fn


def expect_value(pairs: list[str] | None) -> dict[str, str] | None:
    """`--expect answer=gold --expect label=gold_label` as `{"answer": "gold", "label": "gold_label"}`.

    Raises:
        ValueError: a pair is not `SLOT=COLUMN` (the message names it).
    """
    if not pairs:
        return None
    out: dict[str, str] = {}
    for pair in pairs:
        slot, sep, column = pair.partition("=")
        if not sep or not slot.strip() or not column.strip():
            raise ValueError(f"--expect {pair!r}: write SLOT=COLUMN, e.g. --expect answer=gold")
        out[slot.strip()] = column.strip()
    return out


def over_value(expr: str, evaluate: Callable[[str], Any]) -> Any:
    """`--over "data/*.txt"` (quoted) is a glob; anything else is a notebook expression."""
    if len(expr) >= 2 and expr[0] == expr[-1] and expr[0] in "\"'":
        return expr[1:-1]
    return evaluate(expr)
