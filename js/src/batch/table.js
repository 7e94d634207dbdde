// The live table: one <tr> per started row, in input order; each changed row is redrawn in place.
// At most MAX_SHOWN rows are in the DOM (a note says how many more there are: they are in the results).
import { formatCost, formatCount, formatJSON, statusLabel } from "../format.js";
import { h, setAttr, setText } from "../render/dom.js";

export const MAX_SHOWN = 2000;

function cellText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : formatJSON(value);
}

function rowCells(row, columns) {
  const values = row.values ?? {};
  const status = row.resumed ? `${statusLabel(row.status)} (resumed)` : statusLabel(row.status);
  const error = row.error && row.error !== row.status ? row.error : null; // "stopped" says nothing more
  return [
    h("td", { class: "agentcell-batch-num" }, String(row.i)),
    h("td", { class: "agentcell-batch-input", title: cellText(row.input) }, cellText(row.input)),
    ...columns.map((c) => h("td", { class: "agentcell-batch-value" }, cellText(values[c]))),
    h("td", { class: "agentcell-batch-status", title: error ?? "" }, status, error ? h("div", { class: "agentcell-batch-error" }, error) : null),
    h("td", { class: "agentcell-batch-usage" }, [formatCount(row.tokens ?? 0), row.tokens > 0 || Number.isFinite(row.cost) ? formatCost(row.cost) : ""].filter(Boolean).join(" · ")),
  ];
}

export function createTable(onOpen, maxShown = MAX_SHOWN) {
  const head = h("thead");
  const body = h("tbody");
  const note = h("p", { class: "agentcell-batch-note", hidden: true });
  const el = h("div", { class: "agentcell-batch-tablewrap" }, h("table", { class: "agentcell-batch-table" }, head, body), note);
  const table = { el, head, body, note, columns: [], trs: new Map(), order: [], hidden: 0, onOpen, maxShown };
  body.addEventListener("click", (e) => openFrom(table, e.target));
  body.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      openFrom(table, e.target);
    }
  });
  return table;
}

function openFrom(table, target) {
  const tr = target?.closest?.("tr[data-index]");
  if (tr) table.onOpen(Number(tr.getAttribute("data-index")));
}

export function setColumns(table, columns) {
  table.columns = columns;
  const names = ["#", "input", ...columns, "status", "usage"];
  table.head.replaceChildren(h("tr", null, names.map((n) => h("th", { scope: "col" }, n))));
  for (const tr of table.trs.values()) tr.replaceChildren(...rowCells(tr._row, columns));
}

/** Insert or redraw `rows` (pending rows are not shown until they start). */
export function updateRows(table, rows) {
  for (const row of rows) {
    if (!row || !Number.isInteger(row.i)) continue;
    const tr = table.trs.get(row.i);
    if (tr) {
      tr._row = row;
      setAttr(tr, "data-status", row.status);
      tr.replaceChildren(...rowCells(row, table.columns));
    } else if (row.status !== "pending") insert(table, row);
  }
  table.note.hidden = table.hidden === 0;
  setText(table.note, `${table.hidden} more rows are not shown here; they are in the results (to_pandas()).`);
}

function insert(table, row) {
  if (table.order.length >= table.maxShown) {
    table.hidden++;
    return;
  }
  const tr = h("tr", { tabindex: "0", data: { index: row.i, status: row.status }, aria: { label: `row ${row.i}: open its run` } });
  tr._row = row;
  tr.replaceChildren(...rowCells(row, table.columns));
  let lo = 0;
  let hi = table.order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (table.order[mid] < row.i) lo = mid + 1;
    else hi = mid;
  }
  const before = lo < table.order.length ? table.trs.get(table.order[lo]) : null;
  table.body.insertBefore(tr, before);
  table.order.splice(lo, 0, row.i);
  table.trs.set(row.i, tr);
}

export function clearRows(table) {
  table.body.replaceChildren();
  table.trs.clear();
  table.order = [];
  table.hidden = 0;
}

export function markOpen(table, index) {
  for (const [i, tr] of table.trs) setAttr(tr, "aria-selected", i === index ? "true" : null);
}
