"""`%agent fork NAME --round N --result TOOL=VALUE …`: its words parsed into a `ForkRequest`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

from IPython.core.error import UsageError


@dataclass(frozen=True, slots=True, kw_only=True)
class ForkRequest:
    """What `%agent fork` asked for."""

    name: str
    """The notebook variable holding the run to fork (its handle)."""
    round: int
    results: dict[str, str] = field(default_factory=dict)
    """Call id or tool name → the new result the model reads."""
    message: str | None = None
    model: str | None = None
    slot: str | None = None
    output: str | None = None
    kind: str = "fork_request"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%agent fork: {message} (usage: %agent fork NAME --round N [--result TOOL=VALUE] "
                         "[--message TEXT] [--model M] [--slot S] [-o OUT])")


def parse_fork(words: Sequence[str]) -> ForkRequest:
    """Parse `%agent fork`'s words; `UsageError` (one line) for anything missing or malformed."""
    parser = _Parser(prog="%agent fork", add_help=False)
    parser.add_argument("name")
    parser.add_argument("--round", type=int, required=True)
    parser.add_argument("--result", action="append", default=[])
    parser.add_argument("--message")
    parser.add_argument("--model")
    parser.add_argument("--slot")
    parser.add_argument("-o", "--output")
    args = parser.parse_args(list(words))
    results: dict[str, str] = {}
    for item in args.result:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"%agent fork: --result takes TOOL=VALUE or CALL_ID=VALUE, got {item!r}")
        results[key] = value
    return ForkRequest(name=args.name, round=args.round, results=results, message=args.message, model=args.model,
                       slot=args.slot, output=args.output)
