import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import widget from "../src/widget.js";
import { createView } from "../src/view.js";
import { AnswerView } from "../src/render/answer.js";
import { FakeModel } from "./helpers/fake-model.js";
import { ev, fullRun } from "./helpers/fixtures.js";

let views = [];
let clock = 0;
function mount(traits = {}, opts = {}) {
  const model = new FakeModel(traits);
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { now: () => clock, requestAnimationFrame: null, ...opts });
  views.push({ view, el });
  return { model, el, view, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}

beforeEach(() => {
  clock = 0;
});
afterEach(() => {
  for (const { view, el } of views) {
    view.destroy();
    el.remove();
  }
  views = [];
  vi.useRealTimers();
});

function send(model, view, events) {
  model.emit({ kind: "events", events });
  view.flush();
}

describe("render entry", () => {
  it("exports { render } and resolves to a cleanup that detaches listeners", async () => {
    const model = new FakeModel();
    const el = document.createElement("div");
    const cleanup = await widget.render({ model, el });
    expect(el.querySelector(".agentcell")).not.toBeNull();
    expect(model.listenerCount()).toBeGreaterThan(0);
    expect(model.sent).toEqual([{ kind: "snapshot_request" }]);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.querySelector(".agentcell")).toBeNull();
  });
});

describe("stage 1: header, status, stop, answer", () => {
  it("asks for a snapshot once when final is empty", () => {
    const { model } = mount();
    expect(model.sent.filter((m) => m.kind === "snapshot_request")).toHaveLength(1);
  });

  it("shows model, status, offline badge and the streamed answer", () => {
    const { model, view, $, $$ } = mount({ status: "running" });
    send(model, view, [ev.runStarted({ offline: true, model: "agentcell:offline" }), ev.slotStarted(), ev.token("Hello "), ev.token("**world**")]);
    const root = $(".agentcell");
    expect(root.getAttribute("data-status")).toBe("running");
    expect($(".agentcell-model").textContent).toBe("agentcell:offline");
    expect($(".agentcell-offline").hidden).toBe(false);
    expect($(".agentcell-offline").textContent).toMatch(/offline default model/);
    expect($(".agentcell-status").textContent).toBe("running");
    const answers = $$(".agentcell-answer");
    expect(answers).toHaveLength(1);
    expect(answers[0].getAttribute("data-slot")).toBe("answer");
    expect(answers[0].textContent).toContain("Hello world");
    expect(answers[0].querySelector("strong").textContent).toBe("world");
    expect($(".agentcell-stop").disabled).toBe(false);
  });

  it("hides the offline badge for a real model", () => {
    const { model, view, $ } = mount();
    send(model, view, [ev.runStarted()]);
    expect($(".agentcell-offline").hidden).toBe(true);
    expect($(".agentcell-model").textContent).toBe("openai:gpt-4o-mini");
  });

  it("Stop sends {kind: 'stop'} and is disabled once the run ended", () => {
    const { model, view, $ } = mount({ status: "running" });
    send(model, view, [ev.runStarted(), ev.slotStarted()]);
    $(".agentcell-stop").click();
    expect(model.sent).toContainEqual({ kind: "stop" });
    view.flush();
    expect($(".agentcell-stop").textContent).toBe("Stopping…");
    send(model, view, [ev.slotFailed("stopped", "stopped by the user"), ev.done("stopped")]);
    expect($(".agentcell-stop").disabled).toBe(true);
    expect($(".agentcell").getAttribute("data-status")).toBe("stopped");
    expect($(".agentcell-status").textContent).toBe("stopped");
  });

  it("a terminal status trait disables Stop even before the final event", () => {
    const { model, view, $ } = mount({ status: "running" });
    send(model, view, [ev.runStarted()]);
    model.set("status", "failed");
    view.flush();
    expect($(".agentcell-stop").disabled).toBe(true);
    expect($(".agentcell").getAttribute("data-status")).toBe("failed");
  });

  it("elapsed ticks from the last event time while running and freezes at the end", () => {
    const { model, view, $ } = mount({ status: "running" });
    send(model, view, [ev.runStarted(), ev.token("x", { t: 1.0 })]);
    expect($(".agentcell-elapsed").textContent).toBe("1.0 s");
    clock += 1500;
    view.flush();
    expect($(".agentcell-elapsed").textContent).toBe("2.5 s");
    send(model, view, [ev.done("completed", { t: 2.75 })]);
    expect($(".agentcell-elapsed").textContent).toBe("2.8 s");
    clock += 60_000;
    view.flush();
    expect($(".agentcell-elapsed").textContent).toBe("2.8 s");
  });

  it("a message's optional t (kernel clock) anchors the elapsed time", () => {
    const { model, view, $ } = mount({ status: "running" });
    model.emit({ kind: "snapshot", events: [ev.runStarted(), ev.token("x", { t: 1.0 })], t: 42.0 });
    view.flush();
    expect($(".agentcell-elapsed").textContent).toBe("42.0 s");
  });

  it("elapsed ticks on its own timer while running", () => {
    vi.useFakeTimers();
    const { model, view, $ } = mount({ status: "running" });
    send(model, view, [ev.runStarted(), ev.token("x", { t: 1.0 })]);
    clock += 3000;
    vi.advanceTimersByTime(300);
    expect($(".agentcell-elapsed").textContent).toBe("4.0 s");
  });

  it("shows the hint small under the header and hides it when empty", () => {
    const { model, view, $ } = mount({ status: "running", hint: "If Stop does not react, use Kernel > Interrupt" });
    send(model, view, [ev.runStarted()]);
    expect($(".agentcell-hint").hidden).toBe(false);
    expect($(".agentcell-hint").textContent).toBe("If Stop does not react, use Kernel > Interrupt");
    model.set("hint", "");
    view.flush();
    expect($(".agentcell-hint").hidden).toBe(true);
  });

  it("renders on the next animation frame without an explicit flush", async () => {
    const model = new FakeModel({ status: "running" });
    const el = document.createElement("div");
    const cleanup = await widget.render({ model, el });
    model.emit({ kind: "events", events: [ev.runStarted(), ev.token("streamed")] });
    await new Promise((r) => setTimeout(r, 300));
    expect(el.querySelector('.agentcell-answer[data-slot="answer"]').textContent).toContain("streamed");
    cleanup();
  });
});

describe("snapshots, batching and the final trait", () => {
  const normalize = (el) => el.querySelector(".agentcell-slots").innerHTML;

  it("several batches give the same DOM as one snapshot", () => {
    const run = fullRun();
    const a = mount({ status: "completed" });
    for (let i = 0; i < run.length; i += 3) a.model.emit({ kind: "events", events: run.slice(i, i + 3) });
    a.view.flush();
    const b = mount({ status: "completed" });
    b.model.emit({ kind: "snapshot", events: run });
    b.view.flush();
    expect(normalize(a.el)).toBe(normalize(b.el));
    expect(a.$(".agentcell-status").textContent).toBe(b.$(".agentcell-status").textContent);
    expect(a.$(".agentcell-meter").textContent).toBe(b.$(".agentcell-meter").textContent);
  });

  it("a streaming answer reaches its view as appends; a retraction and the end go through the whole text", () => {
    const update = vi.spyOn(AnswerView.prototype, "update");
    const append = vi.spyOn(AnswerView.prototype, "append");
    const a = mount({ status: "running" });
    send(a.model, a.view, [ev.runStarted(), ev.slotStarted()]);
    const words = Array.from({ length: 200 }, (_, i) => (i % 20 === 19 ? `word${i}.\n\n` : `word${i} `));
    for (const w of words) send(a.model, a.view, [ev.token(w)]);
    const updates = update.mock.calls.length;
    expect(updates).toBeLessThanOrEqual(2); // the first text; nothing after it read the whole answer
    expect(append.mock.results.filter((r) => r.value === true).length).toBeGreaterThanOrEqual(198);
    send(a.model, a.view, [ev.retracted("gathering", words.join("")), ev.token("Fresh answer.", { round: 2 })]);
    expect(update.mock.calls.length).toBeGreaterThan(updates);
    expect(a.$(".agentcell-answer .agentcell-markdown").textContent.trim()).toBe("Fresh answer.");
    const b = mount({ status: "running" });
    b.model.emit({ kind: "snapshot", events: [ev.runStarted(), ev.slotStarted(), ...words.map((w) => ev.token(w)), ev.retracted("gathering", words.join("")), ev.token("Fresh answer.", { round: 2 })] });
    b.view.flush();
    expect(normalize(a.el)).toBe(normalize(b.el));
    update.mockRestore();
    append.mockRestore();
  });

  it("an answer far ahead of its view is caught up in idle callbacks when the browser has them", () => {
    const idle = [];
    globalThis.requestIdleCallback = (fn, opts) => idle.push({ fn, opts });
    try {
      const a = mount({ status: "running" });
      const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of the answer.\n\n`).join("");
      send(a.model, a.view, [ev.runStarted(), ev.slotStarted(), ev.token(long)]);
      expect(idle.length).toBe(1);
      expect(idle[0].opts).toEqual({ timeout: 50 }); // never more than 50 ms late on a busy page
      while (idle.length) idle.shift().fn({ timeRemaining: () => 10, didTimeout: false });
      expect(a.$(".agentcell-answer .agentcell-markdown").textContent).toContain("Paragraph 399 of the answer.");
    } finally {
      delete globalThis.requestIdleCallback;
    }
  });

  it("batches flushed mid-stream (incremental render) end equal to a snapshot render", () => {
    const run = fullRun();
    const a = mount({ status: "running" });
    for (const e of run) send(a.model, a.view, [e]);
    const b = mount({ status: "running" });
    send(b.model, b.view, run);
    expect(normalize(a.el)).toBe(normalize(b.el));
  });

  it("a snapshot resets the view state before replaying", () => {
    const { model, view, $, $$ } = mount({ status: "running" });
    send(model, view, [ev.runStarted(), ev.slotStarted(), ev.token("stale text"), ev.toolStarted({ call_id: "zz" })]);
    expect($(".agentcell-answer").textContent).toContain("stale text");
    model.emit({ kind: "snapshot", events: [ev.runStarted(), ev.slotStarted(), ev.token("fresh")] });
    view.flush();
    expect($(".agentcell-answer").textContent).toContain("fresh");
    expect($(".agentcell-answer").textContent).not.toContain("stale");
    expect($$(".agentcell-tool")).toHaveLength(0);
    expect($$(".agentcell-slot")).toHaveLength(1);
  });

  it("renders from the final trait with no kernel and sends no snapshot request", () => {
    const { model, $, $$ } = mount({ status: "completed", final: fullRun() });
    expect(model.sent).toEqual([]);
    expect($(".agentcell").getAttribute("data-status")).toBe("completed");
    expect($(".agentcell-stop").disabled).toBe(true);
    expect($('.agentcell-answer[data-slot="answer"] strong').textContent).toBe("Dr Ada");
    expect($$(".agentcell-tool")).toHaveLength(1);
    expect($(".agentcell-elapsed").textContent).toBe("3.3 s");
  });

  it("a final trait that arrives later replaces a partial view", () => {
    const { model, view, $ } = mount({ status: "running" });
    send(model, view, [ev.runStarted(), ev.slotStarted(), ev.token("partial")]);
    model.set("status", "completed");
    model.set("final", fullRun());
    view.flush();
    expect($(".agentcell-answer").textContent).toContain("Dr Ada leads PSYC605.");
    expect($(".agentcell-answer").textContent).not.toContain("partial");
  });

  it("ignores events of another run id", () => {
    const { model, view, $ } = mount();
    send(model, view, [ev.runStarted(), ev.token("mine"), ev.token(" theirs", { run_id: "other" })]);
    expect($(".agentcell-answer").textContent.trim()).toBe("mine");
  });

  it("ignores unknown message kinds and unknown event kinds without breaking", () => {
    const { model, view, $ } = mount({ status: "running" });
    model.emit({ kind: "what_is_this", events: [1, 2] });
    model.emit(null);
    send(model, view, [ev.runStarted(), { kind: "future_thing", run_id: "run-1", x: 1 }, null, 42, { nokind: true }, ev.token("still fine")]);
    expect($(".agentcell-answer").textContent.trim()).toBe("still fine");
    expect(view.state.unknownCount).toBe(1);
    // teaching view lists them
    $(".agentcell-teach").click();
    view.flush();
    expect($(".agentcell-teach-unknown").textContent).toContain("future_thing");
  });

  it("malformed known events do not crash the view", () => {
    const { model, view, $ } = mount();
    send(model, view, [
      ev.runStarted({ slots: "nope", limits: 5, tools: null }),
      { kind: "token_delta", run_id: "run-1", slot: "answer", text: 5 },
      { kind: "tool_completed", run_id: "run-1", slot: "answer" },
      { kind: "usage_updated", run_id: "run-1", usage: "x" },
      { kind: "slot_completed", run_id: "run-1" },
      ev.token("ok"),
    ]);
    expect($(".agentcell-answer").textContent.trim()).toBe("ok");
  });
});
