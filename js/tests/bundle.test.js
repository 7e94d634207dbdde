// Smoke test of the built bundle (what anywidget actually loads). Skipped until `npm run build` ran.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { FakeModel } from "./helpers/fake-model.js";

const bundle = resolve(process.cwd(), "src/agentcell/static/widget.js"); // vitest runs from the repo root

describe.skipIf(!existsSync(bundle))("built bundle", () => {
  it("is a self-contained ESM with a default { render } that renders events", async () => {
    const mod = await import(/* @vite-ignore */ pathToFileURL(bundle).href);
    expect(typeof mod.default.render).toBe("function");
    const model = new FakeModel({ status: "running" });
    const el = document.createElement("div");
    const cleanup = await mod.default.render({ model, el });
    expect(model.sent).toEqual([{ kind: "snapshot_request" }]);
    model.emit({
      kind: "snapshot",
      events: [
        { kind: "run_started", run_id: "r", model: "m", offline: true, slots: [{ name: "answer", type: "text" }], limits: { requests: 3, tool_calls: 3, output_tokens: 9 }, tools: [], t: 0 },
        { kind: "token_delta", run_id: "r", slot: "answer", text: "hi <img src=x onerror=alert(1)>", round: 1, t: 0.1 },
      ],
    });
    await new Promise((r) => setTimeout(r, 300));
    const answer = el.querySelector('.agentcell-answer[data-slot="answer"]');
    expect(answer.textContent).toContain("hi");
    expect(answer.innerHTML).not.toMatch(/onerror/i);
    el.querySelector(".agentcell-stop").click();
    expect(model.sent).toContainEqual({ kind: "stop" });
    cleanup();
  });
});
