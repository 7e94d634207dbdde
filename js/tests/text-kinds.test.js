// Every free-text kind (think, poem, extract, speak, text) is shown as Markdown, a list of text as its JSON
// value: the live widget and its teaching view over the golden run tests/fixtures/transcripts/text-kinds
// and its hand-checked text-kinds.shown.json (the Python views: tests/render/test_text_kinds_views.py). Which types
// are free text comes from src/agentcell/slot_kinds.json, written from the slot kinds.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import slotKinds from "../../src/agentcell/slot_kinds.json";
import { isTextType, replay } from "../src/state.js";
import { lessonSlot } from "../src/teach/lesson.js";
import { FakeModel } from "./helpers/fake-model.js";
import { createView } from "../src/view.js";

const DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "fixtures", "transcripts");
const read = (file) => JSON.parse(readFileSync(join(DIR, file), "utf8"));
const EVENTS = read("text-kinds.events.json");
const SHOWN = read("text-kinds.shown.json").slots;
const NAMES = Object.keys(SHOWN);

let mounted = [];
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
});

function show(events) {
  const model = new FakeModel({ status: "completed" });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  model.emit({ kind: "events", events });
  view.flush();
  return el;
}

describe("free-text kinds", () => {
  it("are the kinds slot_kinds.json says stream text, their aliases and no type at all", () => {
    const streaming = Object.entries(slotKinds.kinds).filter(([, k]) => k.streams_text).map(([name]) => name);
    expect(streaming).toEqual(["text", "extract", "think", "speak", "poem"]);
    for (const name of slotKinds.shown_as_text) expect(isTextType(name), name).toBe(true);
    for (const name of ["think*", "poem{2}", "int", "json", "halt", "Person", "@fetch", "str"]) expect(isTextType(name), name).toBe(false);
  });

  it.each(NAMES)("the live widget shows %s as the golden says", (name) => {
    const el = show(EVENTS);
    const answer = el.querySelector(`.agentcell-answer[data-slot="${name}"]`);
    const md = answer.querySelector(".agentcell-markdown");
    const value = answer.querySelector(".agentcell-value");
    const how = SHOWN[name];
    if (how.as === "markdown") {
      expect(md.hidden).toBe(false);
      expect(value.hidden).toBe(true);
      for (const tag of how.elements) expect(md.querySelector(tag), tag).not.toBeNull();
      expect(md.textContent).not.toContain("**");
    } else {
      expect(md.hidden).toBe(true);
      expect(value.hidden).toBe(false);
      expect(JSON.parse(value.textContent)).toEqual(how.value);
    }
  });

  it.each(NAMES)("shows %s the same way from the slot's final text alone (no streamed tokens)", (name) => {
    // A run whose answer was not streamed here (a kept slot of a resumed run, a replay without deltas):
    // the type alone decides, as in the saved view.
    const el = show(EVENTS.filter((ev) => ev.kind !== "token_delta"));
    const md = el.querySelector(`.agentcell-answer[data-slot="${name}"] .agentcell-markdown`);
    expect(md.hidden).toBe(SHOWN[name].as !== "markdown");
    if (SHOWN[name].as === "markdown") for (const tag of SHOWN[name].elements) expect(md.querySelector(tag), tag).not.toBeNull();
  });

  it.each(NAMES)("the teaching view gives %s's answer as written", (name) => {
    const state = replay(EVENTS);
    const lesson = lessonSlot(state, state.slots.get(name));
    const how = SHOWN[name];
    expect(lesson.rounds.at(-1).model.answer).toBe(how.as === "markdown" ? how.text : JSON.stringify(how.value));
  });
});
