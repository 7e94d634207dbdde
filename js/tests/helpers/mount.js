// Mounting the full widget view in a test: the set-up every view test needs, in one place.
import { afterEach } from "vitest";
import { createView } from "../../src/view.js";
import { FakeModel } from "./fake-model.js";

/**
 * A `mount(traits)` for one test file. It registers the clean-up itself (call it at the file's top level): every
 * view it mounted is destroyed and removed after each test, so no test sees another's DOM.
 * `send(...events)` delivers events as the kernel does and flushes the view's render queue.
 */
export function viewMounter() {
  let mounted = [];
  afterEach(() => {
    for (const { view, el } of mounted) view.destroy(), el.remove();
    mounted = [];
  });
  return function mount(traits = { status: "running" }) {
    const model = new FakeModel(traits);
    const el = document.createElement("div");
    document.body.append(el);
    const view = createView(model, el, { requestAnimationFrame: null, now: () => 0 });
    mounted.push({ view, el });
    const send = (...events) => {
      model.emit({ kind: "events", events: events.flat() });
      view.flush();
    };
    return { model, el, view, send, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
  };
}

/** An element's text with its whitespace runs collapsed: what a reader hears, near enough. */
export const text = (el) => el.textContent.replace(/\s+/g, " ").trim();
