// Golden transcripts (tests/fixtures/transcripts/README.md): the same wire events give the same
// canonical transcript JSON here as in the Python port (tests/transcript/test_transcript.py).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import literals from "../../src/agentcell/transcript/literals.json";
import { replay, transcriptJSON } from "../src/state.js";

// (node:path, not `new URL(…, import.meta.url)`: jsdom's URL global rejects file: bases)
const dir = join(dirname(fileURLToPath(import.meta.url)), "../../tests/fixtures/transcripts/");
const names = readdirSync(dir)
  .filter((f) => f.endsWith(".events.json"))
  .map((f) => f.slice(0, -".events.json".length))
  .sort();
const read = (file) => JSON.parse(readFileSync(dir + file, "utf8"));

describe("golden transcripts", () => {
  it("the fixture folder has fixtures (no vacuous pass)", () => {
    expect(names.length).toBeGreaterThan(0);
  });

  it.each(names)("%s", (name) => {
    const events = read(`${name}.events.json`);
    expect(Array.isArray(events)).toBe(true);
    // A JSON round trip, as the Python side compares parsed JSON (undefined keys would vanish there).
    const got = JSON.parse(JSON.stringify(transcriptJSON(replay(events))));
    expect(got).toEqual(read(`${name}.transcript.json`));
  });

  it("every item has the keys of its Python TypedDict (literals.json item_keys), in order", () => {
    let seen = 0;
    for (const name of names) {
      const json = transcriptJSON(replay(read(`${name}.events.json`)));
      for (const item of [...json.items, ...json.slots.flatMap((s) => s.rounds.flatMap((r) => r.items))]) {
        expect(literals.item_types, `${name}: ${item.type}`).toContain(item.type);
        expect(Object.keys(item), `${name}: ${item.type}`).toEqual(["type", ...literals.item_keys[item.type]]);
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  it("every key is present and no value is undefined", () => {
    for (const name of names) {
      const json = transcriptJSON(replay(read(`${name}.events.json`)));
      const walk = (x, path) => {
        expect(x, path).not.toBeUndefined();
        if (x && typeof x === "object") for (const [k, v] of Object.entries(x)) walk(v, `${path}.${k}`);
      };
      walk(json, name);
    }
  });
});
