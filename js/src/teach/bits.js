// Small DOM pieces the teaching view repeats: lane tags, message bubbles, markers with their "why".
import { h } from "../render/dom.js";
import { formatCount, plural } from "../format.js";
import { words } from "./words.js";
import { estimateTokens, messageText } from "./messages.js";

/** The lane a step belongs to, as a visible tag (the grid puts it in that lane's column). */
export function laneTag(lane, arrow) {
  return h("span", { class: "ac-lane-tag", data: { lane } }, arrow ?? words.lanes[lane]);
}

/** A block of text, shown whole (teaching payloads are clipped by Python), so it never needs to scroll. */
export function textBox(cls, text) {
  return h("div", { class: ["ac-text", cls] }, String(text ?? ""));
}

/** One message as a role-labelled bubble, with its estimated tokens; `fresh` ones are highlighted. */
export function bubble(m, fresh) {
  const role = String(m?.role ?? "?");
  const text = messageText(m);
  const label = role === "assistant" && Array.isArray(m?.tool_calls) && m.tool_calls.length ? "assistant · tool calls" : role === "tool" ? `tool result${m.tool_call_id ? ` · ${m.tool_call_id}` : ""}` : role;
  return h(
    "div",
    { class: "ac-bubble", data: { role, new: fresh ? "true" : null } },
    h("div", { class: "ac-bubble-head" }, h("span", { class: "ac-role" }, label), fresh ? h("span", { class: "ac-new" }, "new") : null, h("span", { class: "ac-tok" }, `~${formatCount(estimateTokens(text))} tok`)),
    textBox("ac-bubble-text", text),
  );
}

/** The request's messages: earlier ones folded behind "N earlier messages", new ones shown. */
export function bubbles(request, part) {
  const earlier = request.messages.slice(0, request.earlier);
  const fresh = request.messages.slice(request.earlier);
  return [
    earlier.length
      ? h("details", { class: "ac-earlier", data: { part: `${part}-earlier` } }, h("summary", {}, plural(earlier.length, "earlier message")), earlier.map((m) => bubble(m, false)))
      : null,
    ...fresh.map((m) => bubble(m, true)),
  ];
}

/** An intervention: its name, one sentence, the text the model received, and a "why" that expands. */
export function markerEl(m, part) {
  return h(
    "div",
    { class: "ac-marker", data: { marker: m.kind }, role: "note", aria: { label: `agentcell: ${m.title}` } },
    h("div", { class: "ac-marker-head" }, laneTag("agentcell"), h("strong", { class: "ac-marker-title" }, m.title)),
    h("p", { class: "ac-marker-say" }, m.say),
    m.reason && m.kind === "final_round" ? h("p", { class: "ac-marker-reason" }, `Why now: ${m.reason}.`) : null,
    m.text ? h("div", { class: "ac-marker-text" }, h("span", { class: "ac-caption" }, markerCaption(m.kind)), textBox("ac-received", m.text)) : null,
    m.why ? h("details", { class: "ac-why", data: { part: `${part}-why-${m.kind}` } }, h("summary", {}, "why?"), h("p", {}, m.why)) : null,
  );
}

function markerCaption(kind) {
  if (kind === "nudge" || kind === "approval_denied") return "what the model received:";
  if (kind === "retraction") return "the retracted text:";
  if (kind === "budget") return "the message:";
  if (kind === "guard_joined") return "the guard's verdict:";
  if (kind === "guard_tripped") return "reason (for the log, not for the person judged):";
  if (kind === "compaction") return "the summary the model now reads:";
  return "detail:";
}
