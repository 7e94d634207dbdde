// The widget view: wires an anywidget model to the reducer and the DOM.
//
// Data flow (view/comm.js): custom messages {kind:"events"|"snapshot"} and the `final` trait feed
// `reduce` (view/store.js); any change schedules one render on the next animation frame, so the DOM
// is touched at most once per frame whatever the event rate. The render is view/header.js,
// view/slots.js and view/teaching.js; Copy / Download are view/export.js. What the person did
// (teaching view on, Stop clicked, approvals sent…) is the one `ui` object of view/ui.js.
import { pendingApprovals, TERMINAL } from "./state.js";
import { h } from "./render/dom.js";
import { buildTranscript } from "./transcript.js";
import { connect, createScheduler } from "./view/comm.js";
import { buildExport, notice, wireExport } from "./view/export.js";
import { placeFocus, focusedKey, settleFocus } from "./view/focus.js";
import { buildHeader, renderElapsed, renderHeader, waitingFor } from "./view/header.js";
import { createBody, renderBody, resetBody } from "./view/slots.js";
import { clearStore, createStore } from "./view/store.js";
import { buildTeaching, renderTeaching } from "./view/teaching.js";
import { buildStepper, renderStepper, wireStepper } from "./view/stepper.js";
import { buildCompare, renderCompare, wireCompare } from "./view/compare.js";
import { createUI } from "./view/ui.js";
import { LOST, viewStatus, watchKernel } from "./view/kernel.js";
import { wireCopy } from "./view/copy.js";
import { watchHostTheme } from "./view/theme.js";

function clockOf(opts) {
  return {
    now: opts.now ?? (() => (globalThis.performance ? performance.now() : Date.now())),
    raf: opts.requestAnimationFrame ?? globalThis.requestAnimationFrame?.bind(globalThis),
    caf: opts.cancelAnimationFrame ?? globalThis.cancelAnimationFrame?.bind(globalThis),
  };
}

function buildDOM(now) {
  const ex = buildExport();
  const hd = buildHeader(ex.controls);
  const body = createBody(now);
  const teach = buildTeaching();
  const step = buildStepper();
  const root = h("div", { class: "agentcell", data: { status: "idle", teaching: "false" } }, hd.el, hd.hintEl, ex.noticeEl, step.el, teach.el, body.runItemsEl, body.slotsEl);
  return { root, ex, hd, body, teach, step };
}

function render(ctx) {
  const { ui, store, parts } = ctx;
  if (ui.destroyed) return;
  try {
    const focused = focusedKey(ctx.root) ?? ui.focusKept;
    ui.focusKept = null;
    const status = viewStatus(ctx);
    const ended = TERMINAL.has(status) || status === LOST;
    if (ended) ui.stopping = false;
    renderHeader(parts.hd, ctx, status);
    const rctx = { teaching: ui.teaching, ended, sentApprovals: ui.sentApprovals, reasons: ui.reasons, onApprove: ctx.approve, ...ctx.forking };
    rctx.forkEdit = ui.forkEdit;
    renderBody(parts.body, store.state, rctx, `${ui.teaching}|${ui.sentVersion}|${ui.forkVersion}`);
    renderStepper(parts.step, ctx, store.events, ended);
    renderTeaching(parts.teach, store.state, ui.teaching, { source: ctx.model.get("source"), events: store.events });
    renderCompare(parts.cmp, ctx.model, ended);
    const pending = ended ? [] : pendingApprovals(store.state).filter((it) => !ui.sentApprovals.has(it.callId));
    settleFocus(ctx.root, ui, focused, pending);
  } catch (err) {
    console.error("[agentcell] render failed", err);
  }
}

/** Stop, Teaching view and the approval buttons: each changes `ui`, maybe tells Python, and re-renders. */
function wireActions(ctx) {
  const { hd } = ctx.parts;
  hd.stopBtn.addEventListener("click", () => {
    if (hd.stopBtn.disabled || hd.stopBtn.getAttribute("aria-disabled") === "true") return;
    ctx.send({ kind: "stop" });
    ctx.ui.stopping = true;
    ctx.schedule();
  });
  hd.stopBtn.addEventListener("blur", () => ctx.schedule()); // an ended run's Stop is disabled once the focus left it
  hd.gotoBtn.addEventListener("click", () => {
    const waiting = waitingFor(ctx, viewStatus(ctx));
    if (waiting) placeFocus(ctx.root, `approval:${waiting.callId}`, { force: true });
  });
  hd.teachBtn.addEventListener("click", () => {
    ctx.ui.teaching = !ctx.ui.teaching;
    ctx.schedule();
  });
  ctx.approve = (callId, approved, reason) => {
    ctx.send({ kind: "approve", call_id: callId, approved, reason: approved ? null : reason });
    ctx.ui.sentApprovals.set(callId, approved);
    ctx.ui.sentVersion++;
    ctx.ui.focusNext = `outcome:${callId}`; // the card is rebuilt: the focus goes to its outcome line
    ctx.schedule();
  };
  wireForking(ctx);
  wireExport(ctx.parts.ex, ctx);
  wireStepper(ctx.parts.step, ctx);
  ctx.offCompare = wireCompare(ctx.parts.cmp, ctx);
}

/** "Edit and re-run from here": open the editor (focus in its text box), Re-run (ask the kernel for the
 * fork, say so once, focus back on the button), Cancel (focus back on the button). */
function wireForking(ctx) {
  const { ui } = ctx;
  const changed = (focus) => {
    ui.forkVersion++;
    ui.focusNext = focus;
    ctx.schedule();
  };
  ctx.forking = {
    viewId: ctx.viewId,
    onForkEdit(edit) {
      ui.forkEdit = { ...edit };
      changed(`fork-value:${edit.key}`);
    },
    onForkCancel(edit) {
      ui.forkEdit = null;
      changed(`fork:${edit.key}`);
    },
    onForkGo(edit, value) {
      ctx.send({ kind: "fork", ...edit.target, value });
      ui.forkEdit = null;
      notice(ctx.parts.ex, "re-running from here: the new run is shown below");
      changed(`fork:${edit.key}`);
    },
  };
}

function createContext(model, opts) {
  const clock = clockOf(opts);
  const parts = buildDOM(clock.now);
  const ctx = { model, now: clock.now, ui: createUI(clock.now()), store: createStore(), parts, root: parts.root };
  ctx.viewId = Math.random().toString(36).slice(2, 8); // ids of labelled inputs are unique across views of a run
  parts.cmp = buildCompare(ctx.viewId); // a fork's "Compare with the original", below its slots
  parts.root.append(parts.cmp.el);
  ctx.send = (msg) => {
    try {
      model.send(msg);
    } catch (err) {
      console.warn("[agentcell] send failed", err);
    }
  };
  ctx.reset = () => {
    // A snapshot or a new run rebuilds the DOM outside a render: remember what had the focus.
    ctx.ui.focusKept = focusedKey(ctx.root) ?? ctx.ui.focusKept;
    clearStore(ctx.store);
    resetBody(parts.body);
    parts.teach.key = {};
    parts.step.key = "";
    ctx.ui.shownElapsed = 0;
  };
  ctx.flush = () => render(ctx);
  parts.teach.redraw = () => ctx.schedule();
  ctx.scheduler = createScheduler(clock, ctx.flush, () => ctx.ui.destroyed);
  ctx.schedule = ctx.scheduler.schedule;
  return ctx;
}

export function createView(model, el, opts = {}) {
  const ctx = createContext(model, opts);
  el.append(ctx.root);
  wireActions(ctx);
  const elapsed = () => renderElapsed(ctx.parts.hd, ctx, viewStatus(ctx));
  const disconnect = connect(ctx, elapsed);
  const unwatch = watchKernel(ctx);
  const uncopy = wireCopy(ctx);
  const untheme = watchHostTheme(ctx.root);
  ctx.flush();
  return {
    root: ctx.root,
    flush: ctx.flush,
    destroy() {
      ctx.ui.destroyed = true;
      disconnect();
      unwatch();
      uncopy();
      untheme();
      ctx.offCompare();
      ctx.scheduler.cancel();
      clearTimeout(ctx.parts.ex.noticeTimer);
      ctx.root.remove();
    },
    get state() {
      return ctx.store.state;
    },
    get events() {
      return ctx.store.events;
    },
    transcript: () => buildTranscript(ctx.store.state, ctx.store.events, { traitStatus: model.get("status") }),
    answerView: (name) => ctx.parts.body.slotViews.get(name)?.answerView,
  };
}
