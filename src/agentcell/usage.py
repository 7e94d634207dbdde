"""What a run spends and may spend: `Usage` totals, the per-slot `Limits`, and how a run ended.

The bottom of the values layer (it imports nothing from agentcell): events, results, the journal and
the run options all build on these. The budget ceilings (`MAX_REQUESTS`, `MAX_TOOL_CALLS`,
`MAX_OUTPUT_TOKENS`) are defined here and nowhere else; `RunOptions`, the engine's ceiling, the magic's
settings and `show()` take their defaults from them. They live beside `Limits` rather than in
`options.py` because `Limits` is carried by events and results, which `options.py` itself imports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, TypeAlias, TypeGuard, get_args

from .formats.frozen import faster_init

MAX_REQUESTS = 20
"""Default ceiling of model requests per slot (`UsageLimits.request_limit`, `--max-iter`)."""
MAX_TOOL_CALLS = 20
"""Default ceiling of tool calls per slot (`UsageLimits.tool_calls_limit`, `--max-calls`)."""
MAX_OUTPUT_TOKENS = 250_000
"""Default ceiling of output tokens per slot (`UsageLimits.output_tokens_limit`, `--max-tokens`)."""

RunStatus: TypeAlias = Literal["completed", "stopped", "halted", "budget_exhausted", "failed"]
"""How a run (or one slot of it) ended: the final statuses. The one list of them in Python; the widget's
reducer reads the same list from `transcript/statuses.json`, which a test keeps equal to these types."""
SlotStatus: TypeAlias = Literal["pending", "running"] | RunStatus
"""Where a slot is: not started yet, running, or how it ended."""
LiveStatus: TypeAlias = Literal["idle", "running"] | RunStatus
"""A run as a view shows it: no event yet (`idle`), running, or how it ended (`RunStatus`)."""
FINAL_STATUSES: frozenset[RunStatus] = frozenset(get_args(RunStatus))
"""The values of `RunStatus`, for a check at run time (a wire event's status is any string)."""


def is_final(status: object) -> TypeGuard[RunStatus]:
    """Whether `status` is one a run or slot ends with (a wire event's status may be any value, a list too)."""
    return isinstance(status, str) and status in FINAL_STATUSES


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Usage totals for a slot or a run."""

    requests: int = 0
    """Model requests sent."""
    tool_calls: int = 0
    """Tool calls run."""
    input_tokens: int = 0
    """Tokens sent to the model, as the provider reported them."""
    output_tokens: int = 0
    """Tokens the model wrote, as the provider reported them."""
    cost: float | None = None
    """Price in USD where the model's price is known; `None` otherwise."""
    estimated: bool = False
    """Some of the token counts were counted here, not reported: the provider sent no usage for a response
    (llama.cpp's server streams none), so its tokens are a local estimate. Every view marks them `~`."""

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            requests=self.requests + other.requests,
            tool_calls=self.tool_calls + other.tool_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost=cost,
            estimated=self.estimated or other.estimated,
        )


OutputMode: TypeAlias = Literal["auto", "tool", "native", "prompted"]
"""How a typed slot (`[[int:n]]`, `[[pick:c|a,b]]`, `[[json:j]]`, …) asks the model for its value:

* `tool`: through pydantic-ai's output tool (`ToolOutput`): a required tool call whose arguments are the value;
* `native`: the provider's JSON-schema `response_format` (`NativeOutput`);
* `prompted`: the schema in the instructions, the JSON read from the answer's text (`PromptedOutput`),
  repaired where that is safe (a fenced or prose-wrapped object, a bare value);
* `auto` (the default): `tool`; and when a server answers a required output-tool call with nothing or with
  prose, the slot says so and asks again `prompted` (and so do the run's later typed slots on that server).
"""
OUTPUT_MODES: tuple[OutputMode, ...] = get_args(OutputMode)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The per-slot ceiling a run was started with."""

    requests: int = MAX_REQUESTS
    """Model requests per slot."""
    tool_calls: int = MAX_TOOL_CALLS
    """Tool calls per slot."""
    output_tokens: int = MAX_OUTPUT_TOKENS
    """Output tokens per slot."""


UNKNOWN_COST = "—"
"""What a view shows for a cost nobody knows (a model with no published price): never `$0.00`."""
SMALLEST_COST = 1e-8
"""Below this a known cost is shown as `< $0.00000001` (its exact value is in `cost_exact`)."""


def format_cost(cost: float | None) -> str:
    """A cost in USD for people: two significant digits under a dollar (`$0.0000045`, `$0.012`), cents above.

    Why not a fixed `$0.0000`: a 15-token `gpt-4o-mini` request costs $0.0000045 and a fixed four decimals
    saved it as `$0.0000`, which reads as free. Unknown (`None`, or not a finite number) is `—`, never
    `$0.00`. The widget's `formatCost` (js/src/format.js) is the same function; a shared table of cases
    (tests/fixtures/cost-format.json) keeps the two equal.
    """
    if not isinstance(cost, int | float) or isinstance(cost, bool) or not math.isfinite(cost):
        return UNKNOWN_COST
    if cost <= 0:
        return "$0"
    if cost >= 1:
        return f"${cost:,.2f}"
    if cost < SMALLEST_COST:
        return "< $0.00000001"
    digits = 1 - math.floor(math.log10(cost))  # decimals that keep two significant digits
    text = f"{cost:.{max(2, digits)}f}"
    if text == "1.00":  # 0.9996 rounds up to a dollar
        return "$1.00"
    head, _, tail = text.partition(".")
    return f"${head}.{tail[:2]}{tail[2:].rstrip('0')}"


def cost_exact(cost: float | None) -> str:
    """The exact cost for a tooltip: `$0.0000045` in plain decimals (12 significant digits), or `—`."""
    if format_cost(cost) == UNKNOWN_COST or cost is None:
        return UNKNOWN_COST
    return f"${Decimal(f'{cost:.12g}'):f}"


faster_init(Usage, Limits)  # summed and compared several times per run (`formats/frozen.py`)
