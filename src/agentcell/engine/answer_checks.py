"""Responses that are a server's state, not the model's decision: found after each request, handled by the slot.

pydantic-ai feeds an empty response back to the model ("please answer") and spends a request on it, as it
does an output tool the model did not call. Against a real local server these are rarely the model's doing:

* `empty`: no text and no tool call. llama.cpp's server answers so when it failed after sending HTTP 200 (a
  prompt past its context, a `tool_choice` it cannot serve), and when it cut a stream short for a waiting
  request before the first token;
* `cut_off`: text that ended with no finish reason at all (a normal end says `stop` or `length`): the same
  server ends a stream early when another request waits;
* `tools_unstreamed`: a streamed request with tools answered with nothing: the server sends tool calls only
  without streaming;
* `no_output_tool`: in `auto` mode, a required output-tool call answered with nothing or with prose.

The slot's model (`slotmodel.py`) raises `AnswerProblem` for these instead of letting pydantic-ai retry; the
slot (`slot.py`) goes on from its last request: after a bounded back-off for `empty`/`cut_off`, at once and
changed (`prompted`, unstreamed tool rounds) for the other two, saying so each time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters

from ..formats.frozen import faster_init
from ..options import HINT_STYLE
from .output_modes import quoted

Problem = Literal["empty", "cut_off", "tools_unstreamed", "no_output_tool"]

ANSWER_RETRIES = 3
"""How often an empty or cut-off answer is asked for again before the slot fails (a transient server state:
a few tries, not the slot's whole request budget)."""
BASE_DELAY_S = 1.0
"""The first wait before asking again; each further one doubles, with ±25 % jitter (so requests that a busy
server cut off together do not all come back at once)."""


class AnswerProblem(Exception):
    """A response the slot handles itself (see the module docstring)."""

    def __init__(self, kind: Problem, *, wrote: str = "", said: str | None = None, tools: bool = False) -> None:
        super().__init__(kind)
        self.kind = kind
        self.wrote = wrote
        """The text the response carried (empty for `empty`)."""
        self.said = said
        """The server's own explanation, when it sent one."""
        self.tools = tools
        """Whether the request offered tools (or the output tool)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Expect:
    """What the slot's model checks responses for."""

    auto_tool: bool = False
    """The slot asks in `tool` mode because of `auto`: a required output-tool call missed makes it fall back."""
    streamed: bool = True
    """Requests with tools are streamed (a server that answers them with nothing gets them unstreamed)."""
    network: bool = False
    """The model talks to a server (a missing finish reason means the server cut the stream)."""


def check(response: ModelResponse, params: ModelRequestParameters, expect: Expect) -> AnswerProblem | None:
    """The problem with `response` to the request with `params`, or `None` for an answer pydantic-ai should read."""
    if response.state == "suspended" or response.finish_reason in ("length", "content_filter"):
        return None
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    tools = bool(params.function_tools or params.output_tools)
    if calls:
        return None
    if not text.strip():
        if expect.streamed and params.function_tools:
            return AnswerProblem("tools_unstreamed", tools=True)
        if expect.auto_tool and params.output_tools and not params.allow_text_output:
            return AnswerProblem("no_output_tool", tools=True)
        return AnswerProblem("empty", tools=tools)
    if expect.auto_tool and params.output_tools and not params.allow_text_output:
        return AnswerProblem("no_output_tool", wrote=text, tools=True)
    if expect.network and _no_finish_reason(response):
        return AnswerProblem("cut_off", wrote=text, tools=tools)
    return None


def _no_finish_reason(response: ModelResponse) -> bool:
    """Whether a Chat Completions stream ended with no finish reason in any chunk. pydantic-ai then says `stop`
    anyway; only the raw reason it keeps in `provider_details` tells the two apart (OpenAI-style providers)."""
    details = response.provider_details or {}
    return response.provider_name == "openai" and response.finish_reason in (None, "stop") and (
        details.get("finish_reason") is None
    )


def opened_empty(params: ModelRequestParameters, expect: Expect, said: str | None) -> AnswerProblem:
    """The problem when the server's answer had not even a first chunk (`said`: the error as worded)."""
    if expect.streamed and params.function_tools:
        return AnswerProblem("tools_unstreamed", said=said, tools=True)
    if expect.auto_tool and params.output_tools and not params.allow_text_output:
        return AnswerProblem("no_output_tool", said=said, tools=True)
    return AnswerProblem("empty", said=said, tools=bool(params.function_tools or params.output_tools))


def delay(attempt: int, rng: random.Random | None = None) -> float:
    """Seconds before asking again the `attempt`-th time (1-based)."""
    base = BASE_DELAY_S * 2.0 ** (attempt - 1)
    return round(base * (1 + (rng or random.Random()).uniform(-0.25, 0.25)), 3)


def reason(problem: AnswerProblem) -> str:
    """The short reason a `Retrying` event shows."""
    return "empty answer" if problem.kind == "empty" else "answer cut off"


def prompted_hint() -> str:
    return "--output-mode prompted" if HINT_STYLE.get() == "cell" else "output_mode='prompted'"


def gave_up(slot: str, problem: AnswerProblem, attempts: int) -> str:
    """The one sentence a slot fails with once its answers stayed empty or cut off."""
    times = f"{attempts} times" if attempts > 1 else "once"
    said = f" (the server said: {problem.said})" if problem.said else ""
    if problem.kind == "cut_off":
        return (
            f"slot {slot!r}: the server cut the answer off {times}, with no finish reason, after "
            f"{len(problem.wrote)} characters{said}; servers that serve one request at a time do this when "
            "another request waits"
        )
    if problem.tools:
        return (
            f"slot {slot!r}: the server answered with no text and no tool call, {times}{said}; it may not "
            f"support tool calls: try {prompted_hint()}"
        )
    return (
        f"slot {slot!r}: the server answered with no text, {times}{said}; a prompt longer than the server's "
        "context window is answered this way too (its log says why)"
    )


def fallback_note(slot: str, problem: AnswerProblem) -> str:
    """The warning a slot shows when it changes how it asks (`no_output_tool`, `tools_unstreamed`)."""
    if problem.kind == "tools_unstreamed":
        return (
            f"slot {slot!r}: the server answered a streamed request with tools with nothing; this run sends its "
            "requests with tools without streaming (their answers arrive whole)"
        )
    what = f"with prose ({quoted(problem.wrote)})" if problem.wrote.strip() else "with nothing"
    return (
        f"slot {slot!r}: the server answered the required output-tool call {what}; asking for the value as JSON "
        "in the instructions instead (output mode prompted)"
    )


def serial_note(slot: str, problem: AnswerProblem) -> str:
    """The warning when a run starts sending a server one request at a time."""
    what = "cut an answer off" if problem.kind == "cut_off" else "sent an empty answer"
    return (
        f"slot {slot!r}: the server {what}, as servers that serve one request at a time do when another "
        "request waits; this run now sends it one request at a time"
    )


faster_init(Expect)  # one per request (`formats/frozen.py`)
