// A cost reads as what it is ($0.0000045, not $0.0000); unknown is "—", never $0.00. The cases are shared
// with the Python side (tests/fixtures/cost-format.json), so the widget and the saved view agree.
import { describe, expect, it } from "vitest";
import table from "../../tests/fixtures/cost-format.json";
import { costExact, formatCost } from "../src/format.js";

const value = (raw) => (raw === "NaN" ? Number.NaN : raw);

describe("formatCost", () => {
  for (const c of table.cases) {
    it(`${c.cost} → ${c.text}`, () => {
      expect(formatCost(value(c.cost))).toBe(c.text);
      expect(costExact(value(c.cost))).toBe(c.exact);
    });
  }
});
