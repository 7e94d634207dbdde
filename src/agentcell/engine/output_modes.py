"""How a typed slot asks for its value (`tool`, `native`, `prompted`, `auto`), and what a run learns about servers.

A typed slot's answer is a one-field model `{response: T}` (`outputs.py`). pydantic-ai asks for it one of
three ways, all its own public markers: `ToolOutput` (a required call of the output tool: what every
hosted model does well), `NativeOutput` (the provider's JSON-schema `response_format`) and `PromptedOutput`
(the schema in the instructions, the JSON read from the answer's text). Local servers differ: llama.cpp's
answers a streamed request with tools with an empty stream or with prose, so a tool-mode typed slot there
never gets a value; asked in the prompt, even a small model can write `{"response": 4}`.

`auto` (the default) takes `tool`; a server that answers a required output-tool call with nothing or with
prose makes the slot ask again `prompted`
(`answers.py` finds it, `slot.py` restarts the slot and says so), and the run remembers it for the server
(`ServerFacts`), so later slots and a batch's later rows ask `prompted` at once.

Prompted answers are repaired where that cannot change their meaning (`repair`): the one JSON value inside
prose or a Markdown fence, a bare value for the one `response` field, a bare word that is one of a pick's
choices. Anything else is fed back to the model as a validation error, as pydantic-ai does.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import NativeOutput, PromptedOutput, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.models.wrapper import WrapperModel

from ..usage import OutputMode

Asked = Literal["tool", "native", "prompted"]
"""An output mode as a request uses it (`auto` resolved)."""

PROMPT_TEMPLATE = (
    "Answer with one JSON object and nothing else: no prose, no Markdown. It must match this JSON schema:\n\n"
    "{schema}\n\n"
    'Write the object with your answer in it (for example {{"response": ...}}), not the schema.'
)
"""The instructions a `prompted` slot adds (pydantic-ai's `PromptedOutput(template=...)`; `{schema}` is the
answer's JSON schema). Small local models echo a bare schema back; the last line is for them."""

QUOTED = 160
"""How much of what a model wrote a message quotes."""


@dataclass(eq=False)
class ServerFacts:
    """What runs learned about their servers as they went, keyed by `server_key`.

    Shared by the runs of one prepared setup (a batch's rows), touched only from the event loop."""

    prompted: set[str] = field(default_factory=set)
    """Servers that answered a required output-tool call with nothing or with prose: typed slots in `auto` ask
    them `prompted`."""
    unstreamed_tools: set[str] = field(default_factory=set)
    """Servers that answered a streamed request with tools with nothing: requests with tools go unstreamed."""
    serial: dict[str, asyncio.Semaphore] = field(default_factory=dict)
    """Servers that cut an answer off or sent an empty one (llama.cpp's ends the stream it is writing when another
    request waits): the run's requests to them go one at a time, through this gate."""


def server_key(model: Model) -> str:
    """One server and model: the system, the model name and the base URL (wrappers looked through)."""
    inner = model
    while isinstance(inner, WrapperModel):
        inner = inner.wrapped
    return f"{inner.system}:{inner.model_name}@{getattr(inner, 'base_url', None) or ''}"


def talks_to_server(model: Model) -> bool:
    """Whether `model` (wrappers looked through) sends its requests to a server (it has a base URL)."""
    inner = model
    while isinstance(inner, WrapperModel):
        inner = inner.wrapped
    return bool(getattr(inner, "base_url", None))


def chosen_mode(requested: OutputMode | None, run_mode: OutputMode, model: Model, facts: ServerFacts) -> Asked:
    """The mode a typed slot asks in: the slot's `output_mode=`, else the run's; `auto` resolved for `model`."""
    mode = requested or run_mode
    if mode != "auto":
        return mode
    # Per model as the run finds it (not its pydantic-ai profile, whose first read loads the price data: ~0.8 s).
    return "prompted" if server_key(model) in facts.prompted else "tool"


def typed_output(answer: type[Any], mode: Asked) -> Any:
    """The `output_type` for `agent.run`: the slot's answer model in pydantic-ai's marker for `mode`."""
    if mode == "native":
        return NativeOutput(answer)
    if mode == "prompted":
        return PromptedOutput(answer, template=PROMPT_TEMPLATE)
    return ToolOutput(answer)


def repair(text: str, schema: dict[str, Any] | None) -> str | None:
    """The JSON to read instead of `text` when a safe repair exists, else `None` (`text` is read as it is).

    Safe: `text` holds exactly one JSON object (inside prose or a fence); or it is a bare value (`4`, `true`,
    `"red"`, a list) and the schema's one property is `response`; or a bare word that is one of the
    `response` enum's values. An object that parses as it stands is left alone, even if it is wrong.
    """
    stripped = _unfenced(text.strip())
    if not stripped:
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        value = _NOTHING
    wrapped = _only_response(schema)
    if value is _NOTHING:
        found = _one_object(stripped)
        if found is not None:
            value, stripped = json.loads(found), found
    if isinstance(value, dict) and (wrapped is None or "response" in value):
        return None if stripped == text.strip() else stripped  # as written (a fence pydantic-ai reads itself)
    if value is not _NOTHING:  # a bare value, or an object that is the value (`[[json:j]]`)
        return json.dumps({"response": value}) if wrapped is not None else None
    if wrapped is not None:
        word = stripped.strip("\"'`. \n")
        if word in _choices(wrapped):
            return json.dumps({"response": word})
    return None


def _choices(schema: dict[str, Any]) -> list[str]:
    """The enum values of a property's schema (`anyOf` members too: an optional pick is `enum | null`)."""
    found = [str(c) for c in schema.get("enum") or ()]
    for member in schema.get("anyOf") or ():
        if isinstance(member, dict):
            found.extend(str(c) for c in member.get("enum") or ())
    return found


_NOTHING: Any = object()


def _unfenced(text: str) -> str:
    if text.startswith("```"):
        body = text[3:]
        body = body.split("\n", 1)[1] if "\n" in body else body
        end = body.rfind("```")
        return (body[:end] if end >= 0 else body).strip()
    return text


def _only_response(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `response` property's schema when it is the schema's only property."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if isinstance(props, dict) and list(props) == ["response"] and isinstance(props["response"], dict):
        return props["response"]
    return None


def _one_object(text: str) -> str | None:
    """The one JSON object in `text` (prose around it), or `None` when there is none or more than one."""
    decoder = json.JSONDecoder()
    found: list[str] = []
    start = text.find("{")
    while start >= 0 and len(found) < 2:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(text[start:end])
        start = text.find("{", end)
    return found[0] if len(found) == 1 else None


def quoted(text: str) -> str:
    """What a model wrote, for a message: one line, clipped."""
    flat = " ".join(text.split())
    if not flat:
        return "nothing"
    return repr(flat if len(flat) <= QUOTED else flat[:QUOTED] + "…")
