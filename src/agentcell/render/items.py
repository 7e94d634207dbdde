"""One run item (thinking, narration, tool call, approval, marker…) as escaped HTML or a text line.

Items come from the one `Transcript`; their words come from `labels.json`, as in the widget. Every
piece of text is escaped with `html.escape`: model and tool text never becomes markup.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from ..labels import label, retract_label
from ..transcript import ApprovalItem, Item, ToolItem
from ..transcript.items import MediaItem

LONG = 600
"""Tool results (and arguments) longer than this many characters are collapsed."""


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


def server_note(server: str) -> str:
    """"MCP server git": how every view names the server an MCP tool comes from (JS: `serverNote` in format.js)."""
    return label("mcp_server", server=server)


def _tool(item: ToolItem, *, ended: bool) -> str:
    status = item["status"]
    server = item["server"]
    named = f'<span class="ac-tool-server" title="{e(server_note(server))}">{e(server)} · </span>' if server else ""
    head = [f"tool {named}<strong><code>{e(item['name'])}</code></strong>"]
    if status == "error":
        head.append(f'<span class="ac-error">{e(label("tool_error"))}</span>')
    elif status == "running":
        head.append(f'<span class="ac-muted">{"did not finish" if ended else e(label("tool_running"))}</span>')
    if item["cached"]:
        head.append(e(label("cached")))
    ms = item["elapsed_ms"]
    if isinstance(ms, int | float):
        head.append(f"{ms:.0f} ms" if ms >= 1 else "&lt;1 ms")
    out = [f'<div class="ac-tool"><div>{" · ".join(head)}</div>']
    if item["args"] not in (None, {}):
        out.append(pre(as_json(item["args"]), label("arguments")))
    if status == "error":
        out.append(f'<div class="ac-error">{e(item["error"] or "")}</div>')
        out.append(pre(str(item["result"] or ""), label("error_result")))
    elif status == "ok":
        out.append(pre(str(item["result"] or ""), label("result")))
    out.append("</div>")
    return "".join(out)


THUMB_CHARS = 96 * 1024
"""Longest thumbnail `data:` URI a static page embeds (the kernel makes them at most 64 KB of image)."""
_THUMB = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+")


def media_caption(item: MediaItem) -> str:
    name = f" ({item['name']})" if item["name"] else ""
    where = "in the tool's result" if item["call_id"] is not None else "with the prompt"
    return f"{item['label'] or item['media_kind'] or 'media'}{name} — sent {where}"


def _media(item: MediaItem) -> str:
    """The thumbnail as an embedded `data:` URI (never a URL to fetch: the page works offline), and its caption."""
    thumb = item["thumb"]
    caption = media_caption(item)
    picture = ""
    if isinstance(thumb, str) and len(thumb) <= THUMB_CHARS and _THUMB.fullmatch(thumb):
        picture = f'<img class="ac-thumb" src="{e(thumb)}" alt="{e(caption)}" style="max-width:160px;max-height:120px">'
    return (f'<figure class="ac-media" data-item="media">{picture}'
            f'<figcaption class="ac-muted">{e(caption)}</figcaption></figure>')


def _approval(item: ApprovalItem) -> str:
    resolved = item["resolved"]
    if resolved is None:
        outcome = label("not_answered")
    elif resolved["approved"]:
        outcome = label("approved")
    else:
        reason = resolved["reason"]
        outcome = label("denied") + (f": {reason}" if reason else "")
    args = pre(as_json(item["args"])) if item["args"] else ""
    server = item["server"]
    named = f' <span class="ac-approval-server">({e(server_note(server))})</span>' if server else ""
    return (f'<div class="ac-tool">{e(label("approval_needed"))}: <strong><code>{e(item["name"])}</code></strong>'
            f"{named} — {e(outcome)}{args}</div>")


def item_text(item: Item) -> str | None:
    """The one-line text of a marker item (warning, retry, guard, checkpoint, resume, compaction)."""
    match item["type"]:
        case "warning":
            return f"⚠ {item['message']}"
        case "retry":
            why = f" after {item['reason']}" if item["reason"] else ""
            return f"retrying in {float(item['delay'] or 0):.1f} s{why} (attempt {item['attempt']})"
        case "guard":
            return f"{label('guard_tripped')}: {item['reason'] or label('no_reason')}"
        case "checkpoint":
            name = f" {item['name']}" if item["name"] else ""
            return f"{label('checkpoint')}{name}: {label('checkpoint_note')}"
        case "resumed" if item["forked_from"] is not None:
            edited = item["edited"]
            more = f" ({label('forked_edited')}: {', '.join(edited)})" if edited else ""
            return label("forked", run=item["forked_from"], round=item["fork_round"]) + more
        case "resumed":
            text = label("resumed", segment=item["segment"])
            if item["kept"]:
                text += f" · {label('resumed_kept')}: {', '.join(item['kept'])}"
            if item["restarting"]:
                text += f" · {label('resumed_restarting')}: {item['restarting']}"
            return text
        case "compaction":
            if item["status"] != "done":
                return label("compacting")
            return (f"{label('compacted')}: {item['summarized']} messages summarized, "
                    f"~{item['before']} → ~{item['after']} tokens")
    return None


def item_html(item: Item, *, ended: bool) -> str:
    """One item as HTML ("" for teaching-only items)."""
    match item["type"]:
        case "request" | "payload":  # the live widget shows these only in its teaching view
            return ""
        case "thinking":
            text = str(item["text"])
            return (f'<details class="ac-thinking"><summary>{e(label("thinking"))} ({len(text):,} chars)</summary>'
                    f"<pre>{e(text)}</pre></details>")
        case "narration":
            return (f'<div class="ac-narration"><em>{e(retract_label(item["reason"]))}</em><br>'
                    f"{e(item['text'])}</div>")
        case "tool":
            return _tool(item, ended=ended)
        case "approval":
            return _approval(item)
        case "media":
            return _media(item)
    kind = item["type"]
    marker = item_text(item)
    css = "ac-error" if kind in ("warning", "guard") else "ac-muted"
    body = e(marker) if marker is not None else e(as_json(dict(item)))
    if item["type"] == "compaction" and item["summary"]:
        body += pre(item["summary"], "summary")
    return f'<div class="{css}" data-item="{e(kind)}">{body}</div>'


def item_line(item: Item) -> str | None:
    """One item as a line of the plain-text transcript (`None`: not shown there)."""
    match item["type"]:
        case "tool":
            result = str(item["error"] or item["result"] or "")
            result = result if len(result) <= 300 else result[:297] + "..."
            args = json.dumps(item["args"] or {}, default=repr, ensure_ascii=False)
            server = item["server"]
            via = f" via {server_note(server)}" if server else ""
            return f"  tool {item['name']}({args}){via} -> {result}"
        case "approval":
            resolved = item["resolved"]
            outcome = label("not_answered") if resolved is None else label(
                "approved" if resolved["approved"] else "denied")
            server = item["server"]
            named = f" ({server_note(server)})" if server else ""
            return f"  approval {item['name']}{named}: {outcome}"
        case "narration":
            return f"  ({retract_label(item['reason'])}) {item['text']}"
        case "media":
            return f"  [{media_caption(item)}]"
    text = item_text(item)
    return None if text is None else f"  {text}"
