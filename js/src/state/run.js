// Handlers for the run as a whole: start, usage, run-level notes (retries, warnings, guards,
// checkpoints) and the end.
import { addItem, evRound, getSlot, normUsage, num, TERMINAL, touch } from "./core.js";

/** Fields of processing_complete the reducer reads; any other field goes to `state.extra`. */
const COMPLETE_FIELDS = ["kind", "run_id", "slot", "status", "early_termination", "answer", "usage", "t"];

function addUsageDelta(slot, before, after) {
  for (const k of ["requests", "tool_calls", "input_tokens", "output_tokens"]) {
    slot.usage[k] += Math.max(0, after[k] - before[k]);
  }
  if (after.cost !== null) {
    slot.usage.cost = (slot.usage.cost ?? 0) + Math.max(0, after.cost - (before.cost ?? 0));
  }
  if (after.estimated) slot.usage.estimated = true;
}

function declareSlots(state, infos) {
  for (const info of infos) {
    if (!info || info.name == null) continue;
    const s = getSlot(state, info.name);
    s.type = String(info.type ?? s.type);
    s.required = !!info.required;
    s.useTools = !!info.use_tools;
    touch(s);
  }
}

export const RUN_HANDLERS = {
  run_started(state, ev) {
    if (state.ended && (ev.run_id ?? null) === state.runId) {
      // The next segment of the same run (Run.resume()): keep every slot, run again.
      state.ended = false;
      state.status = "running";
      state.endT = null;
      state.earlyTermination = false;
      state.answer = undefined;
      state.extra = {}; // the exact transcript of the earlier segment no longer covers the run
    }
    state.started = true;
    state.runId = ev.run_id ?? null;
    state.model = String(ev.model ?? "");
    state.offline = !!ev.offline;
    state.offlineChosen = !!ev.offline_chosen;
    state.limits = ev.limits && typeof ev.limits === "object" ? ev.limits : null;
    state.tools = Array.isArray(ev.tools) ? ev.tools.map(String) : [];
    state.toolSchemas = ev.tool_schemas ?? ev.tool_defs ?? null;
    if (!TERMINAL.has(state.status)) state.status = "running";
    if (Array.isArray(ev.slots)) declareSlots(state, ev.slots);
  },
  usage_updated(state, ev) {
    const after = normUsage(ev.usage);
    const slot = getSlot(state, ev.slot ?? state.currentSlot);
    if (slot) addUsageDelta(slot, state.usage, after), touch(slot);
    state.usage = after;
    state.pendingOut = 0; // the provider's count replaces the estimate
  },
  retrying(state, ev) {
    const slot = getSlot(state, ev.slot);
    const item = { type: "retry", v: 0, attempt: num(ev.attempt), delay: num(ev.delay_s), reason: String(ev.reason ?? "") };
    addItem(state, ev.slot, item, evRound(slot, ev.round));
  },
  run_warning(state, ev) {
    const slot = getSlot(state, ev.slot);
    addItem(state, ev.slot, { type: "warning", v: 0, message: String(ev.message ?? "") }, slot?.currentRound);
  },
  guard_tripped(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (slot) slot.status = "halted";
    addItem(state, ev.slot, { type: "guard", v: 0, reason: String(ev.reason ?? "") }, slot?.currentRound);
  },
  checkpoint_reached(state, ev) {
    const slot = getSlot(state, ev.slot);
    addItem(state, ev.slot, { type: "checkpoint", v: 0, name: ev.name ?? null }, slot?.currentRound);
  },
  processing_complete(state, ev) {
    state.ended = true;
    state.status = TERMINAL.has(ev.status) ? ev.status : "failed";
    state.earlyTermination = !!ev.early_termination;
    state.answer = ev.answer;
    if (ev.usage) state.usage = normUsage(ev.usage);
    state.pendingOut = 0;
    state.endT = typeof ev.t === "number" ? ev.t : state.lastT;
    for (const [k, val] of Object.entries(ev)) {
      if (!COMPLETE_FIELDS.includes(k)) state.extra[k] = val;
    }
    for (const slot of state.slots.values()) {
      if (slot.status === "running" || slot.status === "pending") {
        if (slot.status === "running") slot.status = state.status === "completed" ? "completed" : state.status;
        touch(slot);
      }
    }
  },
};
