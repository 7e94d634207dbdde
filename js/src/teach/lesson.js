// The run as a lesson: per slot, per round, what went to the model, what came back, what the tools
// did, and where agentcell stepped in (markers). Pure (reads the reducer's state, builds plain
// objects); the DOM is teach/lanes.js. The Python twin is src/agentcell/render/teaching/model.py —
// keep the two in step (tests/render/test_static_teaching.py and js/tests/teach.test.js check the same runs).
import { isTextType, slotAnswer, sortedRounds } from "../state.js";
import { markerWords, finalReason, words } from "./words.js";
import { rebuildRequests } from "./messages.js";

function marker(kind, fields = {}) {
  const w = markerWords(kind);
  return { kind, title: w.title, say: w.say, why: w.why, text: "", ...fields };
}

function payloadsOf(round, kind) {
  return round.items.filter((it) => it.type === "payload" && it.kind === kind).map((it) => it.data ?? {});
}

function toolMessages(request) {
  const out = new Map();
  if (!request) return out;
  for (const m of request.messages.slice(request.earlier)) if (m?.role === "tool" && m.tool_call_id != null) out.set(String(m.tool_call_id), String(m.content ?? ""));
  return out;
}

function nudgeIn(request) {
  if (!request) return null;
  for (const m of request.messages.slice(request.earlier)) {
    const c = typeof m?.content === "string" ? m.content : "";
    const at = c.indexOf(words.nudge_prefix);
    if (m?.role === "tool" && at >= 0) return c.slice(at);
  }
  return null;
}

function withheldReason(slot, r, ctx) {
  const lim = slot.limits ?? {};
  if (Number.isFinite(lim.requests) && r >= lim.requests) return finalReason("max_iter", lim.requests);
  if (ctx.nudge && ctx.prevNudge) return finalReason("loop");
  if (Number.isFinite(lim.tool_calls) && ctx.callsSoFar >= lim.tool_calls) return finalReason("max_calls", lim.tool_calls);
  return finalReason("other");
}

function toolRun(it) {
  const start = Number.isFinite(it.startT) ? it.startT : null;
  const ms = Number.isFinite(it.elapsedMs) ? it.elapsedMs : null;
  return {
    name: it.name, server: it.server ?? null, callId: it.callId, args: it.args, status: it.status, result: it.result, error: it.error,
    cached: !!it.cached, startT: start, elapsedMs: ms, endT: start !== null && ms !== null ? start + ms / 1000 : null, fedBack: null,
  };
}

/** Which runs overlapped in time: each run gets `with` (names of the runs it ran alongside). */
function overlaps(runs) {
  for (const a of runs) {
    a.with = runs.filter((b) => b !== a && a.startT !== null && b.startT !== null && a.endT !== null && b.endT !== null && a.startT < b.endT && b.startT < a.endT).map((b) => b.name);
  }
  return runs;
}

function itemMarkers(round, next) {
  const out = [];
  const fed = toolMessages(next);
  for (const it of round.items) {
    if (it.type === "narration") out.push(marker("retraction", { text: it.text, reason: it.reason }));
    else if (it.type === "retry") out.push(marker("retry", { text: `retrying in ${Number(it.delay || 0).toFixed(1)} s${it.reason ? ` after ${it.reason}` : ""} (attempt ${it.attempt})`, reason: it.reason }));
    else if (it.type === "guard") out.push(marker("guard_tripped", { text: it.reason }));
    else if (it.type === "warning") out.push(marker("warning", { text: it.message }));
    else if (it.type === "compaction" && it.status === "done") out.push(marker("compaction", { text: it.summary }));
    else if (it.type === "approval") out.push(approvalMarker(it, fed));
    else if (it.type === "resumed" && it.forked_from != null) {
      const edited = it.edited?.length ? ` (edited: ${it.edited.join(", ")})` : "";
      out.push(marker("fork_point", { text: `forked from ${it.forked_from} at round ${it.fork_round}${edited}` }));
    }
  }
  return out;
}

function approvalMarker(it, fed) {
  if (!it.resolved) return marker("approval_waiting", { text: `${it.name}(${JSON.stringify(it.args ?? {})})`, tool: it.name });
  if (it.resolved.approved) return marker("approval_approved", { text: it.name, tool: it.name });
  return marker("approval_denied", { text: fed.get(String(it.callId)) ?? it.resolved.reason ?? "", tool: it.name });
}

function modelSide(slot, round, isLast, response) {
  const thinking = round.items.filter((it) => it.type === "thinking").map((it) => it.text);
  const narration = round.items.filter((it) => it.type === "narration").map((it) => ({ text: it.text, reason: it.reason }));
  let answer = slot.streamed.get(round.round) ?? "";
  if (isLast && slot.hasValue) answer = isTextType(slot.type) ? slotAnswer(slot) : JSON.stringify(slot.value);
  const calls = round.items.filter((it) => it.type === "tool" || it.type === "approval").map((it) => ({ name: it.name, args: it.args, callId: it.callId }));
  const seen = new Set(calls.map((c) => String(c.callId)));
  for (const p of response?.parts ?? []) {
    if (p?.part_kind === "tool-call" && !seen.has(String(p.tool_call_id))) calls.push({ name: String(p.tool_name ?? "?"), args: p.args, callId: p.tool_call_id ?? null, output: true });
  }
  return { thinking, narration, answer, calls };
}

function lessonRound(slot, round, i, all, ctx) {
  const req = ctx.requests.get(round.round) ?? null;
  const next = ctx.requests.get(all[i + 1]?.round) ?? null;
  const response = payloadsOf(round, "model_response").at(-1) ?? null;
  const isLast = i === all.length - 1;
  const markers = [];
  const nudge = nudgeIn(req);
  if (nudge) markers.push(marker("nudge", { text: nudge }));
  const offered = req ? (Array.isArray(req.data.tools) ? req.data.tools.map(String) : []) : null;
  if (req && offered.length === 0 && ctx.hadTools) {
    markers.push(marker("final_round", { text: "(this request carries no tools)", reason: withheldReason(slot, round.round, { nudge, prevNudge: ctx.prevNudge, callsSoFar: ctx.calls }) }));
  }
  markers.push(...itemMarkers(round, next));
  const fed = toolMessages(next);
  const runs = overlaps(round.items.filter((it) => it.type === "tool").map(toolRun));
  for (const run of runs) if (run.callId != null && fed.has(String(run.callId))) run.fedBack = fed.get(String(run.callId));
  ctx.prevNudge = nudge;
  ctx.calls += runs.length;
  const row = round.items.find((it) => it.type === "request" && it.purpose !== "compaction");
  return {
    round: round.round, request: req, offered, response, markers, toolRuns: runs, http: payloadsOf(round, "http_exchange"),
    usage: response?.usage ?? (row ? { input_tokens: row.input, output_tokens: row.output } : null),
    latencyMs: row?.latencyMs ?? null, model: modelSide(slot, round, isLast, response),
  };
}

function slotMarkers(slot) {
  const out = [];
  if (slot.type === "halt" && slot.status === "completed") out.push(marker("guard_joined", { text: slot.hasValue ? JSON.stringify(slot.value) : "" }));
  if (slot.status === "budget_exhausted") out.push(marker("budget", { text: slot.error ?? "" }));
  return out;
}

/** One slot as a lesson: {name, type, status, rounds: [...], markers: [...]}. */
export function lessonSlot(state, slot) {
  const all = sortedRounds(slot).filter((r) => r.items.length || slot.streamed.has(r.round));
  const requests = new Map();
  const rebuilt = rebuildRequests(all.flatMap((r) => payloadsOf(r, "model_request").slice(-1)));
  let k = 0;
  for (const r of all) if (payloadsOf(r, "model_request").length) requests.set(r.round, rebuilt[k++]);
  const hadTools = (slot.useTools && state.tools.length > 0) || rebuilt.some((q) => Array.isArray(q.data.tools) && q.data.tools.length);
  const ctx = { requests, hadTools, prevNudge: null, calls: 0 };
  const rounds = all.map((r, i) => lessonRound(slot, r, i, all, ctx));
  return { name: slot.name, type: slot.type, status: slot.status, rounds, markers: slotMarkers(slot) };
}

/** The tools the run offered: [{name, description, schema}] (schema undefined when not sent). */
export function offeredTools(state) {
  const byName = new Map(state.tools.map((t) => [t, { name: t, description: "", schema: undefined }]));
  const schemas = Array.isArray(state.toolSchemas) ? state.toolSchemas : [];
  for (const s of schemas) {
    if (!s || typeof s !== "object") continue;
    const name = String(s.name ?? "?");
    const server = typeof s.server === "string" ? { server: s.server } : {}; // an MCP server's tool (`tools_listed`)
    byName.set(name, { name, description: String(s.description ?? ""), schema: s.parameters_json_schema ?? s.parameters ?? s.input_schema, ...server });
  }
  return [...byName.values()];
}

/** Every marker kind the run produced (for the legend and the tests). */
export function markerKinds(slots) {
  const kinds = new Set();
  for (const s of slots) {
    for (const m of s.markers) kinds.add(m.kind);
    for (const r of s.rounds) for (const m of r.markers) kinds.add(m.kind);
  }
  return [...kinds];
}
