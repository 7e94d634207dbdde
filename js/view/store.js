// The run as the view knows it: the reducer's state plus the coalesced events (for the events export).
// Everything that changes the state goes through `reduce` — live batches, snapshots and the `final` trait.
import { createState, reduce } from "../state.js";
import { appendCoalesced } from "../transcript.js";

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

/**
 * The `final` trait: every event of the run, the last one carrying the exact transcript. A view that
 * has not seen the run end resets and replays it. A view that has reduces only that last
 * processing_complete again — the same event plus `transcript` — so the reducer keeps everything and
 * records the transcript in `state.extra`. Returns false while there is no final yet.
 */
export function applyFinal(store, final, reset) {
  if (!Array.isArray(final) || final.length === 0) return false;
  const { state } = store;
  if (!state.ended) {
    reset();
    applyEvents(store, final, reset);
    return true;
  }
  const last = final[final.length - 1];
  const same = last && last.kind === "processing_complete" && last.run_id === state.runId && (typeof last.t !== "number" || last.t === state.endT);
  if (same && last.transcript) reduce(state, last);
  return true;
}
