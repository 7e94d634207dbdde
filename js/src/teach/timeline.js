// The run on a time axis, for the teaching view: each request (time to first token, streaming), each tool
// call (calls that ran together overlap), each wait (back-off, approval, step pause), to scale, with
// totals. Built from the view's events (each carries `t`). The Python twin is
// src/agentcell/render/timeline.py (the lesson export) — keep the two in step.
import { formatElapsed, formatMs } from "../format.js";
import { h } from "../render/dom.js";

const WAITS = new Set(["backoff", "step", "approval"]);

const bar = (b, fields) => {
  const x = { end: null, first: null, injected: false, error: false, ...fields };
  b.bars.push(x);
  return x;
};

function closeRequest(b, ev, t, fields) {
  const r = b.requests.get(ev.slot);
  if (r) Object.assign(r, { end: t, ...fields });
  b.requests.delete(ev.slot);
}

function closeWait(b, key, t) {
  const w = b.waits.get(key);
  if (w) w.end = t;
  b.waits.delete(key);
  return w;
}

// Event kind → what it does to the timeline (the same rules as render/timeline.py's `_Builder`).
const HANDLERS = {
  model_request: (b, ev, t) => b.requests.set(ev.slot, bar(b, { kind: "request", label: `request ${ev.round}`, start: t, round: ev.round })),
  token_delta: (b, ev, t) => {
    const r = b.requests.get(ev.slot);
    if (r && r.first === null) r.first = t;
  },
  model_response: (b, ev, t) => closeRequest(b, ev, t, {}),
  request_completed: (b, ev, t) => (ev.ended === "stopped" || ev.ended === "failed") && closeRequest(b, ev, t, { error: true }),
  retrying: (b, ev, t) => {
    const delay = Number(ev.delay_s) || 0;
    const reason = String(ev.reason ?? "");
    bar(b, { kind: "backoff", label: `back-off after ${reason}`, start: t, end: t + delay, injected: reason.includes("injected") });
    b.t1 = Math.max(b.t1, t + delay);
  },
  fault_injected: (b, ev) => {
    if (ev.target !== "model") return b.faulted.add(ev.call_id);
    const r = b.requests.get(ev.slot);
    if (r) r.injected = true;
  },
  // An MCP tool's bar names its server, as its card does ("git · git_commit").
  tool_started: (b, ev, t) => b.tools.set(ev.call_id, bar(b, { kind: "tool", label: `${ev.server ? `${ev.server} · ` : ""}${String(ev.tool_name ?? "?")}`, start: t, round: ev.round, injected: b.faulted.has(ev.call_id) })),
  tool_completed: (b, ev, t) => {
    const x = b.tools.get(ev.call_id);
    if (x) Object.assign(x, { end: t, error: ev.ok === false, injected: x.injected || String(ev.error ?? "").includes("injected") });
    b.tools.delete(ev.call_id);
  },
  step_paused: (b, ev, t) =>
    b.waits.set(`step:${ev.number}`, bar(b, { kind: "step", label: `paused before ${ev.before === "tool" ? `${ev.tool_name}()` : `request ${ev.round}`}`, start: t })),
  step_resumed: (b, ev, t) => {
    const w = closeWait(b, `step:${ev.number}`, t);
    const r = b.requests.get(ev.slot);
    if (w && r && r.first === null && r.start <= w.start) r.start = t; // the request went out when the pause ended
  },
  approval_requested: (b, ev, t) => b.waits.set(`approval:${ev.call_id}`, bar(b, { kind: "approval", label: `approval of ${ev.tool_name}`, start: t })),
  approval_resolved: (b, ev, t) => closeWait(b, `approval:${ev.call_id}`, t),
};
HANDLERS.thinking_delta = HANDLERS.token_delta;

/** Bars `{kind, label, start, end, first, injected, error, round}` and the axis `{t0, t1}`. */
export function timelineOf(events) {
  const b = { bars: [], requests: new Map(), tools: new Map(), waits: new Map(), faulted: new Set(), t1: 0 };
  let t0 = null;
  for (const ev of events) {
    const t = ev?.t;
    if (typeof t !== "number" || !Number.isFinite(t)) continue;
    if (t0 === null) t0 = t;
    b.t1 = Math.max(b.t1, t);
    if (Object.hasOwn(HANDLERS, ev.kind)) HANDLERS[ev.kind](b, ev, t);
  }
  return { bars: b.bars, t0: t0 ?? 0, t1: b.t1 };
}

function total(tl, kinds) {
  return tl.bars.filter((b) => kinds.has(b.kind)).reduce((s, b) => s + ((b.end ?? tl.t1) - b.start), 0);
}

function row(b, tl, span) {
  const end = b.end ?? tl.t1;
  const left = ((b.start - tl.t0) / span) * 100;
  const width = Math.min(Math.max(0.6, ((end - b.start) / span) * 100), 100 - left);
  const said = [`${formatMs((b.start - tl.t0) * 1000)} → ${formatMs((end - tl.t0) * 1000)}`, formatMs((end - b.start) * 1000)];
  let mark = null;
  if (b.first !== null) {
    said.push(`first token after ${formatMs((b.first - b.start) * 1000)}`);
    mark = h("span", { class: "ac-tl-ttft", style: `left:${(((b.first - b.start) / Math.max(end - b.start, 1e-9)) * 100).toFixed(2)}%` });
  }
  if (b.error) said.push("ended in an error");
  const aria = `${b.label}: ${said.join(", ")}${b.injected ? ", injected" : ""}`;
  return h(
    "li",
    { class: "ac-tl-row", data: { kind: b.kind, injected: b.injected ? "true" : null } },
    h("span", { class: "ac-tl-label" }, b.label, b.injected ? h("span", { class: "agentcell-badge ac-injected" }, "injected") : null),
    h("span", { class: "ac-tl-track" }, h("span", { class: "ac-tl-bar", role: "img", aria: { label: aria }, style: `left:${left.toFixed(2)}%;width:${width.toFixed(2)}%` }, mark)),
    h("span", { class: "ac-tl-said" }, said.join(", ")),
  );
}

/** The timeline section (or null when the run has no timed bars yet). */
export function timelineEl(events) {
  const tl = timelineOf(events);
  if (!tl.bars.length) return null;
  const span = Math.max(tl.t1 - tl.t0, 1e-9);
  const totals = `total ${formatElapsed(tl.t1 - tl.t0)} · model requests ${formatMs(total(tl, new Set(["request"])) * 1000)} · tools ${formatMs(total(tl, new Set(["tool"])) * 1000)} · waits ${formatMs(total(tl, WAITS) * 1000)}`;
  return h(
    "section",
    { class: "ac-timeline", aria: { label: "the run on a time axis" } },
    h("h4", { class: "ac-section-title" }, "Timeline"),
    h("ol", { class: "ac-tl-rows" }, [...tl.bars].sort((a, b) => a.start - b.start).map((b) => row(b, tl, span))),
    h("p", { class: "ac-tl-totals" }, totals),
  );
}
