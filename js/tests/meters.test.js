// The header meters count right: the running slot's own ceiling, the request in flight, tokens that
// move while text streams (estimated until the provider reports), and labelled scopes.
import { describe, expect, it } from "vitest";
import { ev } from "./helpers/fixtures.js";
import { viewMounter } from "./helpers/mount.js";

const mountView = viewMounter();
const text = (el) => (el ? el.textContent : null);

describe("header meters", () => {
  it("show the running slot's effective limit (max_iter=3 in the slot shows /3, not /20)", () => {
    const { send, $ } = mountView();
    send(ev.runStarted(), ev.slotStarted("answer", { limits: { requests: 3, tool_calls: 20, output_tokens: 250000 } }));
    expect($(".agentcell-meter-requests").dataset.limit).toBe("3");
    expect(text($(".agentcell-meter-scope"))).toBe("slot answer:");
  });

  it("count the request in flight while it streams, then the provider's count", () => {
    const { send, $ } = mountView();
    send(ev.runStarted(), ev.slotStarted(), ev.modelRequest(1, [{ role: "user", content: "Hi" }]), ev.token("Hel"));
    expect($(".agentcell-meter-requests").dataset.used).toBe("1");
    send(ev.usage({ requests: 1, output_tokens: 5 }), ev.modelRequest(2, [], { offset: 2 }));
    expect($(".agentcell-meter-requests").dataset.used).toBe("2");
  });

  it("move the output tokens while text streams, marked as an estimate until usage arrives", () => {
    const { send, $ } = mountView();
    send(ev.runStarted(), ev.slotStarted(), ev.usage({ requests: 1, input_tokens: 100, output_tokens: 10 }));
    expect(text($(".agentcell-tokens"))).toBe("tokens 100 in / 10 out");
    send(ev.token("x".repeat(40)));
    expect(text($(".agentcell-tokens"))).toBe("tokens 100 in / ~20 out");
    expect($(".agentcell-tokens").dataset.estimated).toBe("true");
    send(ev.usage({ requests: 1, input_tokens: 100, output_tokens: 19 }));
    expect(text($(".agentcell-tokens"))).toBe("tokens 100 in / 19 out");
    expect($(".agentcell-tokens").dataset.estimated).toBeUndefined();
  });

  it("label the slot scope and the run scope", () => {
    const { send, $$ } = mountView();
    send(ev.runStarted(), ev.slotStarted());
    expect($$(".agentcell-meter-scope").map(text)).toEqual(["slot answer:", "run:"]);
  });
});

describe("a run of several slots", () => {
  it("shows every slot that ran: the running one with bars, the others beside it", () => {
    const { send, $, $$ } = mountView();
    send(ev.runStarted({ slots: [{ name: "intro", type: "text" }, { name: "answer", type: "text" }] }));
    send(ev.slotStarted("intro"), ev.usage({ requests: 1, tool_calls: 0 }, { slot: "intro" }));
    expect($(".agentcell-slot-meters").hidden).toBe(true); // one slot so far: its bars say it all
    send(ev.slotStarted("answer", { index: 1 }), ev.usage({ requests: 3, tool_calls: 2 }, { slot: "answer" }));
    expect(text($(".agentcell-meter-scope"))).toBe("slot answer:");
    expect($(".agentcell-slot-meters").hidden).toBe(false);
    expect($$(".agentcell-slot-meter").map((m) => m.dataset.slot)).toEqual(["intro"]);
    expect(text($(".agentcell-slot-meter"))).toBe("slot intro: requests 1/20 · tool calls 0/20");
  });
});
