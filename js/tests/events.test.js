// Every event kind renders something a person can see (stage 2, the full widget).
import { describe, expect, it } from "vitest";
import { ev, fullRun } from "./helpers/fixtures.js";
import { viewMounter, text } from "./helpers/mount.js";

const mount = viewMounter();

describe("event kinds", () => {
  it("run_started lays out one section per slot with name and type, and the tools", () => {
    const { send, view, $, $$ } = mount();
    send(ev.runStarted({ slots: [{ name: "plan", type: "json", required: true, use_tools: true }, { name: "answer", type: "text" }], tools: ["a", "b"] }));
    const slots = $$(".agentcell-slot");
    expect(slots.map((s) => s.dataset.slot)).toEqual(["plan", "answer"]);
    expect(slots[0].dataset.slotType).toBe("json");
    expect(slots[0].dataset.slotStatus).toBe("pending");
    expect(text(slots[0].querySelector(".agentcell-slot-name"))).toBe("plan");
    expect(text(slots[0].querySelector(".agentcell-slot-type"))).toBe("json (required) · tools");
    $(".agentcell-teach").click();
    $(".agentcell-teach") && view.flush();
    expect($$(".agentcell-teach-tools li").map(text)).toEqual(["a", "b"]);
  });

  it("slot_started marks the slot running", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted());
    expect($('.agentcell-slot[data-slot="answer"]').dataset.slotStatus).toBe("running");
    expect(text($(".agentcell-slot-status"))).toBe("running");
  });

  it("thinking_delta: dim, collapsible, accumulated per round", () => {
    const { send, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.thinking("Hmm, "), ev.thinking("let me think."));
    const th = $$(".agentcell-thinking");
    expect(th).toHaveLength(1);
    expect(th[0].tagName).toBe("DETAILS");
    expect(th[0].querySelector(".agentcell-thinking-text").textContent).toBe("Hmm, let me think.");
    expect(th[0].closest(".agentcell-round").dataset.round).toBe("1");
    // the user's open/closed choice survives further deltas
    th[0].open = true;
    send(ev.thinking(" More."));
    expect($(".agentcell-thinking").open).toBe(true);
    expect($(".agentcell-thinking-text").textContent).toBe("Hmm, let me think. More.");
  });

  it("slot_retracted(gathering) moves the text from the answer to narration, before the tool card", () => {
    const { send, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.token("Let me look it up."), ev.toolStarted());
    expect(text($(".agentcell-answer"))).toBe("Let me look it up.");
    send(ev.retracted("gathering", "Let me look it up."));
    expect(text($(".agentcell-answer"))).toBe("");
    const items = $$(".agentcell-round .agentcell-item");
    expect(items[0].classList.contains("agentcell-narration")).toBe(true);
    expect(items[0].dataset.reason).toBe("gathering");
    expect(text(items[0].querySelector(".agentcell-narration-text"))).toBe("Let me look it up.");
    expect(items[1].classList.contains("agentcell-tool")).toBe(true);
  });

  it("slot_retracted(errored / halted) shows the reason; (stopped) keeps the partial answer marked", () => {
    const { send, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.token("bad"), ev.retracted("errored"));
    expect($(".agentcell-narration").dataset.reason).toBe("errored");
    expect(text($(".agentcell-narration-reason"))).toMatch(/request failed/);
    expect(text($(".agentcell-narration-text"))).toBe("bad");
    send(ev.token("worse", { round: 2 }), ev.retracted("halted", "", { round: 2 }));
    expect($$(".agentcell-narration")[1].dataset.reason).toBe("halted");
    send(ev.token("partial ans", { round: 3 }), ev.retracted("stopped", "partial ans", { round: 3 }));
    const ans = $(".agentcell-answer");
    expect(text(ans.querySelector(".agentcell-markdown"))).toBe("partial ans");
    expect(ans.dataset.stopped).toBe("true");
    expect(text(ans.querySelector(".agentcell-answer-stopped"))).toMatch(/partial answer/);
  });

  it("tool_started then tool_completed: name, formatted args, result, duration", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.toolStarted());
    let card = $('.agentcell-tool[data-call-id="c1"]');
    expect(card.dataset.toolStatus).toBe("running");
    expect(card.dataset.tool).toBe("lookup_module");
    expect(text(card.querySelector(".agentcell-tool-name"))).toBe("lookup_module");
    expect(card.querySelector(".agentcell-tool-args pre").textContent).toBe('{ "module_code": "PSYC605" }');
    send(ev.toolCompleted());
    card = $('.agentcell-tool[data-call-id="c1"]');
    expect(card.dataset.toolStatus).toBe("ok");
    expect(card.querySelector(".agentcell-tool-result pre").textContent).toBe("Research Methods, led by Dr Ada");
    expect(text(card.querySelector(".agentcell-tool-duration"))).toBe("13 ms");
    expect(card.querySelector(".agentcell-cached")).toBeNull();
  });

  it("tool errors are styled, cached results get a badge, long results are collapsed, JSON results pretty", () => {
    const { send, $ } = mount();
    send(
      ev.runStarted(),
      ev.slotStarted(),
      ev.toolStarted({ call_id: "e" }),
      ev.toolCompleted({ call_id: "e", ok: false, error: "ValueError: no", result: "Tool failed: ValueError: no" }),
      ev.toolStarted({ call_id: "c" }),
      ev.toolCompleted({ call_id: "c", was_cached: true, elapsed_ms: 1500 }),
      ev.toolStarted({ call_id: "l" }),
      ev.toolCompleted({ call_id: "l", result: "x".repeat(5000) }),
      ev.toolStarted({ call_id: "j" }),
      ev.toolCompleted({ call_id: "j", result: '{"a":1,"b":[1,2]}' }),
    );
    const err = $('[data-call-id="e"]');
    expect(err.dataset.toolStatus).toBe("error");
    expect(text(err.querySelector(".agentcell-tool-error"))).toBe("ValueError: no");
    expect(err.querySelector(".agentcell-error-badge")).not.toBeNull();
    const cached = $('[data-call-id="c"]');
    expect(cached.dataset.cached).toBe("true");
    expect(text(cached.querySelector(".agentcell-cached"))).toBe("cached");
    expect(text(cached.querySelector(".agentcell-tool-duration"))).toBe("1.50 s");
    const long = $('[data-call-id="l"] .agentcell-tool-result');
    expect(long.tagName).toBe("DETAILS");
    expect(long.open).toBe(false);
    expect(text(long.querySelector("summary"))).toBe("result (5,000 chars)");
    expect($('[data-call-id="j"] .agentcell-tool-result pre').textContent).toBe('{\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}');
  });

  it("approval_requested shows Approve / Deny; clicks send the right messages; approval_resolved shows the outcome", () => {
    const { model, send, view, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    let box = $('.agentcell-approval[data-call-id="c9"]');
    expect(box.dataset.approval).toBe("pending");
    expect(text(box.querySelector(".agentcell-tool-name"))).toBe("send_email");
    expect(box.querySelector(".agentcell-tool-args pre").textContent).toContain('"to": "a@b.c"');
    expect(box.querySelector(".agentcell-approve").getAttribute("aria-label")).toBe("Approve send_email");
    box.querySelector(".agentcell-approve").click();
    expect(model.sent).toContainEqual({ kind: "approve", call_id: "c9", approved: true, reason: null });
    view.flush();
    box = $('.agentcell-approval[data-call-id="c9"]');
    expect(box.dataset.approval).toBe("sent");
    expect(box.querySelector(".agentcell-approve")).toBeNull(); // no double answers
    send(ev.approvalResolved(true));
    expect($('.agentcell-approval[data-call-id="c9"]').dataset.approval).toBe("approved");
    expect(text($(".agentcell-approval-outcome"))).toBe("approved");
  });

  it("deny sends the optional reason", () => {
    const { model, send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested({ call_id: "d1" }), ev.approvalRequested({ call_id: "d2" }));
    const b1 = $('[data-call-id="d1"]');
    b1.querySelector(".agentcell-reason").value = "  not today  ";
    b1.querySelector(".agentcell-deny").click();
    $('[data-call-id="d2"] .agentcell-deny').click();
    expect(model.sent).toContainEqual({ kind: "approve", call_id: "d1", approved: false, reason: "not today" });
    expect(model.sent).toContainEqual({ kind: "approve", call_id: "d2", approved: false, reason: null });
    send(ev.approvalResolved(false, "not today", { call_id: "d1" }));
    expect($('[data-call-id="d1"]').dataset.approval).toBe("denied");
    expect(text($('[data-call-id="d1"] .agentcell-approval-outcome'))).toBe("denied: not today");
  });

  it("approval buttons disappear when the run ends unanswered", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested(), ev.done("stopped"));
    expect($(".agentcell-approve")).toBeNull();
    expect(text($(".agentcell-approval-outcome"))).toMatch(/not answered/);
  });

  it("retrying shows 'retrying in 2.0 s after 429'", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.retrying());
    expect(text($(".agentcell-retry"))).toBe("retrying in 2.0 s after 429 (attempt 1)");
  });

  it("usage_updated drives the budget meter (per-slot vs ceiling) and run totals", () => {
    const { send, $ } = mount();
    send(ev.runStarted({ limits: { requests: 5, tool_calls: 4, output_tokens: 100 } }), ev.slotStarted());
    send(ev.usage({ requests: 4, tool_calls: 1, input_tokens: 15300, output_tokens: 420, cost: 0.0042 }));
    const req = $(".agentcell-meter-requests");
    expect(req.dataset.used).toBe("4");
    expect(req.dataset.limit).toBe("5");
    expect(req.dataset.level).toBe("high");
    expect(text(req)).toContain("4/5");
    expect(text($(".agentcell-meter-tools"))).toContain("1/4");
    expect(text($(".agentcell-tokens"))).toBe("tokens 15k in / 420 out");
    expect(text($(".agentcell-cost"))).toBe("cost $0.0042");
    // a second slot's meter starts from its own usage
    send(ev.slotStarted("second"), ev.usage({ requests: 5, tool_calls: 1, input_tokens: 16000, output_tokens: 500, cost: 0.005 }, { slot: "second" }));
    expect($(".agentcell-meter-requests").dataset.used).toBe("1");
    expect(text($('[data-slot="answer"] .agentcell-slot-usage'))).toBe("4 requests · 1 tool call · cost $0.0042");
  });

  it("cost is hidden before any request, and an unknown one reads — (never $0.00)", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.usage({ requests: 0 }));
    expect($(".agentcell-cost").hidden).toBe(true);
    send(ev.usage({ requests: 1 }));
    expect($(".agentcell-cost").hidden).toBe(false);
    expect(text($(".agentcell-cost"))).toBe("cost —");
    expect($(".agentcell-cost").title).toBe("cost unknown: no published price for this model");
  });

  it("a small known cost keeps its digits, with the exact value on hover", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.usage({ requests: 1, input_tokens: 10, output_tokens: 5, cost: 4.5e-6 }));
    expect(text($(".agentcell-cost"))).toBe("cost $0.0000045");
    expect($(".agentcell-cost").title).toBe("cost of the whole run: $0.0000045");
    expect(text($('[data-slot="answer"] .agentcell-slot-usage'))).toBe("1 request · 0 tool calls · cost $0.0000045");
  });

  it("run_warning: run-level and slot-level", () => {
    const { send, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.warning("budget clamped to 10 requests"), ev.warning("trailing text ignored", { slot: "answer" }));
    expect(text($(".agentcell-run-items .agentcell-warning"))).toBe("warning: budget clamped to 10 requests");
    expect(text($('.agentcell-slot[data-slot="answer"] .agentcell-warning'))).toBe("warning: trailing text ignored");
    expect($$(".agentcell-warning")).toHaveLength(2);
  });

  it("guard_tripped shows the verdict and the halted status", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.guard("asks to ignore the instructions"), ev.done("halted", { early_termination: true }));
    expect(text($(".agentcell-guard"))).toBe("guard tripped: asks to ignore the instructions");
    expect($(".agentcell").dataset.status).toBe("halted");
    expect(text($(".agentcell-status"))).toBe("halted (guard)");
    expect($('[data-slot="answer"]').dataset.slotStatus).toBe("halted");
  });

  it("checkpoint_reached", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.checkpoint("Part 2"));
    expect(text($(".agentcell-checkpoint"))).toMatch(/^checkpoint: Part 2/);
  });

  it("typed slots: drafting… while running, then the parsed value pretty-printed", () => {
    const { send, $ } = mount();
    send(ev.runStarted({ slots: [{ name: "plan", type: "json" }] }), ev.slotStarted("plan", { slot_type: "json" }));
    const ans = $('.agentcell-answer[data-slot="plan"]');
    expect(ans.querySelector(".agentcell-drafting").hidden).toBe(false);
    expect(text(ans)).toBe("drafting…");
    send(ev.slotCompleted({ steps: ["a", "b"], n: 2 }, '{"steps":["a","b"],"n":2}', { slot: "plan" }));
    expect(ans.querySelector(".agentcell-drafting").hidden).toBe(true);
    expect(ans.querySelector(".agentcell-value").textContent).toBe('{\n  "steps": [\n    "a",\n    "b"\n  ],\n  "n": 2\n}');
    expect($('[data-slot="plan"]').dataset.slotStatus).toBe("completed");
  });

  it("bool / pick values show as JSON", () => {
    const { send, $ } = mount();
    send(ev.runStarted({ slots: [{ name: "ok", type: "bool" }, { name: "mood", type: "pick" }] }));
    send(ev.slotCompleted(false, "false", { slot: "ok" }), ev.slotCompleted("happy", "happy", { slot: "mood" }));
    expect($('[data-slot="ok"] .agentcell-value').textContent).toBe("false");
    expect($('[data-slot="mood"] .agentcell-value').textContent).toBe('"happy"');
  });

  it("slot_completed replaces the streamed text by the final text, rendered as Markdown", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.token("# Head"), ev.slotCompleted("# Heading\n\nbody", "# Heading\n\nbody"));
    expect($(".agentcell-answer h1").textContent).toBe("Heading");
    expect($(".agentcell-answer p").textContent).toBe("body");
  });

  it("slot_failed shows the error and keeps the partial answer marked", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.slotFailed("budget_exhausted", "request limit of 20 reached", "half an ans"));
    const slot = $('[data-slot="answer"]');
    expect(slot.dataset.slotStatus).toBe("budget_exhausted");
    expect(text(slot.querySelector(".agentcell-slot-error"))).toBe("request limit of 20 reached");
    expect(text(slot.querySelector(".agentcell-markdown"))).toBe("half an ans");
    expect(slot.querySelector(".agentcell-answer").dataset.stopped).toBe("true");
  });

  it("processing_complete: final status, usage and frozen clock; slots that never ran are 'skipped'", () => {
    const { send, $ } = mount();
    send(ev.runStarted({ slots: [{ name: "answer", type: "text" }, { name: "later", type: "text" }] }), ev.slotStarted(), ev.token("hi"));
    send(ev.done("stopped"));
    expect($(".agentcell").dataset.status).toBe("stopped");
    expect(text($(".agentcell-tokens"))).toBe("tokens 1.2k in / 340 out");
    expect(text($(".agentcell-elapsed"))).toBe("3.3 s");
    expect($('[data-slot="later"]').dataset.slotStatus).toBe("skipped");
    expect($('[data-slot="answer"]').dataset.slotStatus).toBe("stopped");
  });

  it("future payload kinds appear in the teaching view only", () => {
    const { send, view, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), { kind: "model_request", run_id: "run-1", slot: "answer", round: 1, request: { messages: [{ role: "user", content: "hi" }] }, t: 0.1 });
    const p = $(".agentcell-payload");
    expect(p.classList.contains("agentcell-teach-only")).toBe(true);
    expect(p.textContent).toContain("model request");
    expect($(".agentcell").dataset.teaching).toBe("false");
    $(".agentcell-teach").click();
    view.flush();
    expect($(".agentcell").dataset.teaching).toBe("true");
    expect($(".agentcell-teach").getAttribute("aria-pressed")).toBe("true");
    expect($(".agentcell-payload").textContent).toContain('"content": "hi"');
  });

  it("model and tool text never becomes markup outside the Markdown answer", () => {
    globalThis.__pwned = undefined;
    const evil = '<img src=x onerror="globalThis.__pwned=1"><script>globalThis.__pwned=1</script>';
    const { send, el, $$ } = mount();
    send(
      ev.runStarted({ model: evil, slots: [{ name: evil, type: evil }], tools: [evil] }),
      ev.slotStarted(evil, { slot_type: "text" }),
      ev.thinking(evil, { slot: evil }),
      ev.toolStarted({ slot: evil, tool_name: evil, args: { [evil]: evil } }),
      ev.toolCompleted({ slot: evil, tool_name: evil, ok: false, error: evil, result: evil }),
      ev.approvalRequested({ slot: evil, tool_name: evil, args: { x: evil } }),
      ev.warning(evil),
      ev.guard(evil, { slot: evil }),
      ev.retrying({ reason: evil }),
      ev.checkpoint(evil),
      ev.token(evil, { slot: evil }),
      ev.retracted("gathering", evil, { slot: evil }),
      ev.slotFailed("failed", evil, "", { slot: evil }),
    );
    expect($$("img, script")).toHaveLength(0);
    expect(el.textContent).toContain("<img src=x");
    expect(globalThis.__pwned).toBeUndefined();
  });
});

// A run whose model requests went out as teaching payloads (what Python emits for every request):
// request 1 carries the system + user messages, request 2 only what came after (offset 2).
const SYSTEM = { role: "system", content: "Be brief." };
const USER = { role: "user", content: "Who leads PSYC605?" };
const CALL = { role: "assistant", content: "I will check the module.", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup_module", arguments: '{"module_code":"PSYC605"}' } }] };
const RESULT = { role: "tool", tool_call_id: "c1", content: "Research Methods, led by Dr Ada" };
function requestedRun() {
  const run = fullRun();
  const at = (kind) => run.findIndex((e) => e.kind === kind);
  run.splice(at("thinking_delta"), 0, ev.modelRequest(1, [SYSTEM, USER]));
  run.splice(at("tool_started"), 0, ev.modelResponse(1, [
    { part_kind: "thinking", content: "Let me look that up." },
    { part_kind: "text", content: "I will check the module." },
    { part_kind: "tool-call", tool_name: "lookup_module", args: { module_code: "PSYC605" }, tool_call_id: "c1" },
  ]));
  const round2 = run.findIndex((e) => e.kind === "token_delta" && e.round === 2);
  run.splice(round2, 0, ev.modelRequest(2, [CALL, RESULT], { offset: 2, t: 1.5 }));
  run.splice(at("slot_completed"), 0, ev.modelResponse(2, [{ part_kind: "text", content: "**Dr Ada** leads PSYC605." }], { t: 1.8 }));
  return run;
}

describe("export", () => {
  const exact = { openai: [USER, { role: "assistant", content: "Dr Ada" }], pydantic_ai: [] };
  it("copy puts transcript JSON on the clipboard", async () => {
    let copied = null;
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t) => void (copied = t) } });
    const { send, $ } = mount({ status: "completed" });
    const run = fullRun();
    run[run.length - 1] = ev.done("completed", { transcript: exact });
    send(run);
    $(".agentcell-export-format").value = "events";
    $(".agentcell-copy").click();
    await new Promise((r) => setTimeout(r, 0));
    const data = JSON.parse(copied);
    expect(data.format).toBe("agentcell-transcript");
    expect(data.status).toBe("completed");
    expect(data.slots.answer.text).toContain("Dr Ada");
    // the messages are the ones Python sent (never converted in the browser)
    expect(data.messages).toEqual(exact.openai);
    expect(data.exact).toEqual({ transcript: exact });
    // text deltas are coalesced in the exported events
    expect(data.events.filter((e) => e.kind === "token_delta")).toHaveLength(2);
    expect($(".agentcell-notice").textContent).toBe("transcript copied");
  });

  it("download creates a JSON blob link", () => {
    const urls = [];
    URL.createObjectURL = (b) => (urls.push(b), "blob:fake");
    URL.revokeObjectURL = () => {};
    const { send, $ } = mount({ status: "completed" });
    send(requestedRun());
    $(".agentcell-download").click();
    expect(urls).toHaveLength(1);
    expect(urls[0].type).toBe("application/json");
  });
});

describe("exact export", () => {
  const exact = {
    openai: [{ role: "user", content: "Who leads PSYC605?" }, { role: "assistant", content: "Dr Ada" }],
    pydantic_ai: [{ kind: "request", parts: [{ part_kind: "user-prompt", content: "Who leads PSYC605?" }] }],
  };
  async function copyAs(fmt, events) {
    let copied = null;
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t) => void (copied = t) } });
    const { send, $ } = mount({ status: "completed" });
    send(events);
    $(".agentcell-export-format").value = fmt;
    $(".agentcell-copy").click();
    await new Promise((r) => setTimeout(r, 0));
    return { copied, $ };
  }
  it("offers OpenAI, pydantic-ai and events formats, OpenAI first", () => {
    const { $$ } = mount();
    expect($$(".agentcell-export-format option").map((o) => o.value)).toEqual(["openai", "pydantic_ai", "events"]);
  });
  it("copies the kernel's exact OpenAI messages once the run ended", async () => {
    const run = fullRun();
    run[run.length - 1] = ev.done("completed", { transcript: exact });
    const { copied } = await copyAs("openai", run);
    expect(JSON.parse(copied)).toEqual(exact.openai);
  });
  it("copies the kernel's exact pydantic-ai messages once the run ended", async () => {
    const run = fullRun();
    run[run.length - 1] = ev.done("completed", { transcript: exact });
    const { copied } = await copyAs("pydantic_ai", run);
    expect(JSON.parse(copied)).toEqual(exact.pydantic_ai);
  });
  it("a live view picks the exact transcript up from the final trait (not from the live batch)", async () => {
    let copied = null;
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t) => void (copied = t) } });
    const { model, send, $ } = mount();
    const run = fullRun();
    send(run); // live: processing_complete without transcript
    model.set("final", [...run.slice(0, -1), { ...run[run.length - 1], transcript: exact }]);
    $(".agentcell-export-format").value = "pydantic_ai";
    $(".agentcell-copy").click();
    await new Promise((r) => setTimeout(r, 0));
    expect(JSON.parse(copied)).toEqual(exact.pydantic_ai);
  });
  it("while running, OpenAI messages are the model requests' (by offset) plus the latest response; pydantic-ai waits for the end", async () => {
    const run = requestedRun();
    const running = run.slice(0, run.findIndex((e) => e.kind === "slot_completed"));
    const a = await copyAs("openai", running);
    expect(JSON.parse(a.copied)).toEqual([SYSTEM, USER, CALL, RESULT, { role: "assistant", content: "**Dr Ada** leads PSYC605." }]);
    // after request 1's response, before request 2: the response is the last message
    const early = run.slice(0, run.findIndex((e) => e.kind === "tool_started"));
    const b = await copyAs("openai", early);
    expect(JSON.parse(b.copied)).toEqual([SYSTEM, USER, CALL]);
    const c = await copyAs("pydantic_ai", running);
    expect(c.copied).toBeNull();
    expect(c.$(".agentcell-notice").textContent).toContain("once the run has ended");
  });
  it("a request with offset 0 (history rewritten by compaction) replaces the messages", async () => {
    const summary = { role: "user", content: "Summary: Dr Ada leads PSYC605." };
    const run = [...requestedRun().slice(0, -3), ev.modelRequest(3, [SYSTEM, summary], { offset: 0, t: 1.9 })];
    const { copied } = await copyAs("openai", run);
    expect(JSON.parse(copied)).toEqual([SYSTEM, summary]);
  });
  it("OpenAI messages are refused before any model request (nothing is made up)", async () => {
    const { copied, $ } = await copyAs("openai", fullRun().slice(0, 9));
    expect(copied).toBeNull();
    expect($(".agentcell-notice").textContent).toContain("first model request");
  });
  it("downloads with a format-specific file name", () => {
    URL.createObjectURL = () => "blob:fake";
    URL.revokeObjectURL = () => {};
    const names = [];
    const orig = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      names.push(this.getAttribute("download"));
    };
    try {
      const { send, $ } = mount({ status: "completed" });
      const run = fullRun();
      run[run.length - 1] = ev.done("completed", { transcript: exact });
      send(run);
      for (const fmt of ["openai", "pydantic_ai", "events"]) {
        $(".agentcell-export-format").value = fmt;
        $(".agentcell-download").click();
      }
    } finally {
      HTMLAnchorElement.prototype.click = orig;
    }
    expect(names).toEqual(["agentcell-run-1.openai.json", "agentcell-run-1.pydantic-ai.json", "agentcell-run-1.events.json"]);
  });
});

describe("accessibility", () => {
  it("all buttons are real <button>s with aria-labels", () => {
    const { send, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    const buttons = $$("button");
    expect(buttons.length).toBeGreaterThanOrEqual(6);
    for (const b of buttons) {
      expect(b.getAttribute("type")).toBe("button");
      expect(b.getAttribute("aria-label")).toBeTruthy();
      expect(b.tabIndex).toBe(0);
    }
  });
});
