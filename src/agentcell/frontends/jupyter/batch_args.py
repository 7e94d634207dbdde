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
)


def batch_arguments(fn: F) -> F:
    """Add the batch flags to a magic (one decorator for all of them)."""
    for add in reversed(_ARGUMENTS):
        fn = add(fn)
    return fn


def over_value(expr: str, evaluate: Callable[[str], Any]) -> Any:
    """`--over "data/*.txt"` (quoted) is a glob; anything else is a notebook expression."""
    if len(expr) >= 2 and expr[0] == expr[-1] and expr[0] in "\"'":
        return expr[1:-1]
    return evaluate(expr)
