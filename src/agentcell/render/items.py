"""One run item (thinking, narration, tool call, approval, marker…) as escaped HTML or a text line.

Items come from the one `Transcript`; their words come from `labels.json`, as in the widget. Every
piece of text is escaped with `html.escape`: model and tool text never becomes markup.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from ..labels import label, retract_label

LONG = 600
"""Tool results (and arguments) longer than this many characters are collapsed."""
TEACHING_ONLY = frozenset({"request", "payload"})
"""Items the live widget shows only in its teaching view; the saved view leaves them out too."""

Item = Mapping[str, Any]


def e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def as_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def pre(text: str, caption: str | None = None) -> str:
    """Preformatted text under an optional caption; long text collapsed behind it."""
    body = f"<pre>{e(text)}</pre>"
    if len(text) <= LONG:
        return body if caption is None else f'<div class="ac-muted">{e(caption)}</div>{body}'
    return f"<details><summary>{e(caption or 'show')} ({len(text):,} chars)</summary>{body}</details>"


def _tool(item: Item, *, ended: bool) -> str:
    status = item.get("status", "running")
    head = [f"tool <strong><code>{e(item['name'])}</code></strong>"]
    if status == "error":
        head.append(f'<span class="ac-error">{e(label("tool_error"))}</span>')
    elif status == "running":
        head.append(f'<span class="ac-muted">{"did not finish" if ended else e(label("tool_running"))}</span>')
    if item.get("cached"):
        head.append(e(label("cached")))
    ms = item.get("elapsed_ms")
    if isinstance(ms, int | float):
        head.append(f"{ms:.0f} ms" if ms >= 1 else "&lt;1 ms")
    out = [f'<div class="ac-tool"><div>{" · ".join(head)}</div>']
    if item.get("args") not in (None, {}):
        out.append(pre(as_json(item["args"]), label("arguments")))
    if status == "error":
        out.append(f'<div class="ac-error">{e(item.get("error") or "")}</div>')
        out.append(pre(str(item.get("result") or ""), label("error_result")))
    elif status == "ok":
        out.append(pre(str(item.get("result") or ""), label("result")))
    out.append("</div>")
    return "".join(out)


def _approval(item: Item) -> str:
    resolved = item.get("resolved")
    if resolved is None:
        outcome = label("not_answered")
    elif resolved.get("approved"):
        outcome = label("approved")
    else:
        reason = resolved.get("reason")
        outcome = label("denied") + (f": {reason}" if reason else "")
    args = pre(as_json(item["args"])) if item.get("args") else ""
    return (f'<div class="ac-tool">{e(label("approval_needed"))}: <strong><code>{e(item["name"])}</code></strong>'
            f" — {e(outcome)}{args}</div>")


def item_text(item: Item) -> str | None:
    """The one-line text of a marker item (warning, retry, guard, checkpoint, resume, compaction)."""
    match item["type"]:
        case "warning":
            return f"⚠ {item['message']}"
        case "retry":
            why = f" after {item['reason']}" if item.get("reason") else ""
            return f"retrying in {float(item.get('delay') or 0):.1f} s{why} (attempt {item.get('attempt')})"
        case "guard":
            return f"{label('guard_tripped')}: {item.get('reason') or label('no_reason')}"
        case "checkpoint":
            name = f" {item['name']}" if item.get("name") else ""
            return f"{label('checkpoint')}{name}: {label('checkpoint_note')}"
        case "resumed":
            text = label("resumed", segment=item.get("segment"))
            if item.get("kept"):
                text += f" · {label('resumed_kept')}: {', '.join(item['kept'])}"
            if item.get("restarting"):
                text += f" · {label('resumed_restarting')}: {item['restarting']}"
            return text
        case "compaction":
            if item.get("status") != "done":
                return label("compacting")
            return (f"{label('compacted')}: {item.get('summarized')} messages summarized, "
                    f"~{item.get('before')} → ~{item.get('after')} tokens")
    return None


def item_html(item: Item, *, ended: bool) -> str:
    """One item as HTML ("" for teaching-only items)."""
    kind = item["type"]
    if kind in TEACHING_ONLY:
        return ""
    if kind == "thinking":
        text = str(item["text"])
        return (f'<details class="ac-thinking"><summary>{e(label("thinking"))} ({len(text):,} chars)</summary>'
                f"<pre>{e(text)}</pre></details>")
    if kind == "narration":
        return (f'<div class="ac-narration"><em>{e(retract_label(item["reason"]))}</em><br>'
                f"{e(item['text'])}</div>")
    if kind == "tool":
        return _tool(item, ended=ended)
    if kind == "approval":
        return _approval(item)
    marker = item_text(item)
    css = "ac-error" if kind in ("warning", "guard") else "ac-muted"
    body = e(marker) if marker is not None else e(as_json(dict(item)))
    if kind == "compaction" and item.get("summary"):
        body += pre(str(item["summary"]), "summary")
    return f'<div class="{css}" data-item="{e(kind)}">{body}</div>'


def item_line(item: Item) -> str | None:
    """One item as a line of the plain-text transcript (`None`: not shown there)."""
    kind = item["type"]
    if kind == "tool":
        result = str(item.get("error") or item.get("result") or "")
        result = result if len(result) <= 300 else result[:297] + "..."
        args = json.dumps(item.get("args") or {}, default=repr, ensure_ascii=False)
        return f"  tool {item['name']}({args}) -> {result}"
    if kind == "approval":
        resolved = item.get("resolved")
        outcome = label("not_answered") if resolved is None else label(
            "approved" if resolved.get("approved") else "denied")
        return f"  approval {item['name']}: {outcome}"
    if kind == "narration":
        return f"  ({retract_label(item['reason'])}) {item['text']}"
    text = item_text(item)
    return None if text is None else f"  {text}"
