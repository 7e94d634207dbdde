"""`agentcell.diff(a, b)`: where two runs first differ, and their slot values, rounds, tool calls and usage.

For a fork and its original, or two models of a comparison. The result is a plain `dict` (`RunDiff`)
that shows itself as HTML in a notebook (`_repr_html_`) and as text in a terminal (`repr`), so the
same call serves a person and a program. Rounds are compared from the runs' messages: per answer
slot, round k is the model's k-th response (its text and tool calls) and the tool results sent back.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)

from ..result import RunResult


class RunDiff(dict[str, Any]):
    """The difference of two runs as a dict; HTML in a notebook, text in a terminal."""

    def __repr__(self) -> str:
        return diff_text(self)

    def _repr_html_(self) -> str:
        return diff_html(self)


def diff(a: Any, b: Any) -> RunDiff:
    """Compare two finished runs (`RunResult`s, or anything with `.result()` / `.result`, like a run handle).

    Keys: `a`, `b` (run id, model, status, and `forked_from` / `fork_round` for a fork), `first_difference`
    (`{slot, round, part, a, b}` or `None` when no round differs), `slots` (`[{slot, a, b, same}]`),
    `rounds`, `tool_calls` and `usage` (each `{a, b}`).
    """
    ra, rb = _result(a, "a"), _result(b, "b")
    slots = list(dict.fromkeys([*ra.results, *rb.results]))
    return RunDiff(
        a=_who(ra),
        b=_who(rb),
        first_difference=_first_difference(ra, rb),
        slots=[{"slot": s, "a": ra.results.get(s), "b": rb.results.get(s),
                "same": _same(ra.results.get(s), rb.results.get(s))} for s in slots],
        rounds={"a": _rounds(ra), "b": _rounds(rb)},
        tool_calls={"a": ra.usage.tool_calls, "b": rb.usage.tool_calls},
        usage={"a": _usage(ra), "b": _usage(rb)},
    )


def _result(value: Any, which: str) -> RunResult:
    if isinstance(value, RunResult):
        return value
    got = getattr(value, "result", None)
    got = got() if callable(got) else got
    if not isinstance(got, RunResult):
        raise TypeError(f"diff() needs two finished runs; {which} is a {type(value).__name__} with no result yet")
    return got


def _who(result: RunResult) -> dict[str, Any]:
    who: dict[str, Any] = {"run_id": result.run_id, "model": result.model, "status": result.status}
    if result.forked_from is not None:
        who.update(forked_from=result.forked_from, fork_round=result.fork_round, edited=list(result.edited))
    return who


def _usage(result: RunResult) -> dict[str, Any]:
    u = result.usage
    return {"requests": u.requests, "tool_calls": u.tool_calls, "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens, "cost": u.cost}


def _same(x: Any, y: Any) -> bool:
    return _show(x) == _show(y)


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)


def _rounds(result: RunResult) -> int:
    return sum(isinstance(m, ModelResponse) for ms in result.slot_messages.values() for m in ms)


def _steps(messages: Sequence[ModelMessage]) -> list[tuple[int, str, str]]:
    """A slot's rounds as comparable pieces: (round, part, text), in order."""
    steps: list[tuple[int, str, str]] = []
    round_no = 0
    for message in messages:
        if isinstance(message, ModelResponse):
            round_no += 1
            for part in message.parts:
                if isinstance(part, TextPart) and part.content.strip():
                    steps.append((round_no, "text", part.content))
                elif isinstance(part, ToolCallPart):
                    steps.append((round_no, "tool call", f"{part.tool_name}({_show(part.args_as_dict())})"))
        elif isinstance(message, ModelRequest) and round_no:
            for rpart in message.parts:
                if isinstance(rpart, ToolReturnPart):
                    steps.append((round_no, "tool result", f"{rpart.tool_name}: {_show(rpart.content)}"))
                elif isinstance(rpart, RetryPromptPart):
                    steps.append((round_no, "tool result", f"{rpart.tool_name}: error {_show(rpart.content)}"))
    return steps


def _first_difference(a: RunResult, b: RunResult) -> dict[str, Any] | None:
    for slot in dict.fromkeys([*a.slot_messages, *b.slot_messages]):
        sa, sb = _steps(a.slot_messages.get(slot, ())), _steps(b.slot_messages.get(slot, ()))
        for i in range(max(len(sa), len(sb))):
            pa = sa[i] if i < len(sa) else None
            pb = sb[i] if i < len(sb) else None
            if pa != pb:
                where = pa or pb
                assert where is not None
                return {"slot": slot, "round": where[0], "part": where[1],
                        "a": None if pa is None else pa[2], "b": None if pb is None else pb[2]}
    return None


def _where(first: dict[str, Any] | None) -> str:
    if first is None:
        return "no round differs"
    return f"first differ in [[{first['slot']}]] round {first['round']}, {first['part']}"


def diff_text(d: RunDiff) -> str:
    """The diff as plain text (a terminal, a log)."""
    a, b = d["a"], d["b"]
    lines = [f"a: {a['run_id']} ({a['model']}, {a['status']})", f"b: {b['run_id']} ({b['model']}, {b['status']})"]
    for key, who in (("a", a), ("b", b)):
        if "forked_from" in who:
            lines.append(f"{key} is forked from {who['forked_from']} at round {who['fork_round']}")
    first = d["first_difference"]
    lines.append(_where(first))
    if first is not None:
        lines += [f"  a: {first['a']}", f"  b: {first['b']}"]
    for row in d["slots"]:
        mark = "=" if row["same"] else "≠"
        lines.append(f"{mark} [[{row['slot']}]]  a: {_clip(_show(row['a']))}  |  b: {_clip(_show(row['b']))}")
    lines.append(f"rounds a {d['rounds']['a']} / b {d['rounds']['b']} · tool calls a {d['tool_calls']['a']} / "
                 f"b {d['tool_calls']['b']} · tokens a {_tokens(d['usage']['a'])} / b {_tokens(d['usage']['b'])}")
    return "\n".join(lines)


def _tokens(u: dict[str, Any]) -> str:
    cost = "" if u["cost"] is None else f", ${u['cost']:.4f}"
    return f"{u['input_tokens']}+{u['output_tokens']}{cost}"


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def diff_html(d: RunDiff) -> str:
    """The diff as a small self-contained HTML table (a notebook output)."""
    e = html.escape
    a, b = d["a"], d["b"]
    head = (f"<tr><th scope='col'>run</th><th scope='col'>a: {e(a['model'])} <code>{e(a['run_id'])}</code></th>"
            f"<th scope='col'>b: {e(b['model'])} <code>{e(b['run_id'])}</code></th></tr>")
    rows = []
    for row in d["slots"]:
        style = "" if row["same"] else " class='agentcell-diff-differs' style='background:#fff3cd;color:#1a1a1a'"
        mark = "" if row["same"] else " <strong>(differs)</strong>"
        rows.append(f"<tr{style}><th scope='row'>[[{e(row['slot'])}]]{mark}</th>"
                    f"<td>{e(_show(row['a']))}</td><td>{e(_show(row['b']))}</td></tr>")
    for label, key in (("rounds", "rounds"), ("tool calls", "tool_calls")):
        rows.append(f"<tr><th scope='row'>{label}</th><td>{d[key]['a']}</td><td>{d[key]['b']}</td></tr>")
    rows.append(f"<tr><th scope='row'>tokens</th><td>{e(_tokens(d['usage']['a']))}</td>"
                f"<td>{e(_tokens(d['usage']['b']))}</td></tr>")
    first = d["first_difference"]
    where = e(_where(first))
    if first is not None:
        where += f": a <code>{e(_clip(str(first['a'])))}</code>, b <code>{e(_clip(str(first['b'])))}</code>"
    return (f"<div class='agentcell-diff'><p>{where}</p><table><thead>{head}</thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
