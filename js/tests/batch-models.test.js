import { afterEach, describe, expect, it } from "vitest";
import { answerText, createModelsView, leaders, marks, shownRow } from "../src/batch/models.js";
import { formatJSON } from "../src/format.js";
import { FakeModel } from "./helpers/fake-model.js";

let mounted = [];
function mount(state) {
  const model = new FakeModel({ view: "models", state });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createModelsView(model, el);
  mounted.push({ view, el });
  return { model, el, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}
afterEach(() => {
  for (const { view, el } of mounted) {
    view.destroy();
    el.remove();
  }
  mounted = [];
});

const cell = (passed, answer, extra = {}) => ({
  i: 0, status: "completed", values: { answer }, error: null, tokens: 0, cost: null, duration: 0.1, passed,
  scores: { "answer:equals": passed }, ...extra,
});
// 3 rows: a right on 0 and 1, b right on 1 and 2
const state = (extra = {}) => ({
  status: "completed",
  models: ["a", "b"],
  slots: ["answer"],
  columns: ["answer:equals"],
  table: [{ model: "a", scored: 3, passed: 2, pass_rate: 2 / 3 }, { model: "b", scored: 3, passed: 2, pass_rate: 2 / 3 }],
  selection: {
    header: ["model", "pass rate", "mean answer:equals", "cost", "median latency", "failed runs"],
    body: [["a", "2/3 (66.7%)", "0.667", "—", "0.10 s", "0"], ["b", "2/3 (66.7%)", "0.667", "~$0.012", "0.10 s", "0"]],
  },
  rows: [
    { i: 0, input: "q0", input_name: "question", expected: { answer: "0" }, cells: { a: cell(true, "0"), b: cell(false, "1") } },
    { i: 1, input: "q1", input_name: "question", expected: { answer: "2" }, cells: { a: cell(true, "2"), b: cell(true, "2") } },
    { i: 2, input: "q2", input_name: "question", expected: { answer: "4" }, cells: { a: cell(false, "5"), b: cell(true, "4") } },
  ],
  total: 3,
  ...extra,
});

describe("models side by side", () => {
  it("shows the model-selection table with each model's pass rate, cost and latency", () => {
    const { $, $$ } = mount(state());
    expect($("caption").textContent).toBe("Model selection");
    expect($$(".agentcell-models-selection thead th").map((th) => th.textContent)).toEqual(
      ["model", "pass rate", "mean answer:equals", "cost", "median latency", "failed runs"]);
    const lines = $$(".agentcell-models-selection tbody tr").map((tr) => [...tr.children].map((c) => c.textContent));
    expect(lines).toEqual([["a", "2/3 (66.7%)", "0.667", "—", "0.10 s", "0"], ["b", "2/3 (66.7%)", "0.667", "~$0.012", "0.10 s", "0"]]);
  });

  it("puts each row's mark and answer per model side by side, beside the expected value", () => {
    const { $$ } = mount(state());
    expect($$(".agentcell-models-rows thead th").map((th) => th.textContent)).toEqual(["#", "question", "expected answer", "a", "b"]);
    const row = $$(".agentcell-models-rows tbody tr")[0];
    expect([...row.children].map((c) => c.textContent)).toEqual(["0", "q0", "0", "✓ 0", "✗ 1"]);
    expect(row.querySelector('[data-model="b"]').dataset.passed).toBe("false");
  });

  it("filters the rows the models disagree on, and the rows some model failed", () => {
    const { $, $$ } = mount(state());
    const filter = $(".agentcell-batch-filter");
    filter.value = "disagree";
    filter.dispatchEvent(new Event("change"));
    expect($$(".agentcell-models-rows tbody tr").map((tr) => tr.dataset.row)).toEqual(["0", "2"]);
    filter.value = "all";
    filter.dispatchEvent(new Event("change"));
    expect($$(".agentcell-models-rows tbody tr")).toHaveLength(3);
  });

  it("redraws as the state changes: a live pass rate, then the end", () => {
    const { model, $, $$ } = mount(state({ status: "running", selection: { header: ["model", "pass rate"], body: [["a", "—"], ["b", "—"]] } }));
    expect($(".agentcell-status").textContent).not.toBe("");
    expect($$(".agentcell-models-selection tbody td").map((td) => td.textContent)).toEqual(["—", "—"]);
    model.set("state", state());
    expect($$(".agentcell-models-selection tbody tr")[1].children[1].textContent).toBe("2/3 (66.7%)");
    expect($(".agentcell-models").dataset.status).toBe("completed");
  });

  it("says how many rows are left out of the side-by-side table", () => {
    const { $ } = mount(state({ total: 500 }));
    expect($(".agentcell-batch-note").hidden).toBe(false);
    expect($(".agentcell-batch-note").textContent).toContain("497 more rows");
  });
});

describe("models helpers", () => {
  it("reads marks, answers and the best pass rate", () => {
    const row = state().rows[0];
    expect(marks(row, ["a", "b"])).toEqual(["✓", "✗"]);
    expect(shownRow(row, ["a", "b"], "failed-any")).toBe(true);
    expect(shownRow(state().rows[1], ["a", "b"], "failed-any")).toBe(false);
    expect(answerText(cell(null, "x", { status: "running", scores: undefined }), ["answer"])).toBe("running");
    expect(answerText(cell(true, { n: 1 }), ["answer"])).toBe(formatJSON({ n: 1 }));
    expect([...leaders([{ pass_rate: 0.5 }, { pass_rate: 0.8 }, { pass_rate: null }])]).toEqual([1]);
    expect([...leaders([{ pass_rate: null }])]).toEqual([]);
  });
});
