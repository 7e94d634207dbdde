// A fork's "Compare with the original" (view/compare.js): offered once the fork ended, asks the kernel once,
// shows the kernel's table inside the view (sanitized), keeps the focus on its button, says the summary once.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { FakeModel } from "./helpers/fake-model.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "../../tests/fixtures/transcripts/");
const read = (name) => JSON.parse(readFileSync(join(dir, `${name}.events.json`), "utf8"));

const TABLE =
  "<div class='agentcell-diff'><p>first differ in [[b]] round 1, tool result: a <code>lookup: found x</code>, " +
  "b <code>lookup: EDITED</code></p><table><thead><tr><th scope='col'>run</th><th scope='col'>a</th>" +
  "<th scope='col'>b</th></tr></thead><tbody><tr class='agentcell-diff-differs' style='background:#fff3cd'>" +
  "<th scope='row'>[[b]] <strong>(differs)</strong></th><td>x</td><td>y</td></tr></tbody></table></div>";
const DONE = { original: "original", html: TABLE, text: "first differ in [[b]] round 1, tool result",
  summary: "compared with the original: first difference in b, round 1, tool result" };

let mounted = [];
function show(traits, events = read("fork")) {
  const model = new FakeModel({ status: "completed", comparison: {}, ...traits });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null });
  mounted.push({ view, el });
  model.emit({ kind: "events", events });
  view.flush();
  const $ = (s) => el.querySelector(s);
  const said = () => [...el.querySelectorAll('[role="status"]:not([hidden])')].map((n) => n.textContent)
    .filter((t) => t.startsWith("compared with the original"));
  return { model, view, el, $, said };
}
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
});

describe("compare with the original", () => {
  it("is not offered for a run that is no fork shown live, nor while the fork runs", () => {
    expect(show({}).$(".agentcell-compare").hidden).toBe(true);
    const all = read("fork");
    const end = all.filter((e) => e.kind === "processing_complete");
    const running = show({ status: "running", comparison: { original: "original" } }, all.filter((e) => !end.includes(e)));
    expect(running.$(".agentcell-compare").hidden).toBe(true);
    running.model.emit({ kind: "events", events: end });
    running.model.set("status", "completed");
    running.view.flush();
    expect(running.$(".agentcell-compare").hidden).toBe(false);
  });

  it("asks the kernel once, shows its table inside the view with the focus kept, and says so once", () => {
    const { model, view, $, said } = show({ comparison: { original: "original" } });
    const btn = $(".agentcell-compare-btn");
    expect($(".agentcell-compare").hidden).toBe(false);
    expect(btn.textContent).toBe("Compare with the original");
    expect(btn.getAttribute("aria-expanded")).toBe("false");
    const panel = document.getElementById(btn.getAttribute("aria-controls"));
    expect(panel.hidden).toBe(true);
    btn.focus();
    btn.click();
    view.flush();
    expect(model.sent.filter((m) => m.kind === "compare")).toEqual([{ kind: "compare" }]);
    expect(btn.getAttribute("aria-busy")).toBe("true");
    expect(said()).toEqual([]);
    model.set("comparison", DONE); // the kernel's answer: diff()'s own table
    view.flush();
    expect(panel.hidden).toBe(false);
    expect(panel.getAttribute("role")).toBe("region");
    expect(panel.querySelector(".agentcell-diff p").textContent).toContain("first differ in [[b]] round 1, tool result");
    expect(panel.querySelector("tr.agentcell-diff-differs th").textContent).toBe("[[b]] (differs)");
    expect(panel.querySelector("tr.agentcell-diff-differs").hasAttribute("style")).toBe(false); // theme colours
    expect(btn.getAttribute("aria-expanded")).toBe("true");
    expect(btn.hasAttribute("aria-busy")).toBe(false);
    expect(btn.textContent).toBe("Hide the comparison");
    expect(document.activeElement).toBe(btn);
    expect(said()).toEqual([DONE.summary]);
  });

  it("hides and shows again without asking the kernel again", () => {
    const { model, view, $, said } = show({ comparison: DONE });
    const btn = $(".agentcell-compare-btn");
    btn.focus();
    btn.click();
    view.flush();
    const panel = $(".agentcell-compare-panel");
    expect(panel.hidden).toBe(false);
    btn.click();
    view.flush();
    expect(panel.hidden).toBe(true);
    expect(btn.getAttribute("aria-expanded")).toBe("false");
    expect(btn.textContent).toBe("Compare with the original");
    expect(model.sent.filter((m) => m.kind === "compare")).toEqual([]);
    expect(document.activeElement).toBe(btn);
    expect(said()).toEqual([DONE.summary]);
  });

  it("shows the kernel's table sanitized: no script, no handler attribute", () => {
    const hostile = { ...DONE, html: `${TABLE}<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>` };
    const { view, $ } = show({ comparison: hostile });
    $(".agentcell-compare-btn").click();
    view.flush();
    const panel = $(".agentcell-compare-panel");
    expect(panel.querySelector("script")).toBeNull();
    expect(panel.innerHTML).not.toContain("onerror");
    expect(globalThis.pwned).toBeUndefined();
  });

  it("stops listening when the view is destroyed", () => {
    const { model, view } = show({ comparison: { original: "original" } });
    view.destroy();
    expect(model.listenerCount()).toBe(0);
  });
});
