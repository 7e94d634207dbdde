// Per-item Copy buttons: the answer as Markdown, a tool call's arguments, a tool result, a wire body. Real
// <button>s (Enter and Space click them), one handler, and one announcement per copy in the widget's notice.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createView } from "../src/view.js";
import { FakeModel } from "./helpers/fake-model.js";
import { ev, fullRun } from "./helpers/fixtures.js";

let views = [];
let copied;
beforeEach(() => {
  copied = [];
  Object.defineProperty(navigator, "clipboard", { value: { writeText: vi.fn(async (t) => void copied.push(t)) }, configurable: true });
});
afterEach(() => {
  for (const { view, el } of views) {
    view.destroy();
    el.remove();
  }
  views = [];
});

function mount() {
  const model = new FakeModel();
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null });
  views.push({ view, el });
  model.emit({ kind: "events", events: fullRun() });
  view.flush();
  return { view, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("copy buttons", () => {
  it("copy the answer as Markdown and say so once", async () => {
    const { $ } = mount();
    const btn = $('.agentcell-slot[data-slot="answer"] .agentcell-slot-bar .agentcell-copy-item');
    expect(btn.tagName).toBe("BUTTON");
    expect(btn.hidden).toBe(false);
    expect(btn.getAttribute("aria-label")).toBe("Copy answer of slot answer (Markdown)");
    btn.click();
    await settle();
    expect(copied).toEqual(["**Dr Ada** leads PSYC605.\n\nSee [the page](https://example.org/m)."]);
    const note = $(".agentcell-notice");
    expect(note.getAttribute("role")).toBe("status");
    expect(note.textContent).toBe("copied: answer of slot answer (Markdown)");
  });

  it("copy a tool call's arguments and its result", async () => {
    const { $ } = mount();
    $('.agentcell-tool-args .agentcell-copy-item').click();
    await settle();
    $('.agentcell-tool-result .agentcell-copy-item').click();
    await settle();
    expect(copied).toEqual(['{ "module_code": "PSYC605" }', "Research Methods, led by Dr Ada"]);
    expect($(".agentcell-notice").textContent).toBe("copied: tool result");
  });

  it("falls back to a hidden textarea where the Clipboard API is refused, and says when even that fails", async () => {
    navigator.clipboard.writeText = vi.fn(async () => {
      throw new Error("denied");
    });
    document.execCommand = vi.fn(() => false);
    const { $ } = mount();
    $('.agentcell-tool-result .agentcell-copy-item').click();
    await settle();
    expect(document.execCommand).toHaveBeenCalledWith("copy");
    expect($(".agentcell-notice").textContent).toBe("copy failed: select the tool result and press Ctrl+C");
  });
});
