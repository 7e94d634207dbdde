// Export data for Copy / Download. Nothing here converts a run to OpenAI messages: Python does that
// (its one converter, `to_openai`, behind `RunResult.to_openai()`) and the widget hands out what Python sent:
// - once the run ended, the exact transcript on processing_complete (`state.extra.transcript`, from
//   the `final` trait): {openai: [...], pydantic_ai: [...]};
// - mid-run, the teaching payloads: each `model_request` carries the request's messages (OpenAI shape)
//   from index `offset` on, so the latest request's messages are rebuilt from its slot's requests,
//   plus the answer of the latest `model_response` not yet carried by a request. Long contents there
//   are clipped by Python (teaching events never repeat a long answer).
import { slotAnswer, sortedRounds } from "./state.js";

/** The exact transcript Python sent with processing_complete, or null. */
export function exactTranscript(state) {
  const t = state.extra?.transcript;
  return t && typeof t === "object" ? t : null;
}

function payloads(slot, kind) {
  const out = [];
  for (const round of sortedRounds(slot)) for (const it of round.items) if (it.type === "payload" && it.kind === kind) out.push(it.data);
  return out;
}

/** The slot whose model request went out last: the current slot if it sent one, else the last that did. */
function requestSlot(state) {
  const current = state.currentSlot !== null ? state.slots.get(state.currentSlot) : null;
  if (current && payloads(current, "model_request").length) return current;
  return [...state.slots.values()].reverse().find((s) => payloads(s, "model_request").length) ?? null;
}

/**
 * A model response's parts (pydantic-ai part JSON) as the one assistant message Python's `to_openai`
 * makes of them (text parts joined, tool-call parts as `tool_calls`); null when it has neither.
 */
function responseMessage(parts) {
  const text = parts.filter((p) => p?.part_kind === "text").map((p) => String(p.content ?? "")).join("");
  const calls = parts
    .filter((p) => p?.part_kind === "tool-call")
    .map((p) => ({
      id: p.tool_call_id ?? "",
      type: "function",
      function: { name: String(p.tool_name ?? ""), arguments: typeof p.args === "string" ? p.args : JSON.stringify(p.args ?? {}) },
    }));
  if (!text && !calls.length) return null;
  const msg = { role: "assistant", content: text || null };
  if (calls.length) msg.tool_calls = calls;
  return msg;
}

/** Mid-run OpenAI messages from the teaching payloads (see the top of this file); null before any request. */
export function requestedMessages(state) {
  const slot = requestSlot(state);
  if (!slot) return null;
  let messages = [];
  let response = null;
  for (const round of sortedRounds(slot)) {
    for (const it of round.items) {
      if (it.type !== "payload") continue;
      const d = it.data ?? {};
      if (it.kind === "model_request" && Array.isArray(d.messages)) {
        const offset = Number.isInteger(d.offset) && d.offset > 0 ? d.offset : 0;
        messages = [...messages.slice(0, offset), ...d.messages];
        response = null;
      } else if (it.kind === "model_response" && Array.isArray(d.parts)) response = d;
    }
  }
  const answer = response && responseMessage(response.parts);
  return answer ? [...messages, answer] : messages;
}

/** OpenAI messages: the exact ones once the run ended, else the ones rebuilt from the model requests. */
export function openaiMessages(state) {
  const exact = exactTranscript(state)?.openai;
  return Array.isArray(exact) ? exact : requestedMessages(state);
}

/** The "agentcell events" export: run summary, per-slot results, OpenAI messages, coalesced events. */
export function buildTranscript(state, events, { traitStatus } = {}) {
  const slots = {};
  for (const slot of state.slots.values()) {
    slots[slot.name] = {
      type: slot.type,
      status: slot.status,
      value: slot.hasValue ? slot.value : null,
      text: slotAnswer(slot),
      error: slot.error,
      usage: slot.usage,
    };
  }
  return {
    format: "agentcell-transcript",
    version: 1,
    run_id: state.runId,
    model: state.model,
    offline: state.offline,
    status: state.ended ? state.status : (traitStatus ?? state.status),
    early_termination: state.earlyTermination,
    limits: state.limits,
    tools: state.tools,
    usage: state.usage,
    answer: state.answer ?? null,
    slots,
    messages: openaiMessages(state),
    exact: Object.keys(state.extra).length ? state.extra : undefined,
    events,
  };
}

/** The data Copy / Download hand out for `fmt`; null when that format is not available yet. */
export function exportData(state, events, fmt, opts) {
  if (fmt === "openai") return openaiMessages(state);
  if (fmt === "pydantic_ai") return exactTranscript(state)?.pydantic_ai ?? null;
  return buildTranscript(state, events, opts);
}
