// marimo's dark theme (a `dark` class on <html> or <body>): the widget marks itself data-host-theme="dark"
// (widget.css then picks accent text colours that keep their contrast) and follows a switch without a reload.
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { FakeModel } from "./helpers/fake-model.js";

let mounted = [];
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
  document.documentElement.classList.remove("dark");
  document.body.classList.remove("dark-theme");
});

function mount() {
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(new FakeModel(), el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  return view.root;
}
const observed = () => new Promise((r) => setTimeout(r, 0)); // MutationObserver callbacks run as microtasks

describe("the host page's theme", () => {
  it("a light page leaves the widget unmarked", () => {
    expect(mount().hasAttribute("data-host-theme")).toBe(false);
  });

  it("marimo's dark class on <html> marks the widget dark, at once and after a switch", async () => {
    document.documentElement.classList.add("dark");
    const root = mount();
    expect(root.dataset.hostTheme).toBe("dark");
    document.documentElement.classList.remove("dark");
    await observed();
    expect(root.hasAttribute("data-host-theme")).toBe(false);
    document.body.classList.add("dark-theme");
    await observed();
    expect(root.dataset.hostTheme).toBe("dark");
  });

  it("stops watching when the view is destroyed", async () => {
    const root = mount();
    mounted[0].view.destroy();
    document.documentElement.classList.add("dark");
    await observed();
    expect(root.hasAttribute("data-host-theme")).toBe(false);
  });
});
