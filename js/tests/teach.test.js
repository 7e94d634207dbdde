// The teaching view over real runs (tests/fixtures/teaching/*.events.json, written by real engine runs,
// the "lesson" one through the real OpenAI client to the scripted HTTP server): lanes, every marker
// kind, the Python signatures, concurrency bars and the wire in its three formats.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { replay } from "../src/state.js";
import { lessonSlot } from "../src/teach/lesson.js";
import { pythonSource, pyType, signature } from "../src/teach/signature.js";
import { FakeModel } from "./helpers/fake-model.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "fixtures", "teaching");
const events = (name) => JSON.parse(readFileSync(join(FIXTURES, `${name}.events.json`), "utf8"));

let mounted = [];
function show(name) {
  const model = new FakeModel({ status: "completed" });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  model.emit({ kind: "events", events: events(name) });
  el.querySelector(".agentcell-teach").click();
  view.flush();
  return { el, view, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
});
const text = (el) => el.textContent.replace(/\s+/g, " ").trim();
const markers = (el) => [...el.querySelectorAll(".ac-marker")].map((m) => m.dataset.marker);

describe("the lesson run (three rounds on the wire)", () => {
  it("draws three lanes and one sequence per round", () => {
    const { $, $$ } = show("lesson");
    expect($$(".ac-lesson-slot .ac-lane-head").map(text)).toEqual(["your code & tools", "agentcell", "model"]);
    expect($$(".ac-seq").map((s) => s.dataset.round)).toEqual(["1", "2", "3"]);
    expect(text($('.ac-seq[data-round="1"] .ac-round-title'))).toMatch(/^round 1 · 3 tools offered · 120 in \/ 30 out tokens/);
    // Round 2's request: the earlier user message folded, the assistant's calls and both results new.
    const req = $('.ac-seq[data-round="2"] .ac-request');
    expect(text(req.querySelector(".ac-earlier > summary"))).toBe("1 earlier message");
    expect([...req.querySelectorAll(':scope > .ac-bubble[data-new="true"] .ac-role')].map(text)).toEqual([
      "assistant · tool calls", "tool result · call_1", "tool result · call_2",
    ]);
  });

  it("shows the two tools of round 1 running together, and round 2's error as the model reads it", () => {
    const { $, $$ } = show("lesson");
    const bars = $$('.ac-seq[data-round="1"] .ac-timebar');
    expect(bars.length).toBe(2);
    expect(bars.every((b) => b.dataset.concurrent === "true")).toBe(true);
    const [a, b] = bars.map((x) => [Number(x.dataset.from), Number(x.dataset.to)]);
    expect(a[0] < b[1] && b[0] < a[1]).toBe(true); // the intervals overlap
    expect(text($('.ac-seq[data-round="1"] .ac-concurrent'))).toBe("2 tools ran at the same time (overlapping bars)");
    const err = $('.ac-seq[data-round="2"] .ac-run[data-status="error"]');
    expect(text(err.querySelector(".ac-caption"))).toBe("error fed back — the model reads:");
    expect(text(err.querySelector(".ac-result-box"))).toContain("timetable service is down");
  });

  it("names the retraction and the 429 retry", () => {
    const { $ } = show("lesson");
    expect(markers($('.ac-seq[data-round="1"]'))).toEqual(["retraction"]);
    expect(text($('.ac-seq[data-round="1"] .ac-marker .ac-received'))).toBe("Let me look both up.");
    expect(markers($('.ac-seq[data-round="2"]'))).toEqual(["retry"]);
    expect(text($('.ac-seq[data-round="2"] .ac-marker[data-marker="retry"] .ac-received'))).toMatch(/^retrying in 0\.\d s after 429 \(attempt 1\)$/);
  });

  it("shows the offered tools as Python signatures, the schema one toggle away", () => {
    const { $ } = show("lesson");
    const sig = $('.agentcell-tool-decl[data-tool="room_of"] .ac-signature');
    expect(sig.textContent).toBe('def room_of(module_code: str, term: str = \'autumn\'):\n    """Where a module is taught in a term."""\n    ...');
    expect($('.agentcell-tool-decl[data-tool="room_of"] details.agentcell-tool-schema').open).toBe(false);
  });

  it("switches the wire between OpenAI, pydantic-ai and the HTTP body as sent, with no key in it", () => {
    const { el, $, view } = show("lesson");
    const wire = () => $('.ac-seq[data-round="2"] .ac-wire');
    expect(wire().dataset.format).toBe("openai");
    const openai = JSON.parse(wire().querySelector(".ac-wire-json").textContent);
    expect(openai.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"]);
    expect(openai.tools.map((t) => t.function.name)).toEqual(["lookup_module", "room_of", "timetable"]);
    $('.ac-format-btn[data-format="pydantic_ai"]').click();
    view.flush();
    expect(wire().dataset.format).toBe("pydantic_ai");
    expect(JSON.parse(wire().querySelector(".ac-wire-json").textContent).new_messages[0].kind).toBe("response");
    $('.ac-format-btn[data-format="http"]').click();
    view.flush();
    expect($('.ac-format-btn[data-format="http"]').getAttribute("aria-pressed")).toBe("true");
    const sent = JSON.parse(wire().querySelector(".ac-wire-json").textContent);
    expect(sent.map((x) => x.method)).toEqual(["POST", "POST"]); // the 429 and the retry
    expect(sent[1].body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_2" });
    expect(sent[1].headers.authorization).toBe("[redacted]");
    expect(el.textContent).not.toContain("SECRET");
    expect(text(wire().querySelector("summary"))).toBe("the wire · round 2 · HTTP (as sent) · 2 exchanges");
  });
});

describe("every marker kind, in the run that produces it", () => {
  it.each([
    ["loop", ["nudge", "final_round"]],
    ["final-round", ["final_round"]],
    ["budget", ["budget"]],
    ["guard-joined", ["guard_joined"]],
    ["guard-tripped", ["guard_tripped"]],
    ["approval", ["approval_denied"]],
  ])("%s", (name, kinds) => {
    const { el } = show(name);
    for (const kind of kinds) expect(markers(el)).toContain(kind);
  });

  it("the nudge shows the text the model received, and the loop's final round says why", () => {
    const { $ } = show("loop");
    expect(text($('.ac-marker[data-marker="nudge"] .ac-received'))).toMatch(/^\[agentcell\] You made exactly the same calls/);
    expect(text($('.ac-marker[data-marker="final_round"] .ac-marker-reason'))).toBe("Why now: the model repeated the same calls twice in a row.");
    const why = $('.ac-marker[data-marker="nudge"] details.ac-why');
    expect(why.open).toBe(false);
    expect(text(why.querySelector("summary"))).toBe("why?");
  });

  it("max_iter's final round names the limit; a denial shows what the model read", () => {
    expect(text(show("final-round").$('.ac-marker[data-marker="final_round"] .ac-marker-reason'))).toBe(
      "Why now: this is the slot's last permitted request (max_iter=2).",
    );
    expect(text(show("approval").$('.ac-marker[data-marker="approval_denied"] .ac-received'))).toContain("not during the workshop");
  });
});

describe("pure helpers", () => {
  it("reads JSON schemas back as Python types", () => {
    expect(pyType({ type: "array", items: { type: "integer" } })).toBe("list[int]");
    expect(pyType({ anyOf: [{ type: "string" }, { type: "null" }] })).toBe("str | None");
    expect(pyType({ enum: ["a", "b"] })).toBe("Literal['a', 'b']");
    expect(pyType({ type: "object", additionalProperties: { type: "number" } })).toBe("dict[str, float]");
    expect(signature("f", { properties: { a: { type: "string" }, b: { type: "integer", default: 2 } }, required: ["a"] })).toBe("def f(a: str, b: int = 2)");
    expect(pythonSource("g", "", { properties: {} })).toBe("def g():\n    ...");
  });

  it("the lesson of a live run in progress has no markers it cannot know yet", () => {
    const all = events("final-round");
    const cut = all.findIndex((e) => e.kind === "tool_started");
    const state = replay(all.slice(0, cut));
    const lesson = lessonSlot(state, state.slots.get("answer"));
    expect(lesson.rounds.map((r) => r.markers.length)).toEqual([0]);
  });
});
