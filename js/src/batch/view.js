// The batch widget's view: a header with Stop, the progress bar and its words, the live table, and
// the clicked row's full run view (the single-run view of js/src/view.js, fed through a row model).
//
// Kernel → view (custom messages): {kind: "rows", rows, progress, open?: [{index, status, events}]},
// {kind: "snapshot", rows, progress}, {kind: "row", index, status, msg, missing?}; traits `status`,
// `columns`, `final` ({rows, progress} once the batch ended), `hint`.
// View → kernel: {kind: "stop"}, {kind: "snapshot_request"}, {kind: "row", index, msg}.
import { statusLabel } from "../format.js";
import { h, setAttr, setText } from "../render/dom.js";
import { createView } from "../view.js";
import { countsText, segments, statsText } from "./progress.js";
import { createRowModel } from "./row-model.js";
import { clearRows, createTable, markOpen, setColumns, updateRows } from "./table.js";

const ENDED = new Set(["completed", "stopped"]);

function buildDOM(ctx) {
  const stopBtn = h("button", { type: "button", class: "agentcell-btn agentcell-stop", aria: { label: "Stop the whole batch" } }, "Stop");
  const statusEl = h("span", { class: "agentcell-status" });
  const bar = h("div", { class: "agentcell-batch-bar", role: "progressbar", aria: { label: "rows finished", valuemin: 0 } });
  const counts = h("p", { class: "agentcell-batch-counts", aria: { live: "polite" } });
  const stats = h("p", { class: "agentcell-batch-stats" });
  const hint = h("p", { class: "agentcell-hint", hidden: true });
  const table = createTable((index) => openRow(ctx, index), ctx.opts.maxShown);
  const detailTitle = h("span", { class: "agentcell-batch-detail-title" });
  const closeBtn = h("button", { type: "button", class: "agentcell-btn", aria: { label: "Close this row's run view" } }, "Close");
  const detailNote = h("p", { class: "agentcell-batch-note", hidden: true });
  const detailBody = h("div", { class: "agentcell-batch-detail-body" });
  const detail = h("section", { class: "agentcell-batch-detail", hidden: true, aria: { label: "one row's run" } },
    h("div", { class: "agentcell-batch-detail-head" }, detailTitle, closeBtn), detailNote, detailBody);
  const header = h("div", { class: "agentcell-header agentcell-batch-header" }, h("span", { class: "agentcell-batch-title" }, "Batch"), statusEl, stopBtn);
  const root = h("div", { class: "agentcell agentcell-batch", data: { status: "running" } }, header, bar, counts, stats, hint, table.el, detail);
  return { root, stopBtn, statusEl, bar, counts, stats, hint, table, detail, detailTitle, detailNote, detailBody, closeBtn };
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
}

function openRow(ctx, index) {
  closeRow(ctx);
  const row = ctx.parts.table.trs.get(index)?._row;
  ctx.rowModel = createRowModel(ctx.send, index, row?.status ?? "running");
  ctx.parts.detail.hidden = false;
  ctx.parts.detailNote.hidden = true;
  setText(ctx.parts.detailTitle, `Row ${index}`);
  ctx.rowView = createView(ctx.rowModel, ctx.parts.detailBody, ctx.opts);
  markOpen(ctx.parts.table, index);
}

function closeRow(ctx) {
  if (!ctx.rowView) return;
  ctx.send({ kind: "row", index: ctx.rowModel.index, msg: { kind: "close" } });
  ctx.rowView.destroy();
  ctx.rowView = ctx.rowModel = null;
  ctx.parts.detail.hidden = true;
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
  renderProgress(ctx);
  return true;
}

function connect(ctx) {
  const { model } = ctx;
  const handlers = {
    "msg:custom": (msg) => onMessage(ctx, msg),
    "change:final": () => loadFinal(ctx),
    "change:status": () => renderProgress(ctx),
    "change:hint": () => renderProgress(ctx),
    "change:columns": () => setColumns(ctx.parts.table, model.get("columns") ?? []),
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
  setColumns(ctx.parts.table, model.get("columns") ?? []);
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
