// The header: model, offline badge, status, elapsed time, budget meters, tokens, cost, the context
// gauge, and the hint under it. Stop and Teaching view are its buttons (their clicks are wired in view.js).
import { currentSlotMeters, pendingApprovals, shownOutputTokens, TERMINAL } from "../state.js";
import { costExact, formatCost, formatCount, formatElapsed, formatTokens, label, statusLabel } from "../format.js";
import { h, setAttr, setHidden, setText } from "../render/dom.js";
import { LOST, lostText } from "./kernel.js";
import { buildSlotMeters, renderSlotMeters } from "./slot-meters.js";

const OFFLINE_TITLE = "No model configured: the offline default model answers with canned behaviour; nothing is sent over the network.";
const OFFLINE_CHOSEN_TITLE = "The offline model, as chosen: it answers with canned behaviour; nothing is sent over the network.";

function meterEl(cls, name) {
  const bar = h("span", { class: "agentcell-bar-fill" });
  const text = h("span", { class: "agentcell-meter-text" });
  const el = h(
    "span",
    { class: ["agentcell-meter-item", cls], title: `${name} used by the running slot / that slot's ceiling` },
    h("span", { class: "agentcell-meter-label" }, name, " "),
    text,
    h("span", { class: "agentcell-bar", "aria-hidden": "true" }, bar),
  );
  return { el, bar, text };
}

function contextEl() {
  const fill = h("span", { class: "agentcell-bar-fill" });
  const text = h("span", { class: "agentcell-meter-text" });
  const el = h(
    "span",
    { class: "agentcell-meter-item agentcell-context", hidden: true },
    h("span", { class: "agentcell-meter-label" }, "context "),
    text,
    h("span", { class: "agentcell-bar", "aria-hidden": "true" }, fill),
  );
  return { el, fill, text };
}

function button(cls, aria, title, text) {
  return h("button", { type: "button", class: `agentcell-btn ${cls}`, aria, title }, text);
}

/** The header's elements; `exportControls` go between the Teaching view and Stop buttons. */
export function buildHeader(exportControls) {
  const hd = {
    modelEl: h("span", { class: "agentcell-model", title: "model" }),
    offlineEl: h("span", { class: "agentcell-badge agentcell-offline", hidden: true, title: OFFLINE_TITLE }, label("offline")),
    // The dot is drawn by CSS, outside the live region, and has no text: only the status word is read.
    dotEl: h("span", { class: "agentcell-status-dot", "aria-hidden": "true" }),
    statusEl: h("span", { class: "agentcell-status", role: "status", "aria-live": "polite" }),
    gotoBtn: button("agentcell-goto-approval", {}, null, label("go_to_approval")),
    elapsedEl: h("span", { class: "agentcell-elapsed", title: "elapsed time" }, "0.0 s"),
    mReq: meterEl("agentcell-meter-requests", "requests"),
    mTools: meterEl("agentcell-meter-tools", "tool calls"),
    slotScope: h("span", { class: "agentcell-meter-scope", title: "the meters after this count the running slot" }),
    runScope: h("span", { class: "agentcell-meter-scope", title: "the meters after this count the whole run" }, "run:"),
    tokensEl: h("span", { class: "agentcell-meter-item agentcell-tokens", title: "tokens in / out (whole run; ~ where estimated: from the streamed text, or counted here when the provider reports no usage)" }),
    costEl: h("span", { class: "agentcell-meter-item agentcell-cost", title: "cost (whole run)", hidden: true }),
    context: contextEl(),
    slotMeters: buildSlotMeters(),
    teachBtn: button("agentcell-teach", { pressed: "false", label: "Teaching view: show tool declarations and raw JSON" }, "Teaching view", "Teaching view"),
    stopBtn: button("agentcell-stop", { label: "Stop the run" }, "Stop the run", "Stop"),
    hintEl: h("div", { class: "agentcell-hint", hidden: true }),
  };
  const meter = h("div", { class: "agentcell-meter" }, hd.slotScope, hd.mReq.el, hd.mTools.el, hd.context.el, hd.slotMeters, hd.runScope, hd.tokensEl, hd.costEl);
  const actions = h("div", { class: "agentcell-actions" }, hd.teachBtn, ...exportControls, hd.stopBtn);
  setHidden(hd.gotoBtn, true);
  const title = h(
    "div",
    { class: "agentcell-title" },
    (hd.logoEl = h("span", { class: "agentcell-logo", "aria-hidden": "true" }, "%%agent")),
    hd.modelEl,
    hd.offlineEl,
    h("span", { class: "agentcell-status-line" }, hd.dotEl, hd.statusEl),
    hd.gotoBtn,
    hd.elapsedEl,
  );
  hd.el = h("div", { class: "agentcell-header" }, title, meter, actions);
  return hd;
}

/** Seconds to show: frozen at the end; while running, the kernel clock extrapolated locally. */
function elapsedSeconds(ctx, status) {
  const { state } = ctx.store;
  const { ui } = ctx;
  if (state.ended) return state.endT ?? state.lastT;
  if (status === LOST) return Math.max(ui.shownElapsed, state.lastT); // the clock stops where it was
  if (TERMINAL.has(status) || !state.started) return state.lastT;
  const live = ui.elapsedAnchor.t + (ctx.now() - ui.elapsedAnchor.at) / 1000;
  ui.shownElapsed = Math.max(ui.shownElapsed, live);
  return ui.shownElapsed;
}

export function renderElapsed(hd, ctx, status) {
  setText(hd.elapsedEl, formatElapsed(elapsedSeconds(ctx, status)));
}

/** The approval the run waits for (not answered, not sent yet), or null. */
export function waitingFor(ctx, status) {
  if (TERMINAL.has(status) || status === LOST) return null;
  return pendingApprovals(ctx.store.state).find((it) => !ctx.ui.sentApprovals.has(it.callId)) ?? null;
}

function statusText(state, status, waiting) {
  if (status === LOST) return lostText(state);
  if (waiting) return label("waiting_approval", { tool: waiting.name });
  const shown = statusLabel(status);
  return state.earlyTermination && status === "halted" ? label("guard_status", { status: shown }) : shown;
}

function renderTitle(hd, ctx, status) {
  const { state } = ctx.store;
  const root = ctx.root;
  const waiting = waitingFor(ctx, status);
  setAttr(root, "data-status", status);
  setAttr(root, "data-waiting", waiting ? "approval" : null);
  setAttr(root, "data-teaching", ctx.ui.teaching ? "true" : "false");
  setAttr(root, "data-size", ctx.model.get("presentation") ? "presentation" : null);
  setText(hd.logoEl, ctx.model.get("origin") || "%%agent"); // `show()` (marimo, scripts) is not a %%agent cell
  setText(hd.modelEl, state.model || (state.started ? "model" : "…"));
  setHidden(hd.offlineEl, !state.offline);
  // Chosen (`-m offline`, AGENTCELL_MODEL=offline) or the default because nothing was configured: say which.
  setText(hd.offlineEl, label(state.offlineChosen ? "offline_chosen" : "offline"));
  setAttr(hd.offlineEl, "title", state.offlineChosen ? OFFLINE_CHOSEN_TITLE : OFFLINE_TITLE);
  setAttr(root, "data-offline", state.offline ? "true" : null);
  setText(hd.statusEl, statusText(state, status, waiting));
  setHidden(hd.gotoBtn, !waiting);
  setAttr(hd.gotoBtn, "aria-label", waiting ? `${label("go_to_approval")}: ${waiting.name}` : null);
  renderElapsed(hd, ctx, status);
}

function renderButtons(hd, ctx, ended) {
  const { ui } = ctx;
  // A focused Stop stays focusable once the run ended (aria-disabled only), so the focus is not dropped
  // to <body>; it becomes `disabled` when the focus leaves it (view.js re-renders on blur).
  const focused = hd.stopBtn.ownerDocument.activeElement === hd.stopBtn;
  hd.stopBtn.disabled = ended && !focused;
  setAttr(hd.stopBtn, "aria-disabled", ended ? "true" : "false");
  setText(hd.stopBtn, !ended && ui.stopping ? "Stopping…" : "Stop");
  setAttr(hd.stopBtn, "data-stopping", ui.stopping && !ended ? "true" : null);
  setAttr(hd.teachBtn, "aria-pressed", ui.teaching ? "true" : "false");
  const hint = ctx.model.get("hint");
  setHidden(hd.hintEl, !hint || ended);
  setText(hd.hintEl, hint || "");
}

function meterSet(m, used, limit) {
  const has = Number.isFinite(limit) && limit > 0;
  setText(m.text, has ? `${used}/${limit}` : String(used));
  setAttr(m.el, "data-used", used);
  setAttr(m.el, "data-limit", has ? limit : null);
  const frac = has ? Math.min(1, used / limit) : 0;
  m.bar.style.width = `${(frac * 100).toFixed(1)}%`;
  setAttr(m.el, "data-level", !has ? null : frac >= 1 ? "full" : frac >= 0.8 ? "high" : "ok");
}

function renderMeters(hd, state) {
  const sm = currentSlotMeters(state);
  setText(hd.slotScope, sm.name === null ? "slot:" : `slot ${sm.name}:`);
  meterSet(hd.mReq, sm.requests, sm.limits.requests);
  meterSet(hd.mTools, sm.usage.tool_calls, sm.limits.tool_calls);
  renderSlotMeters(hd.slotMeters, state, sm.name); // the other slots of a run of several
  const u = state.usage;
  const out = shownOutputTokens(state);
  // `~`: counted here (the provider reported no usage), or the text streamed since its last report.
  const inMark = u.estimated ? "~" : "";
  const outMark = out.estimated || u.estimated ? "~" : "";
  setText(hd.tokensEl, `tokens ${inMark}${formatCount(u.input_tokens)} in / ${outMark}${formatCount(out.tokens)} out`);
  setAttr(hd.tokensEl, "data-input", u.input_tokens);
  setAttr(hd.tokensEl, "data-output", out.tokens);
  setAttr(hd.tokensEl, "data-estimated", out.estimated || u.estimated ? "true" : null);
  // Shown once a request was answered: "—" when the model's price is unknown (never $0.00), the exact value on hover.
  setHidden(hd.costEl, !(u.requests > 0));
  setText(hd.costEl, `cost ${formatCost(u.cost)}`);
  setAttr(hd.costEl, "data-cost", Number.isFinite(u.cost) ? u.cost : null);
  setAttr(hd.costEl, "title", Number.isFinite(u.cost) ? `cost of the whole run: ${costExact(u.cost)}` : "cost unknown: no published price for this model");
}

function renderContext(hd, ctx) {
  const { state } = ctx.store;
  const { el, fill, text } = hd.context;
  const c = state.context;
  setHidden(el, !(c && c.window > 0));
  setAttr(ctx.root, "data-segment", state.segment > 1 ? state.segment : null);
  if (el.hidden) return;
  setAttr(el, "data-window-known", c.windowKnown ? null : "false");
  if (!c.windowKnown) {
    // No table knows this model's window: the tokens in use are a fact, a fraction of an assumed window is not.
    setText(text, `${c.estimated ? "~" : ""}${formatTokens(c.used)} · window unknown`);
    for (const name of ["data-window", "data-fraction", "data-level", "data-limit"]) setAttr(el, name, null);
    setAttr(el, "data-used", c.used);
    setAttr(el, "title", `tokens in use after request ${c.request ?? "?"}; the model's context window is not known (pass context_window= to give it)`);
    fill.style.width = "0%";
    return;
  }
  const frac = Math.max(0, c.fraction);
  setText(text, `${c.estimated ? "~" : ""}${formatTokens(c.used)} / ${formatTokens(c.window)}`);
  setAttr(el, "data-used", c.used);
  setAttr(el, "data-window", c.window);
  setAttr(el, "data-fraction", Math.round(frac * 1e4) / 1e4);
  setAttr(el, "data-level", frac >= 1 ? "full" : frac > 0.8 ? "high" : "ok");
  setAttr(el, "data-limit", c.window || null); // shows the bar (CSS hides it without a limit)
  const slot = c.slot != null ? ` of slot ${c.slot}` : "";
  setAttr(el, "title", `context window in use${slot} after request ${c.request ?? "?"}: ${(frac * 100).toFixed(1)}%${c.estimated ? " (estimate after compaction)" : ""}`);
  fill.style.width = `${(Math.min(1, frac) * 100).toFixed(1)}%`;
}

export function renderHeader(hd, ctx, status) {
  const ended = TERMINAL.has(status) || status === LOST;
  renderTitle(hd, ctx, status);
  renderButtons(hd, ctx, ended);
  renderMeters(hd, ctx.store.state);
  renderContext(hd, ctx);
}
