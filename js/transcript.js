// Export: a transcript JSON built from the events the view has. The prompts live in Python, so the
// `messages` array is an approximation of the OpenAI Chat Completions history: per round, one
// assistant message (narration + tool_calls) and one `tool` message per call, then the answer.
// When the Python side sends an exact transcript (fields on processing_complete such as `messages`
// or `openai`), it is included verbatim.
import { slotAnswer } from "./state.js";

function toolCallJSON(item) {
  let args = "{}";
  try {
    args = JSON.stringify(item.args ?? {});
  } catch {
    /* keep {} */
  }
  return { id: item.callId ?? "", type: "function", function: { name: item.name, arguments: args } };
}

export function openaiMessages(state) {
  const messages = [];
  for (const slot of state.slots.values()) {
    const rounds = [...slot.rounds.values()].sort((a, b) => a.round - b.round);
    for (const round of rounds) {
      const narration = round.items.filter((i) => i.type === "narration").map((i) => i.text).join("");
      const tools = round.items.filter((i) => i.type === "tool");
      if (!narration && tools.length === 0) continue;
      const msg = { role: "assistant", content: narration || null, agentcell_slot: slot.name, agentcell_round: round.round };
      if (tools.length) msg.tool_calls = tools.map(toolCallJSON);
      messages.push(msg);
      for (const t of tools) {
        if (t.status === "running") continue;
        messages.push({ role: "tool", tool_call_id: t.callId ?? "", content: String(t.result ?? t.error ?? "") });
      }
    }
    const answer = slot.hasValue && !slot.sawTokens && slot.finalText === null ? JSON.stringify(slot.value) : slotAnswer(slot);
    if (answer) messages.push({ role: "assistant", content: answer, agentcell_slot: slot.name });
  }
  return messages;
}

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

/** Merge consecutive text deltas of one slot and round (as the Python EventLog does). */
export function appendCoalesced(events, ev) {
  const last = events[events.length - 1];
  if (
    last &&
    last.kind === ev.kind &&
    (ev.kind === "token_delta" || ev.kind === "thinking_delta") &&
    last.slot === ev.slot &&
    last.round === ev.round
  ) {
    events[events.length - 1] = { ...last, text: String(last.text ?? "") + String(ev.text ?? ""), t: ev.t };
  } else {
    events.push(ev);
  }
}
