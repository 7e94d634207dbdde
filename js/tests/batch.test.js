import { afterEach, describe, expect, it } from "vitest";
import batch from "../src/batch.js";
import { createBatchView } from "../src/batch/view.js";
import { countsText, groupOf, segments, statsText } from "../src/batch/progress.js";
import { MAX_SHOWN } from "../src/batch/table.js";
import { FakeModel } from "./helpers/fake-model.js";
import { fullRun } from "./helpers/fixtures.js";

let mounted = [];
function mount(traits = {}, opts = {}) {
  const model = new FakeModel({ status: "running", columns: ["answer"], final: {}, hint: "", ...traits });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createBatchView(model, el, { requestAnimationFrame: null, ...opts });
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

const progress = (extra = {}) => ({ done: 0, failed: 0, stopped: 0, running: 0, pending: 0, not_started: 0, total: 4, tokens: 0, cost: null, rows_per_min: null, eta_s: null, elapsed_s: 1, paused_s: 0, reason: null, ...extra });
const row = (i, status, extra = {}) => ({ i, status, input: `text ${i}`, values: {}, error: null, tokens: 0, cost: null, resumed: false, ...extra });

describe("progress words", () => {
  it("groups statuses like the kernel", () => {
    expect(["completed", "halted", "failed", "budget_exhausted", "stopped", "running", "pending", "not_started"].map(groupOf))
      .toEqual(["done", "done", "failed", "failed", "stopped", "running", "pending", "not_started"]);
  });
  it("says counts, tokens, cost, rate and time left", () => {
    const p = progress({ done: 2, failed: 1, running: 1, total: 10, pending: 6, tokens: 1500, cost: 0.0123, rows_per_min: 42, eta_s: 80, elapsed_s: 5 });
    expect(countsText(p)).toBe("3 of 10 rows · 2 done · 1 failed · 1 running · 6 pending");
    expect(statsText(p)).toBe("1.5k tokens · $0.012 · 42 rows/min · about 1 m 20 s left · elapsed 5.0 s");
    expect(segments(p).map((s) => [s.group, s.percent])).toEqual([["done", 20], ["failed", 10], ["running", 10], ["pending", 60]]);
  });
  it("says when a Retry-After longer than the cap was cut short (issue 40: a batch froze for 1,157 days)", () => {
    const note = "the provider asked to wait 1,157 days (Retry-After); the batch paused 2 min, the most a retry waits";
    const p = progress({ pending: 3, paused_s: 118, pause_note: note, elapsed_s: 5 });
    expect(statsText(p)).toBe(`0 tokens · paused 1 m 58 s (rate limit) · ${note} · elapsed 5.0 s`);
    expect(statsText(progress({ paused_s: 2, pause_note: null }))).toBe("0 tokens · paused 2.0 s (rate limit) · elapsed 1.0 s");
  });
});

describe("batch view", () => {
  it("asks for a snapshot, fills the table live in row order, and shows progress", () => {
    const { model, $, $$ } = mount();
    expect(model.sent).toEqual([{ kind: "snapshot_request" }]);
    model.emit({ kind: "snapshot", rows: [row(0, "pending"), row(1, "pending"), row(2, "pending"), row(3, "pending")], progress: progress({ pending: 4 }) });
    expect($$("tbody tr")).toHaveLength(0); // pending rows appear once they start
    model.emit({ kind: "rows", rows: [row(2, "running"), row(0, "completed", { values: { answer: "ZERO" }, tokens: 12 })], progress: progress({ done: 1, running: 1, pending: 2 }) });
    expect($$("tbody tr").map((tr) => tr.getAttribute("data-index"))).toEqual(["0", "2"]);
    model.emit({ kind: "rows", rows: [row(1, "failed", { error: "RuntimeError: boom" })], progress: progress({ done: 1, failed: 1, running: 1, pending: 1 }) });
    expect($$("tbody tr").map((tr) => tr.getAttribute("data-index"))).toEqual(["0", "1", "2"]);
    expect($("tbody tr[data-index='0']").textContent).toContain("ZERO");
    expect($("tbody tr[data-index='1'] .agentcell-batch-error").textContent).toBe("RuntimeError: boom");
    expect($(".agentcell-batch-counts").textContent).toBe("2 of 4 rows · 1 done · 1 failed · 1 running · 1 pending");
    expect($(".agentcell-batch-bar").getAttribute("aria-valuenow")).toBe("2");
    expect($$(".agentcell-batch-seg").map((s) => s.className.split("agentcell-batch-")[2])).toEqual(["done", "failed", "running", "pending"]);
  });

  it("Stop stops the whole batch once", () => {
    const { model, $ } = mount();
    $(".agentcell-stop").click();
    $(".agentcell-stop").click();
    expect(model.sent.filter((m) => m.kind === "stop")).toHaveLength(1);
    expect($(".agentcell-status").textContent).toBe("stopping…");
    model.set("status", "stopped");
    expect($(".agentcell-stop").disabled).toBe(true);
  });

  it("a clicked row opens the single-run view fed by that row's messages; its Stop stops the row", () => {
    const { model, $, view } = mount();
    model.emit({ kind: "rows", rows: [row(3, "running")], progress: progress({ running: 1, pending: 3 }) });
    $("tbody tr[data-index='3']").click();
    expect(model.sent.at(-1)).toEqual({ kind: "row", index: 3, msg: { kind: "snapshot_request" } });
    const events = fullRun();
    model.emit({ kind: "row", index: 3, status: "running", msg: { kind: "snapshot", events: events.slice(0, 6) } });
    model.emit({ kind: "rows", rows: [row(3, "completed")], progress: progress({ done: 1, pending: 3 }), open: [{ index: 3, status: "completed", events: events.slice(6) }] });
    view.rowView.flush();
    expect($(".agentcell-batch-detail").hidden).toBe(false);
    expect($(".agentcell-batch-detail-title").textContent).toBe("Row 3 · text 3"); // the row names its input
    expect($(".agentcell-batch-detail-body .agentcell-answer").textContent).toContain("Dr Ada");
    expect(view.rowView.state.ended).toBe(true);
    $(".agentcell-batch-detail-body .agentcell-stop").click(); // ended: disabled, nothing sent
    $(".agentcell-batch-detail .agentcell-btn:not(.agentcell-stop)").click();
    expect(model.sent.at(-1)).toEqual({ kind: "row", index: 3, msg: { kind: "close" } });
    expect($(".agentcell-batch-detail").hidden).toBe(true);
  });

  it("Enter on a focused row opens it (keyboard)", () => {
    const { model, $ } = mount();
    model.emit({ kind: "rows", rows: [row(0, "running")], progress: progress({ running: 1 }) });
    $("tbody tr").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(model.sent.at(-1)).toEqual({ kind: "row", index: 0, msg: { kind: "snapshot_request" } });
  });

  it("a row whose transcript was not kept says so", () => {
    const { model, $ } = mount();
    model.emit({ kind: "rows", rows: [row(0, "completed")], progress: progress({ done: 1 }) });
    $("tbody tr").click();
    model.emit({ kind: "row", index: 0, status: "completed", msg: { kind: "snapshot", events: [] }, missing: "not kept (journal off)" });
    expect($(".agentcell-batch-detail .agentcell-batch-note").textContent).toBe("not kept (journal off)");
  });

  it("the final trait shows the whole table without a kernel", () => {
    const { $$, $ } = mount({ status: "completed", final: { rows: [row(0, "completed", { values: { answer: "A" } }), row(1, "not_started")], progress: progress({ done: 1, not_started: 1, total: 2 }) } });
    expect($$("tbody tr")).toHaveLength(2);
    expect($(".agentcell-batch-counts").textContent).toBe("1 of 2 rows · 1 done · 1 not started");
  });

  it(`keeps at most ${MAX_SHOWN} rows in the DOM (here 20)`, () => {
    const { model, $$, $ } = mount({}, { maxShown: 20 });
    const rows = Array.from({ length: 25 }, (_, i) => row(24 - i, "completed")); // any order: shown in row order
    model.emit({ kind: "rows", rows, progress: progress({ done: rows.length, total: rows.length }) });
    expect($$("tbody tr")).toHaveLength(20);
    expect($(".agentcell-batch-tablewrap .agentcell-batch-note").textContent).toContain("5 more rows");
  });

  it("render entry returns a cleanup that detaches listeners", () => {
    const model = new FakeModel({ columns: [], final: {} });
    const el = document.createElement("div");
    const cleanup = batch.render({ model, el });
    expect(el.querySelector(".agentcell-batch")).not.toBeNull();
    cleanup();
    expect(model.listenerCount()).toBe(0);
  });
});
