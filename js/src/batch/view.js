// The batch widget's view: a header with Stop, the progress bar and its words, the live table, and
// the clicked row's full run view (the single-run view of js/src/view.js, fed through a row model).
//
// Kernel → view (custom messages): {kind: "rows", rows, progress, open?: [{index, status, events}]},
// {kind: "snapshot", rows, progress}, {kind: "row", index, status, msg, missing?}; traits `status`,
// `columns`, `score_columns`, `final` ({rows, progress, summary?, changes?} once the batch ended), `hint`.
// A scored batch's progress carries `summary` ({line, baseline?, ...}); its rows `passed`, `scores`, `expected`.
// View → kernel: {kind: "stop"}, {kind: "snapshot_request"}, {kind: "row", index, msg}, {kind: "retry"}.
import { statusLabel } from "../format.js";
import { h, setAttr, setText } from "../render/dom.js";
import { createView } from "../view.js";
import { countsText, segments, statsText } from "./progress.js";
import { createRowModel } from "./row-model.js";
import { FILTERS, changesTable, expectedBox, summaryText } from "./scores.js";
import { clearRows, createTable, markOpen, setColumns, setFilter, updateRows } from "./table.js";

const ENDED = new Set(["completed", "stopped"]);

function buildDOM(ctx) {
  const stopBtn = h("button", { type: "button", class: "agentcell-btn agentcell-stop", aria: { label: "Stop the whole batch" } }, "Stop");
  const statusEl = h("span", { class: "agentcell-status" });
  const bar = h("div", { class: "agentcell-batch-bar", role: "progressbar", aria: { label: "rows finished", valuemin: 0 } });
  const counts = h("p", { class: "agentcell-batch-counts", aria: { live: "polite" } });
  const stats = h("p", { class: "agentcell-batch-stats" });
  const hint = h("p", { class: "agentcell-hint", hidden: true });
  const summary = h("p", { class: "agentcell-batch-summary", hidden: true, aria: { live: "polite" } });
  const filter = h("select", { class: "agentcell-batch-filter", aria: { label: "show rows" } },
    FILTERS.map(([value, text]) => h("option", { value }, text)));
  const retryBtn = h("button", { type: "button", class: "agentcell-btn agentcell-batch-retry", hidden: true, aria: { label: "Run the failed and stopped rows again" } }, "Retry failed rows");
  const controls = h("div", { class: "agentcell-batch-controls" }, h("label", null, "Show ", filter), retryBtn);
  const changes = h("section", { class: "agentcell-batch-changed", hidden: true, aria: { label: "rows changed against the baseline" } });
  const table = createTable((index) => openRow(ctx, index), ctx.opts.maxShown);
  const detailTitle = h("span", { class: "agentcell-batch-detail-title" });
  const closeBtn = h("button", { type: "button", class: "agentcell-btn", aria: { label: "Close this row's run view" } }, "Close");
  const detailNote = h("p", { class: "agentcell-batch-note", hidden: true });
  const detailExpect = h("div", { class: "agentcell-batch-detail-expect" });
  const detailBody = h("div", { class: "agentcell-batch-detail-body" });
  const detail = h("section", { class: "agentcell-batch-detail", hidden: true, aria: { label: "one row's run" } },
    h("div", { class: "agentcell-batch-detail-head" }, detailTitle, closeBtn), detailNote, detailExpect, detailBody);
  const header = h("div", { class: "agentcell-header agentcell-batch-header" }, h("span", { class: "agentcell-batch-title" }, "Batch"), statusEl, stopBtn);
  const root = h("div", { class: "agentcell agentcell-batch", data: { status: "running" } }, header, bar, counts, stats, summary, hint, controls, table.el, changes, detail);
  return { root, stopBtn, statusEl, bar, counts, stats, summary, hint, filter, retryBtn, changes, table, detail, detailTitle, detailNote, detailExpect, detailBody, closeBtn };
}

function renderProgress(ctx) {
  const { parts, progress: p } = ctx;
  const status = ctx.model.get("status") ?? "running";
  const ended = ENDED.has(status);
  setAttr(parts.root, "data-status", status);
  setText(parts.statusEl, ctx.stopping && !ended ? "stopping…" : statusLabel(status));
  parts.stopBtn.disabled = ended || ctx.stopping;
  parts.bar.replaceChildren(...segments(p).map((s) => h("span", { class: `agentcell-batch-seg agentcell-batch-${s.group}`, style: `width:${s.percent.toFixed(2)}%` })));
  const finished = (p.done ?? 0) + (p.failed ?? 0) + (p.stopped ?? 0);
  setAttr(parts.bar, "aria-valuemax", p.total ?? 0);
  setAttr(parts.bar, "aria-valuenow", finished);
  setText(parts.counts, countsText(p) + (p.reason && p.reason !== "stopped" ? ` · ${p.reason}` : ""));
  setText(parts.stats, statsText(p));
  const hint = ctx.model.get("hint") ?? "";
  parts.hint.hidden = !hint;
  setText(parts.hint, hint);
  const summary = summaryText(p.summary);
  parts.summary.hidden = !summary;
  setText(parts.summary, summary);
  parts.retryBtn.hidden = !(ended && (num(p.failed) + num(p.stopped) + num(p.not_started)) > 0);
}

function num(v) {
  return Number.isFinite(v) ? v : 0;
}

function renderChanges(ctx, changes) {
  const table = changesTable(changes);
  ctx.parts.changes.hidden = !table;
  ctx.parts.changes.replaceChildren(...(table ? [h("p", { class: "agentcell-batch-note" }, "Rows that changed against the baseline:"), table] : []));
}

function openRow(ctx, index) {
  closeRow(ctx);
  const row = ctx.parts.table.trs.get(index)?._row;
  ctx.rowModel = createRowModel(ctx.send, index, row?.status ?? "running");
  ctx.parts.detail.hidden = false;
  ctx.parts.detailNote.hidden = true;
  setText(ctx.parts.detailTitle, rowTitle(row, index));
  const box = expectedBox(row);
  ctx.parts.detailExpect.replaceChildren(...(box ? [box] : []));
  ctx.rowView = createView(ctx.rowModel, ctx.parts.detailBody, ctx.opts);
  markOpen(ctx.parts.table, index);
}

/** "Row 7 · item = w07 · 1.2 s" — the row's number, its input (first field) and how long its run took. */
function rowTitle(row, index) {
  const parts = [`Row ${index}`];
  if (row && row.input !== undefined && row.input !== "") {
    const value = typeof row.input === "string" ? row.input : JSON.stringify(row.input);
    parts.push(row.input_name ? `${row.input_name} = ${value}` : value);
  }
  if (row && Number.isFinite(row.duration)) parts.push(`${row.duration.toFixed(1)} s${row.resumed ? " (an earlier batch)" : ""}`);
  return parts.join(" · ");
}

function closeRow(ctx) {
  if (!ctx.rowView) return;
  ctx.send({ kind: "row", index: ctx.rowModel.index, msg: { kind: "close" } });
  ctx.rowView.destroy();
  ctx.rowView = ctx.rowModel = null;
  ctx.parts.detail.hidden = true;
  ctx.parts.detailExpect.replaceChildren();
  markOpen(ctx.parts.table, null);
}

function toRow(ctx, index, status, msg) {
  if (!ctx.rowModel || ctx.rowModel.index !== index) return;
  ctx.rowModel.setStatus(status);
  if (msg) ctx.rowModel.deliver(msg);
}

function onMessage(ctx, msg) {
  if (!msg || typeof msg !== "object") return;
  if (msg.kind === "snapshot") clearRows(ctx.parts.table);
  if (msg.kind === "rows" || msg.kind === "snapshot") {
    updateRows(ctx.parts.table, Array.isArray(msg.rows) ? msg.rows : []);
    if (msg.progress) ctx.progress = msg.progress;
    for (const o of Array.isArray(msg.open) ? msg.open : []) toRow(ctx, o.index, o.status, { kind: "events", events: o.events });
    renderProgress(ctx);
  } else if (msg.kind === "row") {
    if (ctx.rowModel?.index === msg.index && msg.missing) {
      ctx.parts.detailNote.hidden = false;
      setText(ctx.parts.detailNote, msg.missing);
    }
    toRow(ctx, msg.index, msg.status, msg.msg);
  }
}

function loadFinal(ctx) {
  const final = ctx.model.get("final");
  if (!final || !Array.isArray(final.rows)) return false;
  clearRows(ctx.parts.table);
  updateRows(ctx.parts.table, final.rows);
  ctx.progress = final.progress ?? ctx.progress;
  renderChanges(ctx, final.changes);
  renderProgress(ctx);
  return true;
}

function connect(ctx) {
  const { model } = ctx;
  const handlers = {
    "msg:custom": (msg) => onMessage(ctx, msg),
    "change:final": () => loadFinal(ctx),
    "change:status": () => {
      if (!ENDED.has(model.get("status"))) ctx.stopping = false; // a retry runs again
      renderProgress(ctx);
    },
    "change:hint": () => renderProgress(ctx),
    "change:columns": () => setColumns(ctx.parts.table, model.get("columns") ?? []),
    "change:score_columns": () => setColumns(ctx.parts.table, ctx.parts.table.columns, model.get("score_columns") ?? []),
  };
  for (const [name, fn] of Object.entries(handlers)) model.on(name, fn);
  return () => {
    for (const [name, fn] of Object.entries(handlers)) model.off(name, fn);
  };
}

export function createBatchView(model, el, opts = {}) {
  const ctx = { model, opts, progress: {}, stopping: false, rowView: null, rowModel: null };
  ctx.send = (msg) => {
    try {
      model.send(msg);
    } catch (err) {
      console.warn("[agentcell] send failed", err);
    }
  };
  ctx.parts = buildDOM(ctx);
  el.append(ctx.parts.root);
  ctx.parts.stopBtn.addEventListener("click", () => {
    if (ctx.parts.stopBtn.disabled) return;
    ctx.send({ kind: "stop" });
    ctx.stopping = true;
    renderProgress(ctx);
  });
  ctx.parts.closeBtn.addEventListener("click", () => closeRow(ctx));
  ctx.parts.filter.addEventListener("change", () => setFilter(ctx.parts.table, ctx.parts.filter.value));
  ctx.parts.retryBtn.addEventListener("click", () => {
    ctx.parts.retryBtn.hidden = true;
    ctx.stopping = false;
    ctx.send({ kind: "retry" });
  });
  setColumns(ctx.parts.table, model.get("columns") ?? [], model.get("score_columns") ?? []);
  const disconnect = connect(ctx);
  if (!loadFinal(ctx)) ctx.send({ kind: "snapshot_request" });
  renderProgress(ctx);
  return {
    root: ctx.parts.root,
    get rowView() {
      return ctx.rowView;
    },
    openRow: (index) => openRow(ctx, index),
    destroy() {
      closeRow(ctx);
      disconnect();
      ctx.parts.root.remove();
    },
  };
}
