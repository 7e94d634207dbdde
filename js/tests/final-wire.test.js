// The `final` trait as Python sends it (src/agentcell/frontends/widget/shared_texts.py): a long text that occurs more
// than once travels once, in a table that is the list's first element. Views read it as the plain log.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { unpackTexts } from "../src/view/store.js";
import { FakeModel } from "./helpers/fake-model.js";
import { ev } from "./helpers/fixtures.js";

const ANSWER = Array.from({ length: 250 }, (_, i) => `word${i}`).join(" ") + "\n\n**the end**";
const exact = {
  openai: [{ role: "user", content: "Write it." }, { role: "assistant", content: ANSWER }],
  pydantic_ai: [{ kind: "response", parts: [{ part_kind: "text", content: ANSWER }] }],
};
const REF = { agentcell_text: 0 };

function plainRun() {
  return [
    ev.runStarted(),
    ev.slotStarted(),
    ev.token(ANSWER),
    ev.slotCompleted(ANSWER, ANSWER),
    ev.done("completed", { answer: ANSWER, transcript: exact }),
  ];
}

/** What `shared_texts.pack` makes of `plainRun()`: the answer once, five references, events 3, 4 and 5. */
function packedRun() {
  const refExact = {
    openai: [{ role: "user", content: "Write it." }, { role: "assistant", content: REF }],
    pydantic_ai: [{ kind: "response", parts: [{ part_kind: "text", content: REF }] }],
  };
  return [
    { kind: "shared_texts", texts: [ANSWER], events: [3, 4, 5] },
    ev.runStarted(),
    ev.slotStarted(),
    ev.token(REF),
    ev.slotCompleted(REF, REF),
    ev.done("completed", { answer: REF, transcript: refExact }),
  ];
}

// A view renders an answer that arrives whole in idle callbacks (the first one too: its cost is not
// known yet): they queue here, and `settle()` runs them.
let idle = [];
beforeEach(() => {
  idle = [];
  globalThis.requestIdleCallback = (fn) => idle.push(fn);
});
function settle() {
  while (idle.length) idle.shift()();
}

let mounted = [];
function mount(traits) {
  const model = new FakeModel(traits);
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null, now: () => 0 });
  mounted.push({ view, el });
  return { model, el, view, $: (s) => el.querySelector(s) };
}
afterEach(() => {
  delete globalThis.requestIdleCallback;
  for (const { view, el } of mounted) {
    view.destroy();
    el.remove();
  }
  mounted = [];
});

async function copied(view$, fmt) {
  let text = null;
  Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (t) => void (text = t) } });
  view$(".agentcell-export-format").value = fmt;
  view$(".agentcell-copy").click();
  await new Promise((r) => setTimeout(r, 0));
  return JSON.parse(text);
}

describe("the packed final trait", () => {
  it("unpacks to the plain log, without changing the trait's value", () => {
    const packed = packedRun();
    const before = JSON.stringify(packed);
    expect(unpackTexts(packed)).toEqual(plainRun());
    expect(JSON.stringify(packed)).toBe(before);
  });

  it("a list without the table is the plain log itself", () => {
    const plain = plainRun();
    expect(unpackTexts(plain)).toBe(plain);
  });

  it("resolves only the event asked for (a view that saw the end needs just processing_complete)", () => {
    const packed = packedRun();
    const events = unpackTexts(packed, 4);
    expect(events[4].answer).toBe(ANSWER);
    expect(events[4].transcript.openai[1].content).toBe(ANSWER);
    expect(events[2]).toBe(packed[3]); // the streamed text's event is not walked
    expect(events[2].text).toEqual(REF);
  });

  it("a view with no kernel renders the packed trait as it renders the plain one, and exports the exact transcript", async () => {
    const a = mount({ status: "completed", final: plainRun() });
    const b = mount({ status: "completed", final: packedRun() });
    settle();
    const slots = (x) => x.$(".agentcell-slots").innerHTML;
    expect(b.$('.agentcell-answer[data-slot="answer"]').textContent).toContain("word249");
    expect(slots(b)).toBe(slots(a));
    expect(await copied(b.$, "pydantic_ai")).toEqual(exact.pydantic_ai);
    expect(await copied(b.$, "openai")).toEqual(exact.openai);
  });

  it("a live view that saw the end picks the exact transcript up from the packed trait", async () => {
    const { model, view, $ } = mount({ status: "running" });
    const live = plainRun();
    live[live.length - 1] = ev.done("completed", { answer: ANSWER }); // the live batch has no transcript
    model.emit({ kind: "events", events: live });
    view.flush();
    settle();
    const html = $(".agentcell-slots").innerHTML;
    model.set("status", "completed");
    model.set("final", packedRun());
    view.flush();
    expect($(".agentcell-slots").innerHTML).toBe(html);
    expect(await copied($, "openai")).toEqual(exact.openai);
  });

  it("a packed live batch (the run's last) and a packed snapshot render as the plain ones", () => {
    const packed = packedRun();
    const plain = plainRun();
    const slots = (x) => x.$(".agentcell-slots").innerHTML;
    const views = [];
    for (const [kind, events] of [["events", plain], ["events", packed], ["snapshot", packed]]) {
      const v = mount({ status: "running" });
      v.model.emit({ kind, events });
      v.view.flush();
      views.push(v);
    }
    settle();
    expect(views[0].$('.agentcell-answer[data-slot="answer"]').textContent).toContain("word249");
    expect(slots(views[1])).toBe(slots(views[0]));
    expect(slots(views[2])).toBe(slots(views[0]));
    expect(views[1].view.state.answer).toBe(ANSWER);
  });
});
