import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { appendCoalesced, createState, displayStatus, KNOWN_KINDS, PAYLOAD_KINDS, reduce, replay, slotAnswer, takeAppended, transcriptJSON } from "../src/state.js";
import { formatArgs, formatCost, formatCount, formatElapsed, formatJSON, formatMs, formatResult, isLong, retryText } from "../src/format.js";
import { ev, fullRun } from "./helpers/fixtures.js";

describe("reducer", () => {
  it("knows every kind in events.py", () => {
    expect([...KNOWN_KINDS].sort()).toEqual(
      ["approval_requested", "approval_resolved", "checkpoint_reached", "compaction_finished", "compaction_started", "context_updated", "guard_tripped", "media_added", "processing_complete", "request_completed", "retrying", "run_resumed", "run_started", "run_warning", "slot_completed", "slot_failed", "slot_retracted", "slot_started", "thinking_delta", "token_delta", "tool_completed", "tool_started", "tools_listed", "usage_updated"].sort(),
    );
    // …and every kind the Python side declares is either handled or shown as a teaching payload.
    const events = join(dirname(fileURLToPath(import.meta.url)), "../../src/agentcell/events");
    const py = ["run.py", "compaction.py"].map((f) => readFileSync(join(events, f), "utf8")).join("\n");
    const declared = [...py.matchAll(/kind: Literal\["([a-z_]+)"\]/g)].map((m) => m[1]);
    expect(declared.length).toBeGreaterThan(20);
    expect(declared.filter((k) => !KNOWN_KINDS.includes(k) && !PAYLOAD_KINDS.has(k))).toEqual([]);
  });

  it("an odd final status ends the run and its slots failed (as the Python reducer does)", () => {
    for (const status of [[], {}, "nonsense", null, 3]) {
      const s = replay([
        { kind: "run_started", run_id: "r", slots: [{ name: "a" }, { name: "b" }] },
        { kind: "slot_failed", run_id: "r", slot: "a", status, error: "x" },
        { kind: "slot_started", run_id: "r", slot: "b" },
        { kind: "processing_complete", run_id: "r", status },
      ]);
      expect([s.ended, s.status, s.slots.get("a").status, s.slots.get("b").status], JSON.stringify(status)).toEqual([true, "failed", "failed", "failed"]);
    }
  });

  it("replays a full run", () => {
    const s = replay(fullRun());
    expect(s.ended).toBe(true);
    expect(s.status).toBe("completed");
    expect(s.model).toBe("openai:gpt-4o-mini");
    const slot = s.slots.get("answer");
    expect(slot.status).toBe("completed");
    expect(slotAnswer(slot)).toBe("**Dr Ada** leads PSYC605.\n\nSee [the page](https://example.org/m).");
    expect([...slot.rounds.keys()]).toEqual([1, 2]);
    expect(slot.rounds.get(1).items.map((i) => i.type)).toEqual(["thinking", "narration", "tool"]);
    expect(s.usage).toEqual({ requests: 2, tool_calls: 1, input_tokens: 1200, output_tokens: 340, cost: 0.0012, estimated: false });
    expect(s.endT).toBe(3.25);
  });

  it("coalesced and uncoalesced event streams give the same state", () => {
    const run = fullRun();
    const coalesced = [];
    for (const e of run) appendCoalesced(coalesced, e);
    expect(coalesced.length).toBeLessThan(run.length);
    const a = replay(run);
    const b = replay(coalesced);
    expect(slotAnswer(a.slots.get("answer"))).toBe(slotAnswer(b.slots.get("answer")));
    expect(transcriptJSON(a)).toEqual(transcriptJSON(b));
  });

  it("retraction drops only that round's streamed text", () => {
    const s = replay([ev.runStarted(), ev.token("r1 "), ev.token("r2", { round: 2 }), ev.retracted("gathering", "", { round: 1 })]);
    expect(slotAnswer(s.slots.get("answer"))).toBe("r2");
    expect(s.slots.get("answer").rounds.get(1).items[0]).toMatchObject({ type: "narration", text: "r1 ", reason: "gathering" });
  });

  it("a new run id starts over; stray events of other runs are ignored", () => {
    const s = replay([ev.runStarted(), ev.token("old"), ev.runStarted({ run_id: "run-2" }), ev.token("stray")]);
    expect(s.runId).toBe("run-2");
    expect(slotAnswer(s.slots.get("answer"))).toBe("");
  });

  it("run-less events (run_id '' from widget.fail) still show", () => {
    const s = replay([ev.runStarted(), { kind: "run_warning", run_id: "", slot: null, message: "boom", t: 0 }]);
    expect(s.run.items).toEqual([expect.objectContaining({ type: "warning", message: "boom" })]);
  });

  it("tool_completed without tool_started still makes a card; duplicates are not doubled", () => {
    const s = replay([ev.runStarted(), ev.toolCompleted(), ev.toolStarted(), ev.approvalRequested(), ev.approvalRequested()]);
    const items = s.slots.get("answer").rounds.get(1).items;
    expect(items.filter((i) => i.type === "tool")).toHaveLength(1);
    expect(items.filter((i) => i.type === "approval")).toHaveLength(1);
  });

  it("ignores junk and unknown kinds", () => {
    const s = createState();
    for (const junk of [null, undefined, 3, "x", [], {}, { kind: 5 }, { kind: "nope" }, { kind: "constructor" }, { kind: "__proto__" }, { kind: "toString" }]) reduce(s, junk);
    expect(s.unknownCount).toBe(4);
    expect(s.started).toBe(false);
  });

  it("displayStatus: terminal trait or terminal event wins, else running once started", () => {
    const s = createState();
    expect(displayStatus("idle", s)).toBe("idle");
    expect(displayStatus("running", s)).toBe("running");
    reduce(s, ev.runStarted());
    expect(displayStatus("idle", s)).toBe("running");
    expect(displayStatus("stopped", s)).toBe("stopped");
    reduce(s, ev.done("halted"));
    expect(displayStatus("running", s)).toBe("halted");
  });

  it("takes a text answer from slot_completed.value when wire.py omitted the duplicate text", () => {
    const s = replay([ev.runStarted(), ev.slotStarted(), ev.token("Hel"), { ...ev.slotCompleted("Hello, world", undefined), text: undefined }]);
    expect(slotAnswer(s.slots.get("answer"))).toBe("Hello, world");
  });

  it("keeps unknown processing_complete fields (a future exact transcript) for export", () => {
    const s = replay([ev.runStarted(), ev.done("completed", { messages: [{ role: "user", content: "q" }] })]);
    expect(s.extra.messages).toEqual([{ role: "user", content: "q" }]);
  });
});

describe("format", () => {
  it("elapsed", () => {
    expect(formatElapsed(0)).toBe("0.0 s");
    expect(formatElapsed(3.25)).toBe("3.3 s");
    expect(formatElapsed(65)).toBe("1 m 05 s");
    expect(formatElapsed(3725)).toBe("1 h 02 m");
    expect(formatElapsed(NaN)).toBe("0.0 s");
  });
  it("counts, cost, ms", () => {
    expect(formatCount(999)).toBe("999");
    expect(formatCount(1234)).toBe("1.2k");
    expect(formatCount(2_500_000)).toBe("2.5M");
    expect(formatCost(null)).toBe("—");
    expect(formatCost(0.00123)).toBe("$0.0012");
    expect(formatCost(1.5)).toBe("$1.50");
    expect(formatMs(12.4)).toBe("12 ms");
    expect(formatMs(2500)).toBe("2.50 s");
  });
  it("JSON never throws", () => {
    const cyc = {};
    cyc.self = cyc;
    expect(formatJSON(cyc)).toBe("[object Object]");
    expect(formatJSON({ a: 1n })).toBe('{\n  "a": "1"\n}');
    expect(formatResult('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(formatResult("{not json}")).toBe("{not json}");
  });
  it("args: one line when short, pretty when long", () => {
    expect(formatArgs({ a: 1, b: [1, 2], c: "x[ \n  y" })).toBe('{ "a": 1, "b": [ 1, 2 ], "c": "x[ \\n  y" }');
    expect(formatArgs({ text: "line\nbreak" })).toBe('{ "text": "line\\nbreak" }');
    const long = { query: "x".repeat(80) };
    expect(formatArgs(long)).toBe(JSON.stringify(long, null, 2));
    expect(formatArgs({})).toBe("{}");
  });
  it("isLong and retryText", () => {
    expect(isLong("a".repeat(601))).toBe(true);
    expect(isLong("a\n".repeat(12))).toBe(true);
    expect(isLong("short")).toBe(false);
    expect(retryText({ delay: 2, reason: "429", attempt: 0 })).toBe("retrying in 2.0 s after 429");
  });
});

describe("what a view takes of a streaming answer", () => {
  it("the deltas appended at the end, once; a retraction or an earlier round changes the epoch instead", () => {
    const s = replay([ev.runStarted(), ev.slotStarted(), ev.token("Hello"), ev.token(", world")]);
    const slot = s.slots.get("answer");
    const epoch = slot.answerEpoch;
    expect(takeAppended(slot)).toBe("Hello, world");
    expect(takeAppended(slot)).toBe("");
    reduce(s, ev.token("!"));
    expect(takeAppended(slot)).toBe("!");
    expect(slot.answerEpoch).toBe(epoch);
    reduce(s, ev.token(" Next round.", { round: 2 }));
    expect(takeAppended(slot)).toBe(" Next round.");
    reduce(s, ev.token(" late", { round: 1 })); // lands before round 2's text: not an append
    expect(slot.answerEpoch).toBe(epoch + 1);
    expect(takeAppended(slot)).toBe("");
    reduce(s, ev.retracted("tool_call", "", { round: 2 }));
    expect(slot.answerEpoch).toBe(epoch + 2);
    expect(slotAnswer(slot)).toBe("Hello, world! late");
  });
});
