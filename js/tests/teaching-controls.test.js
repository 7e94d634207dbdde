// The teaching view's controls do what they look like: picking a wire format opens what it changes; a
// deliberate Stop is said once (no "stopped" error line, the kept text is "partial answer"); the line after
// Approve / Deny is a marked line of text, not something that looks like a field.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { FakeModel } from "./helpers/fake-model.js";
import { ev } from "./helpers/fixtures.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "fixtures", "teaching");

let mounted = [];
function mount(events, traits = {}) {
  const model = new FakeModel(traits);
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  model.emit({ kind: "events", events });
  view.flush();
  return { el, view, model, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
});

describe("the wire format switch", () => {
  it("opens each slot's latest wire when a format is picked, and keeps the others as the reader left them", () => {
    const events = JSON.parse(readFileSync(join(FIXTURES, "lesson.events.json"), "utf8"));
    const { $, $$, view } = mount(events, { status: "completed" });
    $(".agentcell-teach").click();
    view.flush();
    const wires = () => $$(".ac-lesson-slot details.ac-wire");
    expect(wires().length).toBeGreaterThan(1);
    expect(wires().every((d) => !d.open)).toBe(true);
    $('.ac-format-btn[data-format="pydantic_ai"]').click();
    view.flush();
    const after = wires();
    expect(after.at(-1).open).toBe(true);
    expect(after.at(-1).dataset.format).toBe("pydantic_ai");
    expect(after.slice(0, -1).every((d) => !d.open)).toBe(true);
  });
});

describe("a deliberate Stop", () => {
  it("is said by the status, not again as an error, and the kept text is a partial answer", () => {
    const { $ } = mount([
      ev.runStarted(), ev.slotStarted(), ev.token("Dr Ada le", { t: 1.6 }),
      ev.slotFailed("stopped", "stopped", "Dr Ada le", { t: 1.7 }), ev.done("stopped", { answer: null, t: 1.8 }),
    ]);
    expect($(".agentcell-slot-error").hidden).toBe(true);
    expect($(".agentcell-answer-stopped").textContent).toBe("partial answer");
  });

  it("a failure still shows its error", () => {
    const { $ } = mount([
      ev.runStarted(), ev.slotStarted(), ev.token("Dr Ada le", { t: 1.6 }),
      ev.slotFailed("failed", "ConnectionError: gone", "Dr Ada le", { t: 1.7 }), ev.done("failed", { answer: null, t: 1.8 }),
    ]);
    expect($(".agentcell-slot-error").hidden).toBe(false);
    expect($(".agentcell-slot-error").textContent).toBe("ConnectionError: gone");
  });
});

describe("the approval outcome", () => {
  it("is a line of text that says which answer, with no field-like box", () => {
    const { $, view } = mount([ev.runStarted(), ev.slotStarted(), ev.approvalRequested()]);
    $(".agentcell-approve").click();
    view.flush();
    const line = $(".agentcell-approval-outcome");
    expect(line.tagName).toBe("DIV");
    expect(line.dataset.outcome).toBe("sent");
    expect(line.querySelector("input, textarea")).toBeNull();
  });
});

describe("the context gauge", () => {
  const ctxEv = (extra) => ({ kind: "context_updated", run_id: "run-1", slot: "answer", used_tokens: 1200, window: 128000, fraction: 0.0094, request: 1, t: 1, ...extra });

  it("shows a known window as a fraction", () => {
    const { $ } = mount([ev.runStarted(), ev.slotStarted(), ctxEv({})]);
    const gauge = $(".agentcell-context");
    expect(gauge.hidden).toBe(false);
    expect(gauge.querySelector(".agentcell-meter-text").textContent).toBe("1.2k / 128k");
    expect(gauge.dataset.window).toBe("128000");
  });

  it("says 'window unknown' when the window is only assumed, with no fraction or bar", () => {
    const { $ } = mount([ev.runStarted(), ev.slotStarted(), ctxEv({ window_known: false })]);
    const gauge = $(".agentcell-context");
    expect(gauge.querySelector(".agentcell-meter-text").textContent).toBe("1.2k · window unknown");
    expect(gauge.dataset.windowKnown).toBe("false");
    expect(gauge.hasAttribute("data-window")).toBe(false);
    expect(gauge.hasAttribute("data-limit")).toBe(false);
  });
});

describe("the offline badge", () => {
  it("says the offline model was chosen, or that it answers because nothing was configured", () => {
    const chosen = mount([ev.runStarted({ model: "offline", offline: true, offline_chosen: true })]);
    expect(chosen.$(".agentcell-offline").textContent).toBe("offline (chosen)");
    const fallback = mount([ev.runStarted({ model: "offline", offline: true })]);
    expect(fallback.$(".agentcell-offline").textContent).toBe("offline default model");
  });
});

describe("the header's name for what started the run", () => {
  it("is %%agent for a cell and agentcell for show()", () => {
    expect(mount([ev.runStarted()]).$(".agentcell-logo").textContent).toBe("%%agent");
    expect(mount([ev.runStarted()], { origin: "agentcell" }).$(".agentcell-logo").textContent).toBe("agentcell");
  });
});
