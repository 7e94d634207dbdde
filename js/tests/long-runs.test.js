// Event kinds of long runs (context gauge, compaction, per-request rows, resume) and the teaching
// payloads (tool schemas, per-round model request / response): each asserts what a person sees.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replay, slotAnswer } from "../src/state.js";
import { formatTokens, plural } from "../src/format.js";
import { ev, resumedRun } from "./helpers/fixtures.js";
import { viewMounter, text } from "./helpers/mount.js";

// The real stylesheet, so "hidden in the normal view" is checked the way a browser would apply it.
let sheet;
beforeAll(() => {
  sheet = document.createElement("style");
  sheet.textContent = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../src/widget.css"), "utf8");
  document.head.append(sheet);
});
afterAll(() => sheet.remove());

const mountView = viewMounter();
function mount(traits) {
  const mounted = mountView(traits);
  const teach = () => {
    mounted.el.querySelector(".agentcell-teach").click();
    mounted.view.flush();
  };
  return { ...mounted, teach };
}
const visible = (el) => {
  for (let e = el; e; e = e.parentElement) if (e.hidden || getComputedStyle(e).display === "none") return false;
  return true;
};

describe("context gauge (context_updated)", () => {
  it("is hidden until the first report, then shows used / window with a bar", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted());
    expect($(".agentcell-context").hidden).toBe(true);
    send(ev.context(12300, 128000));
    const g = $(".agentcell-context");
    expect(g.hidden).toBe(false);
    expect(text(g)).toBe("context 12.3k / 128k");
    expect(g.dataset.used).toBe("12300");
    expect(g.dataset.window).toBe("128000");
    expect(g.dataset.level).toBe("ok");
    expect(g.querySelector(".agentcell-bar-fill").style.width).toBe("9.6%");
  });

  it("turns to the warning level past 0.8 and full at the window", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.context(80000, 100000));
    expect($(".agentcell-context").dataset.level).toBe("ok");
    send(ev.context(80100, 100000, { request: 2 }));
    expect($(".agentcell-context").dataset.level).toBe("high");
    expect(text($(".agentcell-context"))).toBe("context 80.1k / 100k");
    send(ev.context(120000, 100000, { request: 3 }));
    expect($(".agentcell-context").dataset.level).toBe("full");
    expect($(".agentcell-context .agentcell-bar-fill").style.width).toBe("100%");
  });
});

describe("compaction (compaction_started / compaction_finished)", () => {
  it("marks where history was compacted, with the summary collapsed", () => {
    const { send, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.toolStarted(), ev.toolCompleted(), ev.context(40000, 50000));
    send(ev.compactionStarted());
    const running = $(".agentcell-compaction");
    expect(running.dataset.compaction).toBe("running");
    expect(text(running)).toContain("compacting history: ~41k tokens of 50k");
    // it belongs to the request about to go out: round 2, after round 1's tool card
    expect(running.closest(".agentcell-round").dataset.round).toBe("2");
    send(ev.compactionFinished());
    const marks = $$(".agentcell-compaction");
    expect(marks).toHaveLength(1);
    const m = marks[0];
    expect(m.dataset.compaction).toBe("done");
    expect(m.dataset.before).toBe("41000");
    expect(m.dataset.after).toBe("9000");
    expect(text(m.querySelector(".agentcell-compaction-text"))).toBe("history compacted: 41k → 9k tokens");
    expect(text(m.querySelector(".agentcell-compaction-detail"))).toBe("11 messages summarized (23 → 12 messages)");
    const d = m.querySelector("details.agentcell-compaction-summary");
    expect(d.open).toBe(false);
    expect(d.querySelector(".agentcell-compaction-summary-text").textContent).toBe("The user asked about PSYC605; lookup_module said Dr Ada leads it.");
    // the gauge shows the estimate after compaction until the next request reports
    expect(text($(".agentcell-context"))).toBe("context ~9k / 50k");
    // the next round's text lands in the same round as the marker, after it
    send(ev.thinking("Fresh start.", { round: 2 }));
    const round2 = $('.agentcell-round[data-round="2"]');
    expect([...round2.querySelectorAll(".agentcell-item")].map((e) => e.classList[1])).toEqual(["agentcell-compaction", "agentcell-thinking"]);
  });

  it("a summary stays text, and the reader's open summary survives later events", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.compactionStarted(), ev.compactionFinished("<img src=x onerror=alert(1)>"));
    const d = $(".agentcell-compaction-summary");
    expect(d.querySelector("img")).toBeNull();
    expect(d.textContent).toContain("<img src=x onerror=alert(1)>");
    d.open = true;
    send(ev.request(1, { purpose: "compaction" }), ev.token("x"));
    expect($(".agentcell-compaction-summary").open).toBe(true);
  });

  it("compaction_finished without its start still shows the marker; run-level compaction goes to the run items", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.compactionFinished("s", { slot: null }));
    expect(text($(".agentcell-run-items .agentcell-compaction-text"))).toBe("history compacted: 41k → 9k tokens");
  });
});

describe("request_completed (teaching view only)", () => {
  it("shows one row per request in its round, only in the teaching view", () => {
    const { send, teach, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.token("Hi"), ev.request(1, { latency_ms: 340 }));
    const row = $(".agentcell-request");
    expect(text(row)).toBe("request 1 · 340 ms · 120 in / 45 out · cost —");
    expect(row.dataset.request).toBe("1");
    expect(row.dataset.purpose).toBe("answer");
    expect(row.getAttribute("title")).toBe("model: gpt-4o-mini");
    // normal view: the row and a round holding nothing else are hidden
    expect(visible(row)).toBe(false);
    expect($('.agentcell-round[data-round="1"]').classList.contains("agentcell-teach-only")).toBe(true);
    teach();
    expect(visible($(".agentcell-request"))).toBe(true);
    send(ev.toolStarted({ round: 2 }), ev.request(2, { usage: { requests: 1, input_tokens: 1500, output_tokens: 45 }, latency_ms: 1234 }));
    const rows = $$(".agentcell-request");
    expect(rows.map((r) => r.closest(".agentcell-round").dataset.round)).toEqual(["1", "2"]);
    expect(text(rows[1])).toBe("request 2 · 1.23 s · 1.5k in / 45 out · cost —");
    // a round with a tool card is visible in the normal view too
    expect($('.agentcell-round[data-round="2"]').classList.contains("agentcell-teach-only")).toBe(false);
  });

  it("labels compaction requests and cut-off requests", () => {
    const { send, teach, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.toolStarted(), ev.toolCompleted(), ev.compactionStarted());
    send(ev.request(1, { purpose: "compaction", latency_ms: 800, usage: { input_tokens: 30000, output_tokens: 200, cost: 0.004 } }), ev.compactionFinished());
    send(ev.request(2, { ended: "stopped", usage: { input_tokens: 0, output_tokens: 0 } }));
    teach();
    const rows = $$(".agentcell-request");
    expect(text(rows[0])).toBe("compaction request 1 · 800 ms · 30k in / 200 out · cost $0.004");
    expect(rows[0].dataset.purpose).toBe("compaction");
    // with the compaction marker it paid for, in the round about to go out
    expect(rows[0].closest(".agentcell-round").dataset.round).toBe("2");
    expect(rows[0].previousElementSibling.classList.contains("agentcell-compaction")).toBe(true);
    expect(text(rows[1])).toBe("request 2 · 340 ms · 0 in / 0 out · cost — · cut off (stopped)");
    expect(rows[1].dataset.ended).toBe("stopped");
  });
});

describe("retrying", () => {
  it("shows 'retrying in 2.0 s after 429', run-level too", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.retrying({ slot: null, delay_s: 2, reason: "429", attempt: 2 }));
    expect(text($(".agentcell-run-items .agentcell-retry"))).toBe("retrying in 2.0 s after 429 (attempt 2)");
  });
});

describe("teaching payloads (run_started.tool_schemas, model_request, model_response)", () => {
  const schemas = [
    { name: "lookup_module", description: "Look a module up by code.", parameters_json_schema: { type: "object", properties: { module_code: { type: "string" } }, required: ["module_code"] } },
    { name: "send_email", description: "", parameters_json_schema: { type: "object", properties: {} } },
  ];

  it("shows each tool with its description and JSON schema", () => {
    const { send, teach, $, $$ } = mount();
    send(ev.runStarted({ tools: ["lookup_module", "send_email"], tool_schemas: schemas }));
    teach();
    expect(text($(".agentcell-teach-tools > .agentcell-label"))).toBe("2 tools offered to the model:");
    const decls = $$(".agentcell-tool-decl");
    expect(decls.map((d) => d.dataset.tool)).toEqual(["lookup_module", "send_email"]);
    // Each tool reads as the Python function the learner wrote: signature + docstring.
    expect(decls[0].querySelector(".ac-signature").textContent).toBe('def lookup_module(module_code: str):\n    """Look a module up by code."""\n    ...');
    expect(decls[1].querySelector(".ac-signature").textContent).toBe("def send_email():\n    ...");
    // The JSON schema is one toggle away (closed until opened).
    const json = decls[0].querySelector("details.agentcell-tool-schema pre.agentcell-tool-schema-json");
    expect(decls[0].querySelector("details.agentcell-tool-schema").open).toBe(false);
    expect(JSON.parse(json.textContent)).toEqual(schemas[0].parameters_json_schema);
    expect(JSON.parse(decls[1].querySelector(".agentcell-tool-schema-json").textContent)).toEqual({ type: "object", properties: {} });
    // an opened schema stays open across later renders
    decls[0].querySelector("details").open = true;
    send(ev.slotStarted(), ev.token("x"));
    expect($('.agentcell-tool-decl[data-tool="lookup_module"] details').open).toBe(true);
  });

  it("one tool: singular; an unexpected schema shape is shown as JSON", () => {
    const { send, teach, $ } = mount();
    send(ev.runStarted({ tools: ["a"], tool_schemas: { a: { type: "object" } } }));
    teach();
    expect(text($(".agentcell-teach-tools > .agentcell-label"))).toBe("1 tool offered to the model:");
    expect(JSON.parse($(".agentcell-tool-schemas").textContent)).toEqual({ a: { type: "object" } });
  });

  it("shows the request and the response of each round, summarized", () => {
    const { send, teach, $, $$ } = mount();
    send(ev.runStarted({ tool_schemas: schemas }), ev.slotStarted());
    send(ev.modelRequest(1, [{ role: "system", content: "Be brief." }, { role: "user", content: "Who leads PSYC605?" }]));
    send(ev.modelResponse(1, [{ part_kind: "tool-call", tool_name: "lookup_module", args: { module_code: "PSYC605" }, tool_call_id: "c1" }]));
    send(ev.toolStarted(), ev.toolCompleted());
    send(ev.modelRequest(2, [{ role: "tool", tool_call_id: "c1", content: "Research Methods, led by Dr Ada" }], { offset: 3 }));
    send(ev.modelResponse(2, [{ part_kind: "text", content: "Dr Ada." }], { usage: { input_tokens: 1500, output_tokens: 8 } }));
    send(ev.token("Dr Ada.", { round: 2 }));
    const p = $$(".agentcell-payload");
    expect(p.map((e) => [e.dataset.kind, e.closest(".agentcell-round").dataset.round])).toEqual([
      ["model_request", "1"],
      ["model_response", "1"],
      ["model_request", "2"],
      ["model_response", "2"],
    ]);
    expect(p.map((e) => text(e.querySelector("summary")))).toEqual([
      "model request · round 1 · 2 messages · 1 tool offered",
      "model response · round 1 · 1 part · 120 in / 45 out · gpt-4o-mini",
      "model request · round 2 · 1 message (after 3 earlier messages) · 1 tool offered",
      "model response · round 2 · 1 part · 1.5k in / 8 out · gpt-4o-mini",
    ]);
    // Hidden in the normal view, and their JSON is not written until the teaching view shows it.
    expect(p.every((e) => !visible(e))).toBe(true);
    expect(p.map((e) => e.querySelector("pre"))).toEqual([null, null, null, null]);
    teach();
    const shown = $$(".agentcell-payload");
    expect(shown.every((e) => visible(e))).toBe(true);
    const req1 = JSON.parse(shown[0].querySelector("pre").textContent);
    expect(req1.messages[1]).toEqual({ role: "user", content: "Who leads PSYC605?" });
    expect(JSON.parse(shown[1].querySelector("pre").textContent).parts[0].tool_name).toBe("lookup_module");
    // A payload opened by the reader stays open, with its JSON, when the run ends.
    shown[3].open = true;
    send(ev.done("completed"));
    const after = $$(".agentcell-payload");
    expect(after[3].open).toBe(true);
    expect(JSON.parse(after[3].querySelector("pre").textContent).parts[0].content).toBe("Dr Ada.");
  });

  it("the run's end builds again only the items that show it (a pending approval, a tool card's re-run), not every item", () => {
    const { send, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted());
    send(ev.modelResponse(1, [{ part_kind: "text", content: "x".repeat(50_000) }]));
    send(ev.toolStarted(), ev.toolCompleted(), ev.approvalRequested({ tool_name: "send_email", args: {} }));
    const [payload, tool, approval] = [$(".agentcell-payload"), $(".agentcell-tool"), $(".agentcell-approval")];
    expect(approval.querySelector("button")).not.toBeNull();
    send(ev.done("stopped"));
    expect($(".agentcell-payload")).toBe(payload);
    // a tool card shows the end too: an ended run's tool result can be edited and re-run from there
    expect(tool.querySelector(".agentcell-fork-edit")).toBeNull();
    expect($(".agentcell-tool")).not.toBe(tool);
    expect($(".agentcell-tool .agentcell-fork-edit")).not.toBeNull();
    // the approval is rebuilt: an ended run's approval has no buttons left
    expect($(".agentcell-approval")).not.toBe(approval);
    expect($$(".agentcell-approval button")).toEqual([]);
  });
});

describe("resume (run_resumed after a second run_started of the same run)", () => {
  function check($, $$, { ended }) {
    const root = $(".agentcell");
    expect(root.dataset.segment).toBe("2");
    // the kept slot keeps its answer
    const intro = $('.agentcell-slot[data-slot="intro"]');
    expect(intro.dataset.slotStatus).toBe("completed");
    expect(intro.dataset.kept).toBe("true");
    expect(text(intro.querySelector(".agentcell-slot-status"))).toBe("done (kept from an earlier segment)");
    expect(text(intro.querySelector(".agentcell-answer"))).toBe("Hello from intro.");
    // the restarting slot keeps its finished tool round, drops the stopped partial text, goes on
    const answer = $('.agentcell-slot[data-slot="answer"]');
    expect(answer.dataset.kept).toBeUndefined();
    expect(answer.querySelectorAll(".agentcell-tool")).toHaveLength(1);
    expect(text(answer.querySelector(".agentcell-narration-text"))).toBe("Let me check.");
    expect(answer.querySelector(".agentcell-answer").dataset.stopped).toBeUndefined();
    expect(answer.querySelector(".agentcell-slot-error").hidden).toBe(true);
    expect(text(answer.querySelector(".agentcell-answer"))).toBe("Dr Ada leads PSYC605.");
    const marker = answer.querySelector(".agentcell-resumed");
    expect(text(marker)).toBe("resumed (segment 2)");
    expect(marker.dataset.segment).toBe("2");
    const runMarker = $(".agentcell-run-items .agentcell-resumed");
    expect(text(runMarker.querySelector(".agentcell-resumed-text"))).toBe("resumed (segment 2)");
    expect(text(runMarker.querySelector(".agentcell-resumed-detail"))).toBe("kept: intro · restarting: answer");
    // the new segment's round 1 is shown after the kept rounds
    expect($$('.agentcell-slot[data-slot="answer"] .agentcell-round').map((r) => r.dataset.round)).toEqual(["1", "2"]);
    expect(answer.dataset.slotStatus).toBe(ended ? "completed" : "running");
    expect(root.dataset.status).toBe(ended ? "completed" : "running");
  }

  it("live: the view does not reset; status goes back to running; Stop works again", () => {
    const { model, send, $, $$ } = mount();
    const { segment1, segment2, end } = resumedRun();
    send(segment1);
    model.set("status", "stopped");
    expect($(".agentcell").dataset.status).toBe("stopped");
    expect($('.agentcell-slot[data-slot="answer"] .agentcell-answer').dataset.stopped).toBe("true");
    expect($(".agentcell-stop").disabled).toBe(true);
    model.set("status", "running"); // widget.py sets it on RunStarted
    send(segment2);
    check($, $$, { ended: false });
    expect(text($(".agentcell-status"))).toBe("running");
    expect($(".agentcell-stop").disabled).toBe(false);
    send(end);
    model.set("status", "completed");
    check($, $$, { ended: true });
    expect(text($(".agentcell-status"))).toBe("done");
  });

  it("snapshot replay of both segments gives the same DOM as the live view", () => {
    const { segment1, segment2, end } = resumedRun();
    const live = mount({ status: "completed" });
    live.send(segment1);
    live.send(segment2);
    live.send(end);
    const late = mount({ status: "completed" });
    late.model.emit({ kind: "snapshot", events: [...segment1, ...segment2, ...end] });
    late.view.flush();
    check(late.$, late.$$, { ended: true });
    // (isEqualNode: the same elements, attributes and text; attribute order may differ after toggles)
    expect(late.el.firstChild.isEqualNode(live.el.firstChild)).toBe(true);
    // and a final trait holding both segments (no kernel) renders the same
    const fromFinal = mount({ status: "completed", final: [...segment1, ...segment2, ...end] });
    expect(fromFinal.el.firstChild.isEqualNode(live.el.firstChild)).toBe(true);
  });

  it("reducer: kept slots keep their values, the restarting slot's rounds are offset, a fresh view of segment 2 alone marks kept slots", () => {
    const { segment1, segment2, end } = resumedRun();
    const s = replay([...segment1, ...segment2]);
    expect(s.ended).toBe(false);
    expect(s.status).toBe("running");
    expect(s.segment).toBe(2);
    expect(slotAnswer(s.slots.get("intro"))).toBe("Hello from intro.");
    const a = s.slots.get("answer");
    expect(a.roundBase).toBe(2);
    expect([...a.streamed.keys()]).toEqual([3]);
    replay(end, s);
    expect(s.status).toBe("completed");
    expect(s.answer).toBe("Dr Ada leads PSYC605.");
    // a view that only ever saw segment 2
    const only2 = replay(segment2);
    expect(only2.slots.get("intro").kept).toBe(true);
    expect(only2.slots.get("intro").status).toBe("completed");
    expect(only2.slots.get("answer").status).toBe("running");
  });

  it("a different run id still starts over", () => {
    const { send, $$ } = mount();
    const { segment1 } = resumedRun();
    send(segment1);
    send(ev.runStarted({ run_id: "run-2", slots: [{ name: "other", type: "text" }] }));
    expect($$(".agentcell-slot").map((e) => e.dataset.slot)).toEqual(["other"]);
    expect($$(".agentcell-resumed")).toHaveLength(0);
  });
});

describe("counts are pluralized", () => {
  it("plural / formatTokens", () => {
    expect([plural(0, "tool"), plural(1, "tool"), plural(2, "tool"), plural(1200, "char")]).toEqual(["0 tools", "1 tool", "2 tools", "1,200 chars"]);
    expect([950, 9000, 12300, 41000, 128000, 131072, 1_250_000].map(formatTokens)).toEqual(["950", "9k", "12.3k", "41k", "128k", "131k", "1.3M"]);
  });

  it("slot usage, thinking and tool counts read '1 request · 1 tool call', '(1 char)'", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.thinking("?"), ev.usage({ requests: 1, tool_calls: 1 }));
    expect(text($(".agentcell-slot-usage"))).toBe("1 request · 1 tool call · cost —");
    expect(text($(".agentcell-thinking summary"))).toBe("thinking (1 char)");
    send(ev.usage({ requests: 3, tool_calls: 2 }));
    expect(text($(".agentcell-slot-usage"))).toBe("3 requests · 2 tool calls · cost —");
  });
});

describe("malformed new kinds", () => {
  it("never take the view down", () => {
    const { send, $ } = mount();
    const junk = [
      { kind: "context_updated", run_id: "run-1", slot: "answer", used_tokens: "many", window: null },
      { kind: "compaction_started", run_id: "run-1", slot: "answer" },
      { kind: "compaction_finished", run_id: "run-1", slot: "answer", summary: { not: "text" } },
      { kind: "request_completed", run_id: "run-1", slot: "answer", request: "x", usage: null },
      { kind: "run_resumed", run_id: "run-1", kept: "nope", restarting: 7 },
      { kind: "model_request", run_id: "run-1", slot: "answer", round: -1, messages: "nope" },
      { kind: "model_response", run_id: "run-1", slot: "answer", parts: null },
    ];
    expect(() => send(ev.runStarted({ tool_schemas: [null, 3] }), ev.slotStarted(), junk, ev.token("still here"))).not.toThrow();
    expect(text($('[data-slot="answer"] .agentcell-answer'))).toBe("still here");
    expect($(".agentcell-context").hidden).toBe(true); // no window: no gauge
    expect(text($('[data-slot="answer"] .agentcell-compaction-text'))).toBe("history compacted: 0 → 0 tokens");
    expect($('[data-slot="answer"] .agentcell-compaction-summary-text').textContent).toBe('{"not":"text"}');
  });
});
