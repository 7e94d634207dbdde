// The live view marks its JupyterLab output (view/host.js), and the CSS that hides the saved twin reads
// that mark instead of `:has()` over the view.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import widget from "../src/widget.js";
import batch from "../src/batch.js";
import { markOutput, VIEW_ATTR } from "../src/view/host.js";
import { FakeModel } from "./helpers/fake-model.js";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "../src");

/** JupyterLab's output element, holding an output's element (`.jp-OutputArea-output`), in the page. */
function outputArea() {
  const child = document.createElement("div");
  child.className = "lm-Widget jp-OutputArea-child";
  const output = document.createElement("div");
  output.className = "jp-OutputArea-output";
  child.append(output);
  document.body.append(child);
  return { child, output };
}

/** A timer that runs only when told to. */
function manualTimer() {
  const queue = [];
  return {
    setTimer: (fn) => (queue.push(fn), queue.length),
    clearTimer: (id) => (queue[id - 1] = null),
    tick: () => queue.splice(0).forEach((fn) => fn?.()),
    get pending() {
      return queue.filter(Boolean).length;
    },
  };
}

describe("markOutput", () => {
  it("marks the output element holding an attached view, and unmarks it on cleanup", () => {
    const { child, output } = outputArea();
    const el = document.createElement("div");
    output.append(el);
    const unmark = markOutput(el);
    expect(child.hasAttribute(VIEW_ATTR)).toBe(true);
    expect(output.hasAttribute(VIEW_ATTR)).toBe(false);
    unmark();
    expect(child.hasAttribute(VIEW_ATTR)).toBe(false);
    child.remove();
  });

  it("waits for a view rendered before it is attached (anywidget renders first, JupyterLab attaches)", () => {
    const { child, output } = outputArea();
    const el = document.createElement("div");
    const timer = manualTimer();
    const unmark = markOutput(el, timer);
    expect(child.hasAttribute(VIEW_ATTR)).toBe(false);
    timer.tick();
    expect(timer.pending).toBe(1); // still not attached: looks again
    output.append(el);
    timer.tick();
    expect(child.hasAttribute(VIEW_ATTR)).toBe(true);
    expect(timer.pending).toBe(0);
    unmark();
    expect(child.hasAttribute(VIEW_ATTR)).toBe(false);
    child.remove();
  });

  it("gives up after maxTries, and a cleanup before attachment stops looking", () => {
    const timer = manualTimer();
    markOutput(document.createElement("div"), { ...timer, maxTries: 3 });
    for (let i = 0; i < 5; i++) timer.tick();
    expect(timer.pending).toBe(0);
    const again = manualTimer();
    const unmark = markOutput(document.createElement("div"), again);
    expect(again.pending).toBe(1);
    unmark();
    expect(again.pending).toBe(0);
  });

  it("marks nothing outside JupyterLab", () => {
    const el = document.createElement("div");
    document.body.append(el);
    markOutput(el)();
    expect(document.querySelector(`[${VIEW_ATTR}]`)).toBeNull();
    el.remove();
  });
});

describe("the widget entries mark their output", () => {
  for (const [name, entry] of [["widget", widget], ["batch", batch]]) {
    it(`${name}: marked while the view lives, unmarked by its cleanup`, async () => {
      const { child, output } = outputArea();
      const el = document.createElement("div");
      output.append(el);
      const cleanup = await entry.render({ model: new FakeModel(), el });
      expect(child.hasAttribute(VIEW_ATTR)).toBe(true);
      cleanup();
      expect(child.hasAttribute(VIEW_ATTR)).toBe(false);
      child.remove();
    });
  }
});

/** Every `:has(...)` argument in a stylesheet's text. */
function hasArguments(css) {
  const out = [];
  for (let i = css.indexOf(":has("); i !== -1; i = css.indexOf(":has(", i + 1)) {
    let depth = 0;
    let j = i + 4;
    for (; j < css.length; j++) {
      if (css[j] === "(") depth++;
      else if (css[j] === ")" && --depth === 0) break;
    }
    out.push(css.slice(i + 5, j).replace(/\s+/g, " ").trim());
  }
  return out;
}

describe("no :has() over a live view", () => {
  const css = (path) => readFileSync(join(SRC, path), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const py = readFileSync(join(SRC, "../../src/agentcell/render/html.py"), "utf8");
  const sheets = {
    "widget.css": css("widget.css"),
    "batch/batch.css": css("batch/batch.css"),
    "static_view.py _CSS": py.slice(py.indexOf('_CSS = """'), py.indexOf('"""', py.indexOf('_CSS = """') + 10)),
  };

  it("finds the arguments it checks (the check can fail)", () => {
    expect(sheets["static_view.py _CSS"]).toContain(".agentcell-static{");
    expect(hasArguments(".a:has(.b) + .c:has(> .d:not(:empty))")).toEqual([".b", "> .d:not(:empty)"]);
  });

  for (const [name, css] of Object.entries(sheets)) {
    it(`${name}: every :has() looks at children or the next sibling's children only`, () => {
      for (const arg of hasArguments(css)) {
        // Relative selectors with only `>` (and a leading `+`) combinators: the browser visits a fixed
        // number of levels, not a subtree that grows with the answer.
        expect(arg, `${name}: :has(${arg})`).toMatch(/^[>+]/);
        expect(arg.replace(/\([^()]*\)/g, "").replace(/\s*[>+]\s*/g, ">"), `${name}: :has(${arg})`).not.toMatch(/\s/);
      }
    });
  }

  it("the twin rules key on the view's mark", () => {
    expect(sheets["widget.css"]).toContain(`.jp-OutputArea-child[${VIEW_ATTR}] + .jp-OutputArea-child:has(`);
    expect(sheets["static_view.py _CSS"]).toContain(`.jp-OutputArea-child:not([${VIEW_ATTR}]):has(`);
  });
});
