// The run as the view knows it: the reducer's state plus the coalesced events (for the events export).
// Everything that changes the state goes through `reduce` — live batches, snapshots and the `final` trait.
import { appendCoalesced, createState, reduce } from "../state.js";

export function createStore() {
  return { state: createState(), events: [] };
}

export function clearStore(store) {
  store.state = createState();
  store.events = [];
}

/**
 * Reduce `list` into the store. When a run_started of another run replaced the state inside `reduce`,
 * `reset()` (store and DOM) runs and the replaced state is kept. Returns true when the kernel clock moved.
 */
export function applyEvents(store, list, reset) {
  if (!Array.isArray(list)) return false;
  const before = store.state.lastT;
  for (const ev of list) {
    if (!ev || typeof ev !== "object") continue;
    const prevRun = store.state.runId;
    reduce(store.state, ev);
    if (prevRun !== null && store.state.runId !== prevRun) {
      const s = store.state; // reduce started this object over in place: keep it, drop the rest
      reset();
      store.state = s;
    }
    appendCoalesced(store.events, ev);
  }
  return store.state.lastT !== before;
}

const TABLE_KIND = "shared_texts";
const REF_KEY = "agentcell_text";

function resolveTexts(value, texts) {
  if (Array.isArray(value)) return value.map((v) => resolveTexts(v, texts));
  if (!value || typeof value !== "object") return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === REF_KEY && Number.isInteger(value[REF_KEY])) return texts[value[REF_KEY]] ?? "";
  const out = {};
  for (const k of keys) out[k] = resolveTexts(value[k], texts);
  return out;
}

/**
 * Events as Python packed them (src/agentcell/frontends/widget/shared_texts.py: the `final` trait, a snapshot, the run's
 * last batch): a first element
 * `{kind: "shared_texts", texts, events}` and, in the events it lists, `{agentcell_text: n}` for
 * `texts[n]` (a long text that occurs more than once travels once). `only` (an index into the
 * returned events, or null for all): resolve just that event. A list without the table is returned
 * as it is. The given list is never changed.
 */
export function unpackTexts(packed, only = null) {
  const head = Array.isArray(packed) ? packed[0] : null;
  if (!head || head.kind !== TABLE_KIND || !Array.isArray(head.texts)) return packed;
  const events = packed.slice(1);
  const holders = Array.isArray(head.events) ? head.events : [];
  for (const at of holders) {
    const i = at - 1;
    if (i >= 0 && i < events.length && (only === null || i === only)) events[i] = resolveTexts(events[i], head.texts);
  }
  return events;
}

/**
 * The `final` trait: every event of the run, the last one carrying the exact transcript. A view that
 * has not seen the run end resets and replays it. A view that has reduces only that last
 * processing_complete again — the same event plus `transcript` — so the reducer keeps everything and
 * records the transcript in `state.extra`. Returns false while there is no final yet.
 */
export function applyFinal(store, packed, reset) {
  if (!Array.isArray(packed) || packed.length === 0) return false;
  const { state } = store;
  if (!state.ended) {
    reset();
    applyEvents(store, unpackTexts(packed), reset);
    return true;
  }
  const lastAt = packed.length - 1 - (packed[0]?.kind === TABLE_KIND ? 1 : 0);
  const final = unpackTexts(packed, lastAt);
  const last = final[final.length - 1];
  const same = last && last.kind === "processing_complete" && last.run_id === state.runId && (typeof last.t !== "number" || last.t === state.endT);
  if (same && last.transcript) reduce(state, last);
  return true;
}
