// The live table: one <tr> per started row, in input order (or sorted by a clicked column header);
// each changed row is redrawn in place. A scored batch adds its score columns and a pass mark; a filter
// hides rows. At most MAX_SHOWN rows are in the DOM (a note says how many more there are: they are in the results).
import { formatCost, formatCount, formatElapsed, formatJSON, statusLabel } from "../format.js";
import { h, setAttr, setText } from "../render/dom.js";
import { compareRows, passMark, shown } from "./scores.js";

export const MAX_SHOWN = 2000;

function cellText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : formatJSON(value);
}

function rowCells(row, columns, scoreColumns = []) {
  const values = row.values ?? {};
  const status = row.resumed ? `${statusLabel(row.status)} (resumed)` : statusLabel(row.status);
  const error = row.error && row.error !== row.status ? row.error : null; // "stopped" says nothing more
  const scores = row.scores ?? {};
  const scored = scoreColumns.length > 0;
  return [
    h("td", { class: "agentcell-batch-num" }, String(row.i)),
    h("td", { class: "agentcell-batch-input", title: cellText(row.input) }, cellText(row.input)),
    ...columns.map((c) => h("td", { class: "agentcell-batch-value" }, cellText(values[c]))),
    ...scoreColumns.map((c) => h("td", { class: "agentcell-batch-score", data: { error: scores[c] === "error" ? "true" : null } }, cellText(scores[c]))),
    scored ? h("td", { class: "agentcell-batch-pass", data: { passed: String(row.passed ?? "") } }, passMark(row)) : null,
    h("td", { class: "agentcell-batch-status", title: error ?? "" }, status, error ? h("div", { class: "agentcell-batch-error" }, error) : null),
    h("td", { class: "agentcell-batch-time" }, Number.isFinite(row.duration) ? formatElapsed(row.duration) : ""),
    h("td", { class: "agentcell-batch-usage" }, [`${formatCount(row.tokens ?? 0)} tokens`, row.tokens > 0 || Number.isFinite(row.cost) ? formatCost(row.cost) : ""].filter(Boolean).join(" · ")),
  ];
}

const USAGE_HEAD = "usage (tokens · $)";

export function createTable(onOpen, maxShown = MAX_SHOWN) {
  const head = h("thead");
  const body = h("tbody");
  const note = h("p", { class: "agentcell-batch-note", hidden: true });
  const el = h("div", { class: "agentcell-batch-tablewrap" }, h("table", { class: "agentcell-batch-table" }, head, body), note);
  const table = { el, head, body, note, columns: [], scoreColumns: [], trs: new Map(), order: [], hidden: 0, onOpen, maxShown, sort: null, filter: "all" };
  body.addEventListener("click", (e) => openFrom(table, e.target));
  head.addEventListener("click", (e) => {
    const th = e.target?.closest?.("th[data-column]");
    if (th) sortBy(table, th.getAttribute("data-column"));
  });
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

export function setColumns(table, columns, scoreColumns = table.scoreColumns) {
  table.columns = columns;
  table.scoreColumns = scoreColumns;
  drawHead(table);
  for (const tr of table.trs.values()) tr.replaceChildren(...rowCells(tr._row, columns, scoreColumns));
}

function drawHead(table) {
  const keys = ["#", "input", ...table.columns, ...table.scoreColumns, ...(table.scoreColumns.length ? ["pass"] : []), "status", "time", "usage"];
  const cells = keys.map((k) => {
    const sorted = table.sort?.column === k ? (table.sort.dir > 0 ? "ascending" : "descending") : null;
    return h("th", { scope: "col", title: "sort by this column", data: { column: k }, aria: { sort: sorted } }, k === "usage" ? USAGE_HEAD : k, sorted ? (sorted === "ascending" ? " ▲" : " ▼") : null);
  });
  table.head.replaceChildren(h("tr", null, cells));
}

/** Sort by `column` (a second click on the same column reverses it, a third goes back to row order). */
export function sortBy(table, column) {
  const now = table.sort;
  table.sort = now?.column !== column ? { column, dir: 1 } : now.dir > 0 ? { column, dir: -1 } : null;
  drawHead(table);
  reorder(table);
}

/** Show only the rows `filter` keeps (scores.js FILTERS). */
export function setFilter(table, filter) {
  table.filter = filter;
  for (const tr of table.trs.values()) tr.hidden = !shown(tr._row, filter);
}

function reorder(table) {
  if (!table.sort) {
    for (const i of table.order) table.body.append(table.trs.get(i));
    return;
  }
  const { column, dir } = table.sort;
  const rows = [...table.trs.values()].sort((a, b) => compareRows(a._row, b._row, column, dir));
  for (const tr of rows) table.body.append(tr);
}

/** Insert or redraw `rows` (pending rows are not shown until they start). */
export function updateRows(table, rows) {
  for (const row of rows) {
    if (!row || !Number.isInteger(row.i)) continue;
    const tr = table.trs.get(row.i);
    if (tr) {
      tr._row = row;
      setAttr(tr, "data-status", row.status);
      tr.replaceChildren(...rowCells(row, table.columns, table.scoreColumns));
      tr.hidden = !shown(row, table.filter);
    } else if (row.status !== "pending") insert(table, row);
  }
  if (table.sort && rows.length) reorder(table);
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
  tr.replaceChildren(...rowCells(row, table.columns, table.scoreColumns));
  tr.hidden = !shown(row, table.filter);
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
