// A scored batch run on several models (`ModelsWidget`, src/agentcell/frontends/widget/models_view.py): the
// model-selection table (pass rate, mean score per evaluator, cost, median latency, failed runs per model) and
// each row's pass mark and answer per model side by side, beside its expected value. Python owns the state (one
// trait, `state`: {models, slots, table, selection: {header, body}, columns, rows, total, status}); the
// selection table's cells come made (the saved output shows the same ones), the rows are drawn here.
import { formatJSON, statusLabel } from "../format.js";
import { h, setAttr, setText } from "../render/dom.js";
import { passMark } from "./scores.js";

export const MODEL_FILTERS = [
  ["all", "all rows"],
  ["disagree", "rows the models disagree on"],
  ["failed-any", "rows some model failed"],
];

const DONE = new Set(["completed", "halted"]);

/** The marks of `row` per model, in the models' order ("" while a model has not scored the row). */
export function marks(row, models) {
  return models.map((m) => passMark(row.cells?.[m]));
}

/** Whether `row` is shown under `filter` (a MODEL_FILTERS key). */
export function shownRow(row, models, filter) {
  if (!filter || filter === "all") return true;
  const got = marks(row, models);
  if (filter === "disagree") return got.every(Boolean) && new Set(got).size > 1;
  if (filter === "failed-any") return got.some((m) => m === "✗" || m === "⚠");
  return true;
}

/** A model's answer to a row: its slot values (joined by " · "), or its status while it has none. */
export function answerText(cell, slots) {
  if (!cell) return "";
  if (!DONE.has(cell.status)) return statusLabel(cell.status);
  return slots.filter((s) => s in (cell.values ?? {})).map((s) => text(cell.values[s])).join(" · ");
}

/** The index (in `table`) of each model with the best pass rate, none before any row is scored. */
export function leaders(table) {
  const rates = (table ?? []).map((r) => (Number.isFinite(r.pass_rate) ? r.pass_rate : -1));
  const best = Math.max(-1, ...rates);
  return best < 0 ? new Set() : new Set(rates.flatMap((r, i) => (r === best ? [i] : [])));
}

function text(v) {
  if (v === null || v === undefined) return "";
  return typeof v === "string" ? v : formatJSON(v);
}

function selectionTable(state) {
  const { header = [], body = [] } = state.selection ?? {};
  if (header.length === 0) return null;
  const best = leaders(state.table);
  return h("table", { class: "agentcell-batch-table agentcell-models-selection" },
    h("caption", null, "Model selection"),
    h("thead", null, h("tr", null, header.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", null, body.map((cells, i) => h("tr", { data: { best: best.has(i) ? "true" : null } },
      cells.map((c, j) => (j === 0 ? h("th", { scope: "row" }, c) : h("td", null, c)))))));
}

function rowsTable(state, filter) {
  const models = state.models ?? [];
  const slots = state.slots ?? [];
  const rows = state.rows ?? [];
  const expected = slots.filter((s) => rows.some((r) => r.expected && s in r.expected));
  const head = ["#", rows[0]?.input_name || "input", ...expected.map((s) => `expected ${s}`), ...models];
  const shown = rows.filter((r) => shownRow(r, models, filter));
  const tbody = h("tbody", null, shown.map((row) => h("tr", { data: { row: String(row.i) } },
    h("td", { class: "agentcell-batch-num" }, String(row.i)),
    h("td", { class: "agentcell-batch-input", title: text(row.input) }, text(row.input)),
    ...expected.map((s) => h("td", { class: "agentcell-batch-value" }, text(row.expected?.[s]))),
    ...models.map((m) => {
      const cell = row.cells?.[m];
      const mark = passMark(cell);
      return h("td", { class: "agentcell-models-cell", data: { model: m, passed: String(cell?.passed ?? "") }, title: cell?.error ?? "" },
        mark ? h("span", { class: "agentcell-batch-pass" }, `${mark} `) : null, answerText(cell, slots));
    }))));
  return { shown: shown.length, el: h("table", { class: "agentcell-batch-table agentcell-models-rows" },
    h("thead", null, h("tr", null, head.map((c) => h("th", { scope: "col" }, c)))), tbody) };
}

export function createModelsView(model, el) {
  const statusEl = h("span", { class: "agentcell-status" });
  const filter = h("select", { class: "agentcell-batch-filter", aria: { label: "show rows" } },
    MODEL_FILTERS.map(([value, label]) => h("option", { value }, label)));
  const selection = h("section", { class: "agentcell-models-summary", aria: { label: "model selection", live: "polite" } });
  const rows = h("div", { class: "agentcell-batch-tablewrap" });
  const note = h("p", { class: "agentcell-batch-note", hidden: true });
  const root = h("div", { class: "agentcell agentcell-batch agentcell-models", data: { status: "running" } },
    h("div", { class: "agentcell-header agentcell-batch-header" }, h("span", { class: "agentcell-batch-title" }, "Models side by side"), statusEl),
    selection, h("div", { class: "agentcell-batch-controls" }, h("label", null, "Show ", filter)), rows, note);
  el.append(root);

  const render = () => {
    const state = model.get("state") ?? {};
    const status = state.status ?? "running";
    setAttr(root, "data-status", status);
    setText(statusEl, statusLabel(status));
    const table = selectionTable(state);
    selection.replaceChildren(...(table ? [table] : []));
    const drawn = rowsTable(state, filter.value);
    rows.replaceChildren(drawn.el);
    const more = (state.total ?? 0) - (state.rows ?? []).length;
    note.hidden = more <= 0;
    setText(note, more > 0 ? `… ${more} more rows (every row is in the results: to_pandas(wide=True))` : "");
  };
  const onFilter = () => render();
  filter.addEventListener("change", onFilter);
  model.on("change:state", render);
  render();
  return {
    root,
    destroy() {
      model.off("change:state", render);
      filter.removeEventListener("change", onFilter);
      root.remove();
    },
  };
}
