// Handlers for long runs: resumed segments, the context gauge, compaction markers and the
// per-request rows of the teaching view.
import { addItem, clearAnswer, evRound, findLast, getSlot, nextRound, normUsage, num, startSlot, touch } from "./core.js";

function formatSummary(x) {
  try {
    return x == null ? "" : JSON.stringify(x);
  } catch {
    return String(x);
  }
}

/** Slots that neither kept their value nor finished run again in the new segment: back to pending. */
function resetUnfinished(state, restarting) {
  for (const slot of state.slots.values()) {
    if (slot.kept || slot.status === "completed" || slot.name === restarting) continue;
    if (slot.status !== "pending") {
      slot.status = "pending"; // it runs again in this segment
      clearAnswer(slot);
      touch(slot);
    }
  }
}

/** A fork's marker fields (none for a resumed run): the original, the round kept up to, what was edited. */
function forkFields(ev) {
  if (ev.forked_from == null) return {};
  const edited = Array.isArray(ev.edited) ? ev.edited.map(String) : [];
  return { forked_from: String(ev.forked_from), fork_round: num(ev.fork_round), edited };
}

/** The slot that was stopped starts again after its kept rounds. */
function restart(state, name, fork) {
  const slot = getSlot(state, name);
  // Its finished rounds are kept; its partial answer is not (the engine writes it anew), and the
  // new segment numbers its rounds from 1 again: they are shown after the kept ones.
  const base = slot.rounds.size ? Math.max(...slot.rounds.keys()) : 0;
  addItem(state, name, { type: "resumed", v: 0, segment: state.segment, ...fork }, Math.max(1, base));
  slot.roundBase = base;
  slot.kept = false;
  clearAnswer(slot);
  slot.status = "running";
  state.currentSlot = slot.name;
  touch(slot);
}

function compactionItem(ev) {
  return {
    type: "compaction", v: 0, status: "running", tokens: num(ev.tokens), window: num(ev.window), messages: num(ev.messages),
    before: null, after: null, messagesBefore: null, messagesAfter: null, summarized: null, summary: "",
  };
}

function requestItem(ev) {
  const u = normUsage(ev.usage);
  return {
    type: "request",
    v: 0,
    request: num(ev.request),
    purpose: String(ev.purpose ?? "answer"),
    latencyMs: num(ev.latency_ms, null),
    model: String(ev.model ?? ""),
    ended: String(ev.ended ?? "completed"),
    input: u.input_tokens,
    output: u.output_tokens,
    cost: u.cost,
  };
}

export const LONG_RUN_HANDLERS = {
  run_resumed(state, ev) {
    state.segment = Math.max(2, Math.floor(num(ev.segment, state.segment + 1)));
    const kept = Array.isArray(ev.kept) ? ev.kept.filter((k) => k != null).map(String) : [];
    const restarting = ev.restarting == null ? null : String(ev.restarting);
    if (state.ended) {
      // run_resumed without its run_started (a stream that lost it): the run goes on all the same.
      state.ended = false;
      state.status = "running";
      state.endT = null;
    }
    const fork = forkFields(ev);
    addItem(state, null, { type: "resumed", v: 0, segment: state.segment, kept, restarting, ...fork });
    for (const name of kept) {
      const slot = getSlot(state, name);
      slot.kept = true;
      if (slot.status !== "completed") slot.status = "completed"; // its value came with an earlier segment
      touch(slot);
    }
    resetUnfinished(state, restarting);
    if (restarting !== null) restart(state, restarting, fork);
  },
  context_updated(state, ev) {
    const used = num(ev.used_tokens);
    const window = num(ev.window);
    const fraction = typeof ev.fraction === "number" && Number.isFinite(ev.fraction) ? ev.fraction : window > 0 ? used / window : 0;
    // `window_known: false`: the window is only assumed (for compaction); the gauge says "window unknown".
    state.context = { used, window, fraction, request: num(ev.request, null), slot: ev.slot ?? null, windowKnown: ev.window_known !== false };
  },
  compaction_started(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (slot) startSlot(state, slot);
    addItem(state, ev.slot, compactionItem(ev), slot ? nextRound(slot) : undefined);
  },
  compaction_finished(state, ev) {
    let [item, round, slot] = findLast(state, ev.slot, (it) => it.type === "compaction" && it.status === "running");
    if (!item) {
      slot = getSlot(state, ev.slot);
      item = addItem(state, ev.slot, { type: "compaction", v: 0, tokens: num(ev.before), window: 0, messages: num(ev.messages_before) }, slot ? nextRound(slot) : undefined);
      [, round] = findLast(state, ev.slot, (it) => it === item);
    }
    Object.assign(item, {
      status: "done",
      before: num(ev.before),
      after: num(ev.after),
      messagesBefore: num(ev.messages_before),
      messagesAfter: num(ev.messages_after),
      summarized: num(ev.summarized),
      summary: typeof ev.summary === "string" ? ev.summary : formatSummary(ev.summary),
    });
    if (state.context && state.context.slot === (ev.slot ?? null) && state.context.window > 0) {
      // Until the next request reports, the gauge shows the estimate after compaction.
      const used = item.after;
      state.context = { ...state.context, used, fraction: used / state.context.window, estimated: true };
    }
    touch(item, round, slot);
  },
  request_completed(state, ev) {
    const slot = getSlot(state, ev.slot);
    const item = requestItem(ev);
    let roundNo;
    if (item.purpose === "compaction") {
      // Its numbers count compactions, not rounds: it goes with the compaction marker it wrote.
      const [marker] = findLast(state, ev.slot, (it) => it.type === "compaction");
      roundNo = marker?.round ?? (slot ? nextRound(slot) : undefined);
    } else roundNo = evRound(slot, ev.request);
    addItem(state, ev.slot, item, roundNo);
  },
};
