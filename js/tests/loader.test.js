// js/src/loader.js: the bundle held as a string is imported in a task of its own, once per build key.
import { afterEach, describe, expect, it } from "vitest";
import { codeURL, entry, importCode } from "../src/loader.js";

const MODULES = globalThis[Symbol.for("agentcell.modules")];
afterEach(() => MODULES.clear());

const dataURL = (code) => `data:text/javascript;charset=utf-8,${encodeURIComponent(code)}`;

describe("importCode", () => {
  it("imports in a later task, not in the caller's", async () => {
    const log = [];
    const pending = importCode("export const v = 1;", "k:later", { toURL: (c) => (log.push("import"), dataURL(c)) });
    log.push("caller done");
    await Promise.resolve();
    expect(log).toEqual(["caller done"]);
    expect((await pending).v).toBe(1);
    expect(log).toEqual(["caller done", "import"]);
  });

  it("imports a build once for all its widgets; another build key imports again", async () => {
    let imports = 0;
    const toURL = (c) => (imports++, dataURL(c));
    const [a, b] = [importCode("export const v = 2;", "k:a", { toURL }), importCode("export const v = 2;", "k:a", { toURL })];
    expect(a).toBe(b);
    expect((await a).v).toBe(2);
    expect((await importCode("export const v = 3;", "k:b", { toURL })).v).toBe(3);
    expect(imports).toBe(2);
  });

  it("forgets a failed import, so the next view tries again", async () => {
    await expect(importCode("export const = ;", "k:bad", { toURL: dataURL })).rejects.toThrow();
    expect(MODULES.has("k:bad")).toBe(false);
    expect((await importCode("export const v = 4;", "k:bad", { toURL: dataURL })).v).toBe(4);
  });
});

describe("codeURL", () => {
  it("is a data: URL where there is no object URL (Node), which imports the code", async () => {
    const url = codeURL("export default 5;");
    expect(url.startsWith(typeof URL.createObjectURL === "function" ? "blob:" : "data:")).toBe(true);
    if (url.startsWith("data:")) expect((await import(/* @vite-ignore */ url)).default).toBe(5);
  });
});

describe("entry", () => {
  it("renders with the bundle's own render, once it is imported", async () => {
    const code = "export default { render({ model, el }) { el.textContent = model.get('status'); return () => 'cleaned'; } };";
    MODULES.set("k:entry", import(/* @vite-ignore */ dataURL(code)));
    const el = document.createElement("div");
    const cleanup = await entry(code, "k:entry").render({ model: { get: () => "running" }, el });
    expect(el.textContent).toBe("running");
    expect(cleanup()).toBe("cleaned");
  });
});
