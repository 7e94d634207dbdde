// Lesson mode in the live view: the step bar (Next / Run to end / Stop, the request body or the call's
// arguments in view, the prediction), the cell at the top of the teaching view, the timeline.
import { describe, expect, it } from "vitest";
import { timelineOf } from "../src/teach/timeline.js";
import { ev } from "./helpers/fixtures.js";
import { viewMounter } from "./helpers/mount.js";

const R = "run-1";
const paused = (number, extra = {}) => ({
  kind: "step_paused", run_id: R, slot: "answer", round: 1, number, before: "request",
  summary: "paused before request 1: 1 message, 1 tool offered", messages: 1, tools: ["lookup_module"], predict: false, t: 0.2, ...extra,
});
const resumed = (number, how = "next", t = 0.3) => ({ kind: "step_resumed", run_id: R, slot: "answer", round: 1, number, how, waited_ms: 100, t });

const mount = viewMounter();

describe("the step bar", () => {
  it("is hidden for a run that is not stepped", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted());
    expect($(".ac-stepper").hidden).toBe(true);
  });

  it("says what is next, shows the request body, and Next / Run to end / Stop send their messages", () => {
    const { send, $, model, view } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.modelRequest(1, [{ role: "user", content: "Who leads PSYC605?" }], { t: 0.15 }), paused(1));
    expect($(".ac-stepper").hidden).toBe(false);
    expect($(".ac-step-summary").textContent).toBe("paused before request 1: 1 message, 1 tool offered");
    const body = JSON.parse($(".ac-step-body pre").textContent);
    expect(body.messages).toEqual([{ role: "user", content: "Who leads PSYC605?" }]);
    expect(body.tools).toEqual(["lookup_module"]);
    $(".ac-step-next").focus();
    $(".ac-step-next").click();
    expect(model.sent.at(-1)).toEqual({ kind: "step" });
    send(resumed(1));
    expect($(".ac-step-summary").textContent).toBe("running to the next pause…");
    expect($(".ac-step-next").getAttribute("aria-disabled")).toBe("true");
    expect(document.activeElement).toBe($(".ac-step-next")); // the focus stays on Next between pauses
    send(paused(2, { before: "tool", tool_name: "lookup_module", args: { module_code: "PSYC605" }, summary: "paused before lookup_module(module_code='PSYC605')", t: 0.5 }));
    expect(JSON.parse($(".ac-step-body pre").textContent)).toEqual({ lookup_module: { module_code: "PSYC605" } });
    expect($(".ac-step-next").hasAttribute("aria-disabled")).toBe(false);
    $(".ac-step-go").click();
    expect(model.sent.at(-1)).toEqual({ kind: "go" });
    $(".ac-step-stop").click();
    expect(model.sent.at(-1)).toEqual({ kind: "stop" });
    send(resumed(2, "go", 0.6));
    expect($(".ac-stepper").hidden).toBe(true);
    expect(view.state.unknownCount).toBe(0);
  });

  it("asks the prediction and sends the guess", () => {
    const { send, view, $, $$, model } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.modelRequest(1, [{ role: "user", content: "Q" }]), paused(1, { predict: true }));
    expect($(".ac-guess legend").textContent).toBe("What will the model do?");
    const choices = $$(".ac-guess-btn");
    expect(choices.map((b) => b.dataset.guess)).toEqual(["answer", "tool", "both"]);
    choices[1].focus();
    choices[1].click();
    expect(model.sent.at(-1)).toEqual({ kind: "predict", does: "tool", tool: "lookup_module" });
    view.flush();
    expect($(".ac-guess-said").textContent).toBe("Your guess: tool (lookup_module). Press Next to see.");
    expect(document.activeElement.dataset.guess).toBe("tool"); // the rebuilt choice keeps the focus
    expect($(".ac-guess-btn[data-guess=tool]").getAttribute("aria-pressed")).toBe("true");
  });
});

describe("the teaching view of a lesson run", () => {
  it("shows the cell it came from, with its values", () => {
    const { send, view, $, $$ } = mount({ status: "running", source: { template: "Who leads {{ code }}?\n[[answer]]", call: "%%agent --step", values: [["code", "'PSYC605'"]] } });
    send(ev.runStarted(), ev.slotStarted());
    $(".agentcell-teach").click();
    view.flush();
    expect($(".ac-source-call").textContent).toBe("%%agent --step");
    expect($(".ac-source-template").textContent).toBe("Who leads {{ code }}?\n[[answer]]");
    expect($$(".ac-source-values tr").map((r) => r.textContent)).toEqual(["{{ code }}'PSYC605'"]);
  });

  it("draws a timeline: requests with their first token, overlapping tools, back-off and pauses, injected marked", () => {
    const events = [
      ev.runStarted(),
      ev.modelRequest(1, [], { t: 1 }),
      paused(1, { t: 1 }),
      resumed(1, "next", 2),
      { kind: "fault_injected", run_id: R, slot: "answer", round: 1, target: "model", fault: "429", spec: "model=429:0.5", t: 2 },
      ev.retrying({ reason: "429 (injected)", delay_s: 0.5, t: 2 }),
      ev.thinking("hm", { t: 2.75 }),
      ev.modelResponse(1, [], { t: 3 }),
      ev.toolStarted({ call_id: "a", t: 3.1 }),
      ev.toolStarted({ call_id: "b", tool_name: "other", server: "git", t: 3.2 }),
      ev.toolCompleted({ call_id: "a", t: 3.6 }),
      ev.toolCompleted({ call_id: "b", tool_name: "other", t: 3.5 }),
      ev.done("completed", { t: 4 }),
    ];
    const tl = timelineOf(events);
    const byKind = (k) => tl.bars.filter((b) => b.kind === k);
    const [request] = byKind("request");
    expect([request.start, request.first, request.end, request.injected]).toEqual([2, 2.75, 3, true]);
    expect(byKind("backoff").map((b) => [b.start, b.end, b.injected])).toEqual([[2, 2.5, true]]);
    expect(byKind("step").map((b) => [b.start, b.end])).toEqual([[1, 2]]);
    const [a, b] = byKind("tool");
    expect([a.label, b.label]).toEqual(["lookup_module", "git · other"]); // an MCP tool's bar names its server
    expect(a.start < b.end && b.start < a.end).toBe(true); // ran together
    expect([tl.t0, tl.t1]).toEqual([0, 4]);
    const { send, view, $, $$ } = mount();
    send(events);
    $(".agentcell-teach").click();
    view.flush();
    expect($$(".ac-tl-row").map((r) => r.dataset.kind)).toEqual(["step", "request", "backoff", "tool", "tool"]);
    expect($(".ac-tl-row[data-kind=backoff] .ac-injected").textContent).toBe("injected");
    expect($(".ac-tl-totals").textContent).toBe("total 4.0 s · model requests 1.00 s · tools 800 ms · waits 1.50 s");
  });
});
