"""The `%%agent` flags of lesson mode (`--step`, `--predict`, `--inject SPEC`), kept out of `magics.py`.

Light on purpose, like `batch_args.py`: `magics.py` imports it at `%load_ext` time. `with_lesson_flags`
folds the parsed flags into the cell's `RunOptions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from IPython.core.magic_arguments import argument

if TYPE_CHECKING:
    from ...options import RunOptions
    from ..launch import LaunchSpec

F = TypeVar("F", bound=Callable[..., Any])

_ARGUMENTS = (
    argument("--step", action="store_true",
             help="Pause before every model request and every tool call: Next, Run to end or Stop in the widget "
                  "(or handle.step() / handle.go() with -o NAME)."),
    argument("--predict", action="store_true",
             help="With --step: before each model request, guess what the model will do; the reveal marks it."),
    argument("--inject", dest="inject", action="append", default=[], metavar="SPEC",
             help="Inject a fault on purpose (repeatable), labelled 'injected': TOOL=error[:message], TOOL=timeout, "
                  "TOOL=wrong-type, TOOL=slow:SECONDS, model=429[:retry-after], model=500, model=drop, "
                  "model=slow:TOKENS_PER_S; each once or *N."),
)


def lesson_arguments(fn: F) -> F:
    """Add the lesson flags to a magic (one decorator for all of them)."""
    for add in reversed(_ARGUMENTS):
        fn = add(fn)
    return fn


def with_lesson_flags(options: RunOptions, args: Any) -> RunOptions:
    """`options` with the cell's `--step`, `--predict` (which implies `--step`) and `--inject` specs."""
    step, predict, inject = bool(args.step), bool(args.predict), tuple(args.inject or ())
    if not (step or predict or inject):
        return options
    return replace(options, step=step or predict, predict=predict, inject=(*options.inject, *inject))


def show_cell(handle: Any, spec: LaunchSpec, line: str, cell: str) -> None:
    """The cell that produced the run, for its teaching view and lesson (`render/cell_source.py`)."""
    from ...render.cell_source import cell_source

    handle.show_source(cell_source(cell, call=f"%%agent {line.strip()}".rstrip(), context=spec.options.context,
                                   variables=spec.template.variables, model=spec.options.model))
