import { afterEach, describe, expect, it } from "vitest";
import { createBatchView } from "../src/batch/view.js";
import { compareRows, passMark, shown, summaryText } from "../src/batch/scores.js";
import { FakeModel } from "./helpers/fake-model.js";

let mounted = [];
function mount(traits = {}) {
  const model = new FakeModel({ status: "running", columns: ["answer"], score_columns: ["answer:equals"], final: {}, hint: "", ...traits });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createBatchView(model, el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  return { model, el, view, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}
afterEach(() => {
  for (const { view, el } of mounted) {
    view.destroy();
    el.remove();
  }
  mounted = [];
});

const progress = (extra = {}) => ({ done: 0, failed: 0, stopped: 0, running: 0, pending: 0, not_started: 0, total: 3, tokens: 0, cost: null, rows_per_min: null, eta_s: null, elapsed_s: 1, paused_s: 0, reason: null, ...extra });
const scored = (i, passed, answer, extra = {}) => ({
  i, status: "completed", input: `q${i}`, input_name: "question", values: { answer }, error: null, tokens: 10 + i, cost: null,
  resumed: false, duration: 0.5 + i, passed, scores: { "answer:equals": passed }, expected: { answer: "right" }, ...extra,
});

describe("scores", () => {
  it("marks pass, fail and an evaluator error", () => {
    expect([passMark(scored(0, true, "a")), passMark(scored(1, false, "b")), passMark({ scores: { x: "error" }, passed: null }), passMark({})])
      .toEqual(["✓", "✗", "⚠", ""]);
  });
  it("filters failed checks and statuses, and sorts numbers, text and missing values", () => {
    const rows = [scored(0, true, "b"), scored(1, false, "a"), { i: 2, status: "failed", values: {} }];
    expect(rows.filter((r) => shown(r, "failed-checks")).map((r) => r.i)).toEqual([1]);
    expect(rows.filter((r) => shown(r, "failed")).map((r) => r.i)).toEqual([2]);
    expect([...rows].sort((a, b) => compareRows(a, b, "answer", 1)).map((r) => r.i)).toEqual([1, 0, 2]);
    expect([...rows].sort((a, b) => compareRows(a, b, "usage", -1)).map((r) => r.i)).toEqual([1, 0, 2]);
  });
  it("says the summary and the baseline", () => {
    expect(summaryText({ line: "2/3 passed (66.7%); 1 failed", baseline: "1 improved, 0 regressed, 2 unchanged" }))
      .toBe("Scores: 2/3 passed (66.7%); 1 failed · against the baseline: 1 improved, 0 regressed, 2 unchanged");
    expect(summaryText(null)).toBe("");
  });
});

describe("a scored batch view", () => {
  it("shows score and pass columns, the summary, a failed-only filter and header sorting", () => {
    const { model, $, $$ } = mount();
    const summary = { line: "2/3 passed (66.7%); 1 failed" };
    model.emit({ kind: "rows", rows: [scored(0, true, "right"), scored(1, false, "wrong"), scored(2, true, "right")], progress: progress({ done: 3, summary }) });
    expect($$("thead th").map((th) => th.textContent)).toEqual(["#", "input", "answer", "answer:equals", "pass", "status", "time", "usage (tokens · $)"]);
    expect($$("tbody tr .agentcell-batch-pass").map((td) => td.textContent)).toEqual(["✓", "✗", "✓"]);
    expect($(".agentcell-batch-summary").textContent).toBe("Scores: 2/3 passed (66.7%); 1 failed");
    expect($("tbody tr[data-index='1'] .agentcell-batch-usage").textContent).toBe("11 tokens · —");
    const select = $(".agentcell-batch-filter");
    select.value = "failed-checks";
    select.dispatchEvent(new Event("change"));
    expect($$("tbody tr").filter((tr) => !tr.hidden).map((tr) => tr.getAttribute("data-index"))).toEqual(["1"]);
    select.value = "all";
    select.dispatchEvent(new Event("change"));
    $("thead th[data-column='usage']").click();
    $("thead th[data-column='usage']").click(); // descending
    expect($$("tbody tr").map((tr) => tr.getAttribute("data-index"))).toEqual(["2", "1", "0"]);
    expect($("thead th[data-column='usage']").getAttribute("aria-sort")).toBe("descending");
    $("thead th[data-column='usage']").click(); // back to row order
    expect($$("tbody tr").map((tr) => tr.getAttribute("data-index"))).toEqual(["0", "1", "2"]);
  });

  it("opens a failed row with its input, duration and the expected value beside the answer", () => {
    const { model, $ } = mount();
    model.emit({ kind: "rows", rows: [scored(1, false, "wrong")], progress: progress({ done: 1 }) });
    $("tbody tr[data-index='1']").click();
    expect($(".agentcell-batch-detail-title").textContent).toBe("Row 1 · question = q1 · 1.5 s");
    const box = $(".agentcell-batch-expect").textContent;
    expect(box).toContain("answer: wrong");
    expect(box).toContain("expected: right");
    expect(box).toContain("✗ answer:equals = ✗");
  });

  it("offers Retry failed rows once the batch ended with failures, and shows the changed rows", () => {
    const changes = [{ row: 1, change: "regressed", answer_before: "right", answer_now: "wrong", passed_before: true, passed_now: false }];
    const { model, $, $$ } = mount();
    expect($(".agentcell-batch-retry").hidden).toBe(true);
    model.set("final", { rows: [scored(0, true, "right"), { i: 1, status: "failed", values: {}, error: "boom" }], progress: progress({ done: 1, failed: 1 }), changes });
    model.set("status", "completed");
    expect($(".agentcell-batch-retry").hidden).toBe(false);
    expect($$(".agentcell-batch-changes tbody tr")).toHaveLength(1);
    expect($(".agentcell-batch-changes tbody tr").getAttribute("data-change")).toBe("regressed");
    $(".agentcell-batch-retry").click();
    expect(model.sent.at(-1)).toEqual({ kind: "retry" });
  });
});
