// src/agentcell/labels.json: the words both the widget and the Python static view show.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { fill, label, labels, retractLabel, statusLabel } from "../src/format.js";
import literals from "../../src/agentcell/transcript/literals.json";
import { TERMINAL } from "../src/state.js";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "../src");

function sources(dir = SRC) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );
}

describe("labels.json", () => {
  it("has a word for every run and slot status", () => {
    const all = [...TERMINAL, ...literals.slot_statuses, ...literals.run_statuses, "skipped"];
    for (const s of all) expect(typeof labels.status[s], s).toBe("string");
    expect([...TERMINAL]).toEqual(literals.final_statuses);
    expect(statusLabel("completed")).toBe("done");
    expect(statusLabel("budget_exhausted")).toBe("out of budget");
    expect(statusLabel("idle")).toBe("waiting");
    expect(statusLabel("pending")).toBe("waiting");
    expect(statusLabel("something_new")).toBe("something_new");
  });

  it("has the retraction labels, with a template for an unknown reason", () => {
    expect(Object.keys(labels.retract).sort()).toEqual(["errored", "gathering", "halted", "other", "stopped"]);
    expect(retractLabel("gathering")).toBe("narration — the model went on to call tools");
    expect(retractLabel("weird")).toBe("retracted (weird)");
    expect(retractLabel("other")).toBe("retracted (other)");
  });

  it("fills {name} templates and leaves unknown names alone", () => {
    expect(fill("round {round}", { round: 2 })).toBe("round 2");
    expect(fill("{a} {b}", { a: 1 })).toBe("1 {b}");
    expect(label("partial_answer", { status: "stopped" })).toBe("partial answer — stopped");
  });

  it("every label(\"key\") the widget uses exists", () => {
    const used = new Set();
    for (const file of sources()) for (const m of readFileSync(file, "utf8").matchAll(/\blabel\("([a-z_]+)"/g)) used.add(m[1]);
    expect(used.size).toBeGreaterThan(20);
    expect([...used].filter((k) => !Object.hasOwn(labels.label, k))).toEqual([]);
  });

  it("keeps a simple shape: three groups of strings", () => {
    expect(Object.keys(labels).sort()).toEqual(["label", "retract", "status"]);
    for (const group of Object.values(labels)) for (const v of Object.values(group)) expect(typeof v).toBe("string");
  });
});
