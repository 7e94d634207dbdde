// A scored batch (`expect=` / `evaluators=`): the pass mark, the summary line, the table's sort and filter, the
// changed rows against a baseline, and the expected-beside-answer box of an opened row. Pure helpers but
// for the three small DOM builders at the end.
import { formatJSON } from "../format.js";
import { h } from "../render/dom.js";
import { groupOf } from "./progress.js";

/** ✓ passed, ✗ failed, ⚠ an evaluator failed on the row, "" not scored (yet). */
export function passMark(row) {
  if (!row?.scores) return "";
  if (row.passed === true) return "✓";
  if (row.passed === false) return "✗";
  return Object.values(row.scores).includes("error") ? "⚠" : "";
}

export const FILTERS = [
  ["all", "all rows"],
  ["failed-checks", "failed checks only"],
  ["done", "done"],
  ["failed", "failed"],
  ["stopped", "stopped"],
  ["running", "running"],
  ["not_started", "not started"],
];

/** Whether `row` is shown under filter `filter` (a FILTERS key). */
export function shown(row, filter) {
  if (!filter || filter === "all") return true;
  if (filter === "failed-checks") return row.passed === false || passMark(row) === "⚠";
  return groupOf(row.status) === filter;
}

/** The value a column sorts by: numbers as numbers, the rest as lower-cased text; missing values last. */
export function sortValue(row, column) {
  let v;
  if (column === "#") v = row.i;
  else if (column === "input") v = row.input;
  else if (column === "status") v = row.status;
  else if (column === "pass") v = row.passed === true ? 1 : row.passed === false ? 0 : null;
  else if (column === "usage") v = row.tokens;
  else if (column === "time") v = row.duration;
  else if (row.scores && column in row.scores) v = row.scores[column];
  else v = row.values?.[column];
  if (v === null || v === undefined || v === "") return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return v;
  return (typeof v === "string" ? v : formatJSON(v)).toLowerCase();
}

/** Compare two rows by `column` (`dir` 1 ascending, -1 descending); ties and missing values keep row order. */
export function compareRows(a, b, column, dir) {
  const x = sortValue(a, column);
  const y = sortValue(b, column);
  if (x === null || y === null) return x === y ? a.i - b.i : x === null ? 1 : -1;
  if (x < y) return -dir;
  if (x > y) return dir;
  return a.i - b.i;
}

/** "Scores: 20/30 passed (66.7%); 10 failed · against the baseline: 4 improved, 0 regressed, 26 unchanged" */
export function summaryText(summary) {
  if (!summary) return "";
  const base = summary.baseline ? ` · against the baseline: ${summary.baseline}` : "";
  return `Scores: ${summary.line}${base}`;
}

/** The opened row's expected values beside its answers, and its scores (null when the row has none). */
export function expectedBox(row) {
  if (!row || (!row.expected && !row.scores)) return null;
  const lines = [];
  for (const [slot, want] of Object.entries(row.expected ?? {})) {
    const got = row.values?.[slot];
    lines.push(h("div", { class: "agentcell-batch-expect-line" },
      h("span", { class: "agentcell-batch-expect-slot" }, slot),
      h("span", null, " answer: ", h("code", null, text(got))),
      h("span", null, " · expected: ", h("code", null, text(want)))));
  }
  if (row.scores) {
    const scores = Object.entries(row.scores).map(([c, v]) => `${c} = ${text(v)}`).join(" · ");
    lines.push(h("div", { class: "agentcell-batch-expect-line" }, `${passMark(row) || "·"} ${scores}`));
  }
  for (const note of row.score_notes ?? []) lines.push(h("div", { class: "agentcell-batch-expect-note" }, note));
  return h("div", { class: "agentcell-batch-expect", aria: { label: "expected and scored" } }, ...lines);
}

/** The rows that changed against the baseline: row, change, then each slot's answer before and now. */
export function changesTable(changes) {
  if (!Array.isArray(changes) || changes.length === 0) return null;
  const columns = Object.keys(changes[0]).filter((k) => !k.includes(":"));
  return h("table", { class: "agentcell-batch-table agentcell-batch-changes" },
    h("thead", null, h("tr", null, columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", null, changes.map((r) => h("tr", { data: { change: r.change } }, columns.map((c) => h("td", null, text(r[c])))))));
}

function text(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "boolean") return v ? "✓" : "✗";
  return typeof v === "string" ? v : formatJSON(v);
}
