// A fork in the widget: the fork point in the timeline and the teaching lesson (the golden `fork` run), and
// "edit and re-run from here" on a finished run's tool result: keyboard focus, the message sent, one notice.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { replay } from "../src/state.js";
import { lessonSlot } from "../src/teach/lesson.js";
import { FakeModel } from "./helpers/fake-model.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "../../tests/fixtures/transcripts/");
const read = (name) => JSON.parse(readFileSync(join(dir, `${name}.events.json`), "utf8"));

let mounted = [];
function show(name) {
  const model = new FakeModel({ status: "completed" });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  model.emit({ kind: "events", events: read(name) });
  view.flush();
  return { model, view, el, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
});

describe("a fork's view", () => {
  it("says where it was forked from, and marks the fork point in the round it kept last", () => {
    const { $, $$ } = show("fork");
    expect($(".agentcell-run-items .agentcell-forked").textContent).toBe("forked from original at round 1 (edited: lookup (k1))");
    const points = $$('.agentcell-round[data-round="1"] .agentcell-forked');
    expect(points.length).toBe(1);
    expect($('.agentcell-tool[data-call-id="k1"] .agentcell-tool-result').textContent).toContain("EDITED");
  });

  it("the teaching lesson marks the fork point as Python's twin does", () => {
    const state = replay(read("fork"));
    const lesson = lessonSlot(state, state.slots.get("b"));
    const kinds = lesson.rounds.map((r) => r.markers.map((m) => m.kind));
    expect(kinds).toEqual([["fork_point"], []]);
    expect(lesson.rounds[0].markers[0].text).toBe("forked from original at round 1 (edited: lookup (k1))");
  });
});

describe("edit and re-run from here", () => {
  it("opens an editor with the focus in it, sends the new value, keeps the focus and says so once", () => {
    const { model, view, $, $$ } = show("tool-rounds");
    const edit = $('.agentcell-tool[data-call-id="k1"] .agentcell-fork-edit');
    expect(edit.getAttribute("aria-label")).toBe("Edit the result of lookup (k1) and re-run from here");
    edit.click();
    view.flush();
    const box = $(".agentcell-fork-value");
    expect(document.activeElement).toBe(box);
    expect(box.value).toBe("found x");
    expect($(`label[for="${box.id}"]`).textContent).toBe("New result of lookup (k1)");
    box.value = "found nothing";
    box.dispatchEvent(new Event("input"));
    $(".agentcell-fork-go").click();
    view.flush();
    expect(model.sent.at(-1)).toEqual({ kind: "fork", call_id: "k1", value: "found nothing" });
    expect($(".agentcell-fork-value")).toBeNull();
    expect(document.activeElement).toBe($('.agentcell-tool[data-call-id="k1"] .agentcell-fork-edit'));
    expect($$('[role="status"]:not([hidden])').map((n) => n.textContent).filter((t) => t.includes("re-running"))).toHaveLength(1);
  });

  it("Cancel closes the editor and gives the focus back to its button", () => {
    const { model, view, $ } = show("tool-rounds");
    $('.agentcell-tool[data-call-id="k2"] .agentcell-fork-edit').click();
    view.flush();
    $(".agentcell-fork-cancel").click();
    view.flush();
    expect($(".agentcell-fork-value")).toBeNull();
    expect(document.activeElement).toBe($('.agentcell-tool[data-call-id="k2"] .agentcell-fork-edit'));
    expect(model.sent.filter((m) => m.kind === "fork")).toEqual([]);
  });

  it("is not offered while the run is going", () => {
    const events = read("tool-rounds").filter((e) => e.kind !== "processing_complete");
    const model = new FakeModel({ status: "running" });
    const el = document.createElement("div");
    document.body.append(el);
    const view = createView(model, el, { requestAnimationFrame: null });
    mounted.push({ view, el });
    model.emit({ kind: "events", events });
    view.flush();
    expect(el.querySelector(".agentcell-fork-edit")).toBeNull();
  });
});

describe("edit the message and re-run", () => {
  it("offers each finished slot's user message, prefilled, and sends the slot with the new message", () => {
    const { model, view, $ } = show("tool-rounds");
    const edit = $('.agentcell-slot[data-slot="answer"] .agentcell-slot-fork .agentcell-fork-edit');
    expect(edit.getAttribute("aria-label")).toBe("Edit the message of answer and re-run from here");
    edit.click();
    view.flush();
    const box = $(".agentcell-slot-fork .agentcell-fork-value");
    expect(document.activeElement).toBe(box);
    expect(box.value).toBe("Find x.");
    box.value = "Find y.";
    box.dispatchEvent(new Event("input"));
    $(".agentcell-slot-fork .agentcell-fork-go").click();
    view.flush();
    expect(model.sent.at(-1)).toEqual({ kind: "fork", slot: "answer", value: "Find y." });
    expect(document.activeElement).toBe($('.agentcell-slot-fork .agentcell-fork-edit'));
  });
});
