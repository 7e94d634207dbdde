// The reducer's state as the canonical transcript JSON (tests/fixtures/transcripts/README.md): the
// same JSON the Python port (`agentcell.transcript.Transcript.to_json()`) produces from the same
// events. Every key is always present, snake_case, `undefined` → `null`. Wire values (args, results,
// payloads, extra) are shared with the state, not copied: do not mutate the result.
import literals from "../../../src/agentcell/transcript/literals.json";
import { slotAnswer, sortedRounds } from "./core.js";

const nul = (x) => (x === undefined ? null : x);

/** JSON key → the state's key, where the state names it in camelCase. */
const STATE_KEY = {
  call_id: "callId", elapsed_ms: "elapsedMs", start_t: "startT", latency_ms: "latencyMs",
  messages_before: "messagesBefore", messages_after: "messagesAfter",
};
/** JSON key → its value when the item has no such key (else null): a slot-level resume marker keeps nothing. */
const ABSENT = { kept: [], edited: [] };

/**
 * Per item type: [json key, state key, value when absent]. The keys are the Python `TypedDict`s'
 * (src/agentcell/transcript/items.py, via literals.json `item_keys`): one table of item shapes.
 */
export const ITEM_FIELDS = Object.fromEntries(
  Object.entries(literals.item_keys).map(([type, keys]) => [type, keys.map((k) => [k, STATE_KEY[k] ?? k, ABSENT[k] ?? null])]),
);

export function itemJSON(item) {
  const out = { type: item.type };
  for (const [key, from, absent] of ITEM_FIELDS[item.type] ?? []) {
    out[key] = item[from] === undefined ? absent : item[from];
  }
  return out;
}

function usageJSON(u) {
  const out = { requests: u.requests, tool_calls: u.tool_calls, input_tokens: u.input_tokens, output_tokens: u.output_tokens, cost: nul(u.cost) };
  if (u.estimated) out.estimated = true; // only then, as in Python's usage_json
  return out;
}

function contextJSON(c) {
  if (!c) return null;
  return { used: c.used, window: c.window, fraction: c.fraction, request: nul(c.request), slot: nul(c.slot), estimated: !!c.estimated };
}

export function slotJSON(slot) {
  return {
    name: slot.name,
    type: slot.type,
    required: slot.required,
    use_tools: slot.useTools,
    index: nul(slot.index),
    limits: nul(slot.limits),
    status: slot.status,
    kept: slot.kept,
    round_base: slot.roundBase,
    answer: slotAnswer(slot),
    answer_stopped: slot.answerStopped,
    has_value: slot.hasValue,
    value: nul(slot.value),
    final_text: nul(slot.finalText),
    error: nul(slot.error),
    usage: usageJSON(slot.usage),
    rounds: sortedRounds(slot).map((r) => ({ round: r.round, items: r.items.map(itemJSON) })),
  };
}

/** The canonical transcript JSON of `state` (see tests/fixtures/transcripts/README.md). */
export function transcriptJSON(state) {
  return {
    run_id: state.runId,
    status: state.status,
    ended: state.ended,
    model: state.model,
    offline: state.offline,
    limits: state.limits,
    tools: state.tools,
    segment: state.segment,
    early_termination: state.earlyTermination,
    answer: nul(state.answer),
    usage: usageJSON(state.usage),
    first_t: state.firstT,
    last_t: state.lastT,
    end_t: state.endT,
    context: contextJSON(state.context),
    current_slot: state.currentSlot,
    items: state.run.items.map(itemJSON),
    slots: [...state.slots.values()].map(slotJSON),
    unknown_count: state.unknownCount,
    extra: state.extra,
  };
}
