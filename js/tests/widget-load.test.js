// The entry's lazy loading (widget.js): the heavy modules are evaluated one per task, once.
import { describe, expect, it } from "vitest";
import widget, { inTasks, loadView, MODULE_STEPS } from "../src/widget.js";
import { FakeModel } from "./helpers/fake-model.js";

describe("inTasks", () => {
  it("runs each step after its own yield, in order, and resolves to the last value", async () => {
    const log = [];
    const yieldTask = async () => log.push("yield");
    const value = await inTasks([async () => log.push("a") && "A", () => log.push("b") && "B"], yieldTask);
    expect(log).toEqual(["yield", "a", "yield", "b"]);
    expect(value).toBe("B");
  });

  it("does not start a step before the previous one resolved", async () => {
    let release;
    const gate = new Promise((r) => (release = r));
    const started = [];
    const done = inTasks([() => (started.push(1), gate), () => started.push(2)], async () => {});
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual([1]);
    release();
    await done;
    expect(started).toEqual([1, 2]);
  });
});

describe("loadView", () => {
  it("evaluates marked, DOMPurify and markdown.js in tasks of their own, markdown.js last", async () => {
    expect(MODULE_STEPS).toHaveLength(3);
    const [marked, purify, md] = await Promise.all(MODULE_STEPS.map((step) => step()));
    expect(typeof marked.Marked).toBe("function");
    expect(typeof purify.default.sanitize).toBe("function");
    expect(Array.isArray(md.warmUpSteps)).toBe(true);
  });

  it("loads the view module once, whatever the number of views", async () => {
    const first = loadView();
    expect(loadView()).toBe(first);
    const mod = await first;
    expect(typeof mod.createView).toBe("function");
  });

  it("render returns a promise of the cleanup, with the view in `el` once resolved", async () => {
    const model = new FakeModel();
    const el = document.createElement("div");
    const pending = widget.render({ model, el });
    expect(pending).toBeInstanceOf(Promise);
    const cleanup = await pending;
    expect(el.querySelector(".agentcell")).not.toBeNull();
    expect(model.sent).toEqual([{ kind: "snapshot_request" }]);
    cleanup();
  });
});

describe("warm-up", () => {
  it("runs marked and the sanitizer on a sample and leaves nothing behind", async () => {
    const md = await import("../src/markdown.js");
    const text = "Refs: [r][r] and [w][w]\n\n[w]: https://w.example\n";
    const before = md.sanitizeHtml(md.markdownToHtml(text));
    expect(md.warmUpSteps.length).toBeGreaterThan(1);
    for (const step of md.warmUpSteps) step();
    // The sample defines [r]; a later render does not see it.
    expect(md.sanitizeHtml(md.markdownToHtml(text))).toBe(before);
    expect(before).not.toContain("example.org/r");
  });
});
