// `reduce(state, event)`: deterministic and DOM-free. For speed on long streams it updates `state`
// in place and returns it. Unknown kinds are counted and kept (capped) for the teaching view, never
// thrown on.
import { addItem, createState, emptyUsage, evRound, getSlot, MAX_UNKNOWN, PAYLOAD_KINDS, TERMINAL } from "./core.js";
import { LONG_RUN_HANDLERS } from "./long-runs.js";
import { MEDIA_HANDLERS } from "./media.js";
import { RUN_HANDLERS } from "./run.js";
import { SLOT_HANDLERS } from "./slots.js";
import { TOOL_HANDLERS } from "./tools.js";

const HANDLERS = { ...RUN_HANDLERS, ...SLOT_HANDLERS, ...TOOL_HANDLERS, ...LONG_RUN_HANDLERS, ...MEDIA_HANDLERS };

export const KNOWN_KINDS = Object.freeze([...Object.keys(HANDLERS)]);

/** False for an event of another run (those never mix in); a `run_started` of a new run resets `state`. */
function admit(state, ev) {
  if (ev.kind === "run_started") {
    if (state.started && state.runId !== null && ev.run_id !== state.runId) {
      Object.assign(state, createState()); // a new run in the same view: start over
    }
    return true;
  }
  // "" / null: not tied to a run (e.g. widget.fail())
  return !(state.runId !== null && ev.run_id != null && ev.run_id !== "" && ev.run_id !== state.runId);
}

function dispatch(state, ev) {
  const handler = Object.hasOwn(HANDLERS, ev.kind) ? HANDLERS[ev.kind] : null;
  if (handler) handler(state, ev);
  else if (PAYLOAD_KINDS.has(ev.kind)) {
    const slot = getSlot(state, ev.slot);
    addItem(state, ev.slot, { type: "payload", v: 0, kind: ev.kind, data: ev }, evRound(slot, ev.round));
  } else {
    state.unknownCount++;
    if (state.unknown.length < MAX_UNKNOWN) state.unknown.push(ev);
  }
}

/** Apply one wire event. Returns `state` (updated in place). Never throws on odd input. */
export function reduce(state, ev) {
  if (!ev || typeof ev !== "object" || typeof ev.kind !== "string") return state;
  if (!admit(state, ev)) return state;
  if (typeof ev.t === "number" && Number.isFinite(ev.t)) {
    if (state.firstT === null) state.firstT = ev.t;
    if (ev.t > state.lastT) state.lastT = ev.t;
  }
  state.v++;
  try {
    dispatch(state, ev);
  } catch (err) {
    // A malformed event must not take the view down.
    console.warn("[agentcell] could not apply event", ev.kind, err);
  }
  return state;
}

export function replay(events, state = createState()) {
  if (Array.isArray(events)) for (const ev of events) reduce(state, ev);
  return state;
}

/**
 * The status to show: a terminal trait or a terminal event wins; else running once the run has
 * started; else the trait (normally "idle").
 */
export function displayStatus(traitStatus, state) {
  if (TERMINAL.has(traitStatus)) return traitStatus;
  if (state.ended) return state.status;
  if (traitStatus === "running" || state.started) return "running";
  return traitStatus || "idle";
}

/** The usage of the slot that is running (or ran last), for the header meter. */
/**
 * The header's slot meters: the running (or last) slot's name, its effective ceiling (its own
 * `max_iter` within the run's), and its requests counting the one in flight while it streams.
 */
export function currentSlotMeters(state) {
  const slot = state.currentSlot !== null ? state.slots.get(state.currentSlot) : null;
  if (!slot) return { name: null, usage: emptyUsage(), limits: state.limits ?? {}, requests: 0 };
  let sent = 0;
  for (const round of slot.rounds.values()) {
    for (const it of round.items) if (it.type === "payload" && it.kind === "model_request") sent++;
  }
  const live = slot.status === "running" && !state.ended;
  const requests = live ? Math.max(slot.usage.requests, sent) : slot.usage.requests;
  return { name: slot.name, usage: slot.usage, limits: slot.limits ?? state.limits ?? {}, requests };
}

/** Output tokens to show: the provider's count, plus an estimate (4 characters a token) of text since. */
export function shownOutputTokens(state) {
  const estimate = state.ended ? 0 : Math.ceil(state.pendingOut / 4);
  return { tokens: state.usage.output_tokens + estimate, estimated: estimate > 0 };
}

export function currentSlotUsage(state) {
  const slot = state.currentSlot !== null ? state.slots.get(state.currentSlot) : null;
  return slot ? slot.usage : emptyUsage();
}

/**
 * Keep `ev` in `events`, consecutive text deltas of one slot and round merged into one (the view's event list,
 * for the events export). With `reduce`, the one place the browser merges streamed text; the kernel's is the
 * run's log (src/agentcell/engine/eventlog.py, `merged_from`), so a batch already holds one delta per stream.
 */
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
