"""A round's wire for the static teaching view: OpenAI Chat Completions, pydantic-ai messages, the HTTP exchange.

Mirror of `js/src/teach/wire.js` (`wireData`): the same three formats, as three `<details>` (no script is
needed to switch); each block is a `<pre>` a reader can select, and in the lesson export a Copy button.
"""

from __future__ import annotations

import json
from typing import Any

from ..items import e
from .model import Json, LessonRound, words

FORMATS = ("openai", "pydantic_ai", "http")


def _arguments(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args or {})


def response_message(parts: Any) -> Json:
    """A response's pydantic-ai parts as the OpenAI assistant message (text joined, tool calls as `tool_calls`)."""
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    text = "".join(str(p.get("content") or "") for p in parts if p.get("part_kind") == "text")
    calls = [{"id": p.get("tool_call_id") or "", "type": "function",
              "function": {"name": str(p.get("tool_name") or ""), "arguments": _arguments(p.get("args"))}}
             for p in parts if p.get("part_kind") == "tool-call"]
    msg: Json = {"role": "assistant", "content": text or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def wire_data(r: LessonRound, fmt: str, *, model: str, tools: list[Json]) -> tuple[Any, Any] | None:
    """(request, response) of one round in `fmt`, or None when that format has nothing for it."""
    if fmt == "openai":
        request: Any = {"model": model, "messages": r.request.messages} if r.request else None
        if request is not None and r.offered:
            by = {t["name"]: t for t in tools}
            request["tools"] = [{"type": "function", "function": {"name": n, "description": by.get(n, {}).get(
                "description", ""), "parameters": by.get(n, {}).get("schema") or {}}} for n in r.offered]
        response = {"message": response_message(r.response.get("parts")), "usage": r.response.get("usage")} \
            if r.response else None
        return request, response
    if fmt == "pydantic_ai":
        parts = r.request.data.get("pydantic_ai") if r.request else None
        return ({"new_messages": parts} if isinstance(parts, list) else None,
                {"kind": "response", "parts": r.response.get("parts"), "usage": r.response.get("usage"),
                 "model_name": r.response.get("model_name")} if r.response else None)
    if not r.http:
        return None
    return [x.get("request") for x in r.http], [x.get("response") for x in r.http]


def _block(title: str, value: Any, copy: bool) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    button = '<button type="button" class="agentcell-btn ac-copy">Copy</button>' if copy else ""
    return (f'<div class="ac-wire-block"><div class="ac-wire-head"><span class="ac-caption">{e(title)}</span>'
            f'{button}</div><pre class="ac-wire-json" tabindex="0">{e(text)}</pre></div>')


def wire_html(r: LessonRound, *, model: str, tools: list[Json], copy: bool = False) -> str:
    """The round's wire in the three formats, each a closed `<details>`."""
    w = words()["wire"]
    out = []
    for fmt in FORMATS:
        data = wire_data(r, fmt, model=model, tools=tools)
        extra = f" · {len(r.http)} exchange{'s' if len(r.http) != 1 else ''}" if fmt == "http" and r.http else ""
        body = []
        if data is None:
            body.append(f'<p class="ac-caption ac-no-http">{e(w["no_http"] if fmt == "http" else "not available")}</p>')
        else:
            note = w["http_note" if fmt == "http" else "openai_note" if fmt == "openai" else "pydantic_note"]
            body.append(f'<p class="ac-caption">{e(note)}</p>')
            request, response = data
            http = fmt == "http"
            if request is not None:
                body.append(_block("HTTP request (body as sent)" if http else "request", request, copy))
            if response is not None:
                body.append(_block("HTTP response (events as received)" if http else "response", response, copy))
        out.append(f'<details class="ac-wire" data-round="{r.round}" data-format="{fmt}"><summary>the wire · '
                   f'round {r.round} · {e(w[fmt])}{e(extra)}</summary>{"".join(body)}</details>')
    return "".join(out)
