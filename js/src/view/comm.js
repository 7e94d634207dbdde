// Model wiring: custom messages (`events` batches, `snapshot`), the traits (`final`, `status`,
// `hint`), the snapshot request, and the render throttle (at most one render per animation frame,
// with a timer fallback because rAF does not fire in hidden tabs).
import { TERMINAL } from "../state.js";
import { applyEvents, applyFinal, unpackTexts } from "./store.js";

export const TICK_MS = 250;

/** schedule() → `render` runs once on the next animation frame (or after TICK_MS, whichever is first). */
export function createScheduler({ raf, caf }, render, isDestroyed) {
  let pending = false;
  let rafId = null;
  let timerId = null;
  function run() {
    if (!pending) return;
    pending = false;
    if (rafId !== null && caf) caf(rafId);
    clearTimeout(timerId);
    rafId = timerId = null;
    render();
  }
  function schedule() {
    if (pending || isDestroyed()) return;
    pending = true;
    if (raf) rafId = raf(run);
    timerId = setTimeout(run, TICK_MS);
  }
  function cancel() {
    clearTimeout(timerId);
    if (rafId !== null && caf) caf(rafId);
  }
  return { schedule, cancel };
}

/** Move the elapsed-time anchor to the kernel clock `t`, observed now. */
function anchor(ctx, t) {
  ctx.ui.elapsedAnchor = { t, at: ctx.now() };
}

function onMessage(ctx, msg) {
  if (!msg || typeof msg !== "object") return;
  if (msg.kind === "snapshot") ctx.reset();
  else if (msg.kind !== "events") return;
  const { store } = ctx;
  // A snapshot and the run's last batch come packed like the `final` trait (a long text sent once).
  if (applyEvents(store, unpackTexts(msg.events), ctx.reset)) anchor(ctx, store.state.lastT);
  // Optional: the kernel's clock (seconds since run start) when it sent this message, so a view that
  // opens late during a long silent tool call still shows the true elapsed time.
  if (typeof msg.t === "number" && Number.isFinite(msg.t) && msg.t >= store.state.lastT) anchor(ctx, msg.t);
  ctx.schedule();
}

/** Apply the `final` trait; false while the run has not ended (then the view asks for a snapshot). */
export function loadFinal(ctx) {
  const before = ctx.store.state.lastT;
  const loaded = applyFinal(ctx.store, ctx.model.get("final"), ctx.reset);
  if (ctx.store.state.lastT !== before) anchor(ctx, ctx.store.state.lastT);
  return loaded;
}

/**
 * Listen to the model; ask for a snapshot unless the `final` trait already holds the whole run.
 * Returns the function that stops listening.
 */
export function connect(ctx, renderElapsed) {
  const { model } = ctx;
  const handlers = {
    "msg:custom": (msg) => onMessage(ctx, msg),
    "change:final": () => (loadFinal(ctx), ctx.schedule()),
    "change:status": () => ctx.schedule(),
    "change:hint": () => ctx.schedule(),
    "change:source": () => ctx.schedule(),
    "change:presentation": () => ctx.schedule(),
    "change:origin": () => ctx.schedule(),
  };
  for (const [name, fn] of Object.entries(handlers)) model.on(name, fn);
  const ticker = setInterval(() => {
    const { state } = ctx.store;
    if (state.started && !state.ended && !TERMINAL.has(model.get("status"))) renderElapsed();
  }, TICK_MS);
  if (!loadFinal(ctx)) ctx.send({ kind: "snapshot_request" });
  return () => {
    clearInterval(ticker);
    for (const [name, fn] of Object.entries(handlers)) model.off(name, fn);
  };
}
