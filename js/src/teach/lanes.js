// A slot's rounds drawn as a sequence in three lanes — your code & tools | agentcell | model: the
// request (role-labelled bubbles), the response (thinking, text, tool calls), the tool executions
// (time bars showing which ran together, cached, the error as the model reads it) and the markers.
import { h } from "../render/dom.js";
import { formatArgs, formatCount, formatMs, formatResult, plural, serverNote } from "../format.js";
import { bubbles, laneTag, markerEl, textBox } from "./bits.js";
import { LANES, words } from "./words.js";

/** The three lane headings (the grid's column heads). */
export function laneHeads() {
  return h("div", { class: "ac-lane-heads", role: "presentation" }, LANES.map((lane) => h("div", { class: "ac-lane-head", data: { lane } }, words.lanes[lane])));
}

function roundTitle(r) {
  const parts = [`round ${r.round}`];
  if (r.offered) parts.push(r.offered.length ? `${plural(r.offered.length, "tool")} offered` : "no tools offered");
  const est = r.usage?.estimated === true ? "~" : ""; // counted here: the provider reported none
  if (r.usage) parts.push(`${est}${formatCount(r.usage.input_tokens ?? 0)} in / ${est}${formatCount(r.usage.output_tokens ?? 0)} out tokens`);
  if (Number.isFinite(r.latencyMs) && r.latencyMs > 0) parts.push(formatMs(r.latencyMs));
  return h("h5", { class: "ac-round-title" }, parts.join(" · "));
}

function requestStep(r, part) {
  const req = r.request;
  const offered = r.offered.length
    ? h("div", { class: "ac-offered" }, "tools offered: ", r.offered.map((t) => h("code", { class: "ac-chip" }, t)))
    : h("div", { class: "ac-offered ac-none" }, "no tools offered in this request");
  return h(
    "div",
    { class: "ac-step ac-request", data: { lane: "agentcell", step: "request" }, aria: { label: `agentcell to model: request of round ${r.round}` } },
    h("div", { class: "ac-step-head" }, laneTag("agentcell", "agentcell → model"), h("span", {}, `request ${r.round}: ${plural(req.messages.length, "message")}, ${plural(req.messages.length - req.earlier, "new one")}`)),
    bubbles(req, part),
    offered,
  );
}

function responseStep(r, part) {
  const m = r.model;
  const body = [];
  for (const [i, t] of m.thinking.entries()) {
    body.push(h("details", { class: "ac-thinking", data: { part: `${part}-thinking-${i}` } }, h("summary", {}, `thinking (${plural(t.length, "char")})`), textBox("ac-thinking-text", t)));
  }
  for (const n of m.narration) body.push(h("div", { class: "ac-narration", data: { reason: n.reason } }, h("span", { class: "ac-caption" }, "text (retracted: narration):"), textBox("ac-narration-text", n.text)));
  if (m.answer) body.push(h("div", { class: "ac-answer-text" }, h("span", { class: "ac-caption" }, "text (the answer):"), textBox("ac-answer-box", m.answer)));
  for (const c of m.calls) {
    body.push(h("div", { class: "ac-call", data: { tool: c.name } }, h("span", { class: "ac-caption" }, c.output ? "answers through:" : "calls:"), " ", h("code", {}, `${c.name}(${formatArgs(c.args ?? {})})`)));
  }
  if (!body.length) body.push(h("div", { class: "ac-caption" }, "(waiting for the response…)"));
  return h(
    "div",
    { class: "ac-step ac-response", data: { lane: "model", step: "response" }, aria: { label: `model: response of round ${r.round}` } },
    h("div", { class: "ac-step-head" }, laneTag("model", "model → agentcell"), h("span", {}, "response")),
    body,
  );
}

function bar(run, t0, span) {
  if (run.startT === null || run.endT === null || !(span > 0)) return null;
  const left = ((run.startT - t0) / span) * 100;
  const width = Math.max(1.5, ((run.endT - run.startT) / span) * 100);
  const from = Math.round((run.startT - t0) * 1000);
  const to = Math.round((run.endT - t0) * 1000);
  const together = run.with.length ? `, at the same time as ${run.with.join(", ")}` : "";
  return h(
    "div",
    { class: "ac-timebar", role: "img", aria: { label: `${run.name} ran from ${from} ms to ${to} ms${together}` }, data: { from, to, concurrent: run.with.length ? "true" : null } },
    h("span", { class: "ac-timebar-fill", style: `left:${Math.min(98.5, left).toFixed(2)}%;width:${Math.min(100, width).toFixed(2)}%` }),
  );
}

function runEl(run, t0, span) {
  const badges = [];
  if (run.cached) badges.push(h("span", { class: "agentcell-badge agentcell-cached" }, "cached"));
  if (run.status === "error") badges.push(h("span", { class: "agentcell-badge agentcell-error-badge" }, "error"));
  if (run.status === "running") badges.push(h("span", { class: "agentcell-badge" }, "running…"));
  const result = run.status === "error" ? (run.fedBack ?? run.result ?? run.error) : formatResult(run.result ?? "");
  const caption = run.status === "error" ? "error fed back — the model reads:" : "→ result:";
  return h(
    "div",
    { class: "ac-run", data: { tool: run.name, status: run.status, cached: run.cached ? "true" : null } },
    h("div", { class: "ac-run-head" }, h("code", { class: "ac-run-call" }, `${run.name}(${formatArgs(run.args ?? {})})`), run.server ? h("span", { class: "ac-caption ac-run-server" }, serverNote(run.server)) : null, ...badges, run.elapsedMs !== null ? h("span", { class: "ac-run-ms" }, formatMs(run.elapsedMs)) : null),
    bar(run, t0, span),
    run.status !== "running" ? h("div", { class: "ac-run-result" }, h("span", { class: "ac-caption" }, caption), textBox("ac-result-box", result)) : null,
  );
}

function toolsStep(r) {
  const runs = r.toolRuns;
  const timed = runs.filter((x) => x.startT !== null && x.endT !== null);
  const t0 = timed.length ? Math.min(...timed.map((x) => x.startT)) : 0;
  const span = timed.length ? Math.max(...timed.map((x) => x.endT)) - t0 : 0;
  const together = runs.filter((x) => x.with?.length).length;
  return h(
    "div",
    { class: "ac-step ac-tools", data: { lane: "tools", step: "tools" }, aria: { label: `your code and tools: ${plural(runs.length, "tool call")} in round ${r.round}` } },
    h("div", { class: "ac-step-head" }, laneTag("tools", "agentcell → your tools"), h("span", {}, `${plural(runs.length, "call")} run${span > 0 ? ` · ${formatMs(span * 1000)} in all` : ""}`)),
    together ? h("div", { class: "ac-concurrent" }, `${together} tools ran at the same time (overlapping bars)`) : null,
    runs.map((run) => runEl(run, t0, span)),
  );
}

/** One round as its steps in the lanes. `part` keys the <details> a reader opened. */
export function roundEl(r, part) {
  return h(
    "div",
    { class: "ac-seq", data: { round: r.round }, role: "group", aria: { label: `round ${r.round}` } },
    roundTitle(r),
    r.markers.filter((m) => m.kind === "retry").map((m, i) => markerEl(m, `${part}-pre${i}`)),
    r.request ? requestStep(r, part) : null,
    responseStep(r, part),
    r.toolRuns.length ? toolsStep(r) : null,
    r.markers.filter((m) => m.kind !== "retry").map((m) => markerEl(m, part)),
  );
}
