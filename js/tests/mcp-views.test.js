// An MCP server's tool in every view of the widget: the approval card names the server (its buttons, focus and
// the one announcement unchanged), the tool card too, and the teaching view lists the server's tools (from
// `tools_listed`) with their Python signature and their server, names the server on each call in the lanes,
// and sends the real schema in the wire view. Events: tests/fixtures/transcripts/mcp-approval.events.json (a real
// run of tests/mcpservers/fault_server.py, named `notes`).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { replay } from "../src/state.js";
import { offeredTools } from "../src/teach/lesson.js";
import { FakeModel } from "./helpers/fake-model.js";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "fixtures", "transcripts", "mcp-approval.events.json");
const EVENTS = JSON.parse(readFileSync(FIXTURE, "utf8"));
const until = (kind) => EVENTS.slice(0, EVENTS.findIndex((e) => e.kind === kind) + 1);

let mounted = [];
function mount(status = "running") {
  const model = new FakeModel({ status });
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { requestAnimationFrame: null, now: () => 0 });
  mounted.push({ view, el });
  const send = (events) => {
    model.emit({ kind: "events", events });
    view.flush();
  };
  return { model, el, view, send, $: (s) => el.querySelector(s), $$: (s) => [...el.querySelectorAll(s)] };
}
afterEach(() => {
  for (const { view, el } of mounted) view.destroy(), el.remove();
  mounted = [];
  document.activeElement?.blur?.();
});
const text = (el) => el.textContent.replace(/\s+/g, " ").trim();

describe("an MCP tool's approval card", () => {
  it("names the server; the buttons, the status and the focus are as for any tool", () => {
    const { send, $, $$ } = mount();
    send(until("approval_requested"));
    const card = $('.agentcell-approval[data-approval="pending"]');
    expect(text(card.querySelector(".agentcell-approval-head"))).toBe("approval needed: write_note (MCP server notes)");
    expect(card.getAttribute("aria-label")).toBe("Approval for write_note (MCP server notes)");
    expect(document.activeElement).toBe(card);
    expect($$(".agentcell-approval-actions button").map((b) => b.getAttribute("aria-label"))).toEqual(["Approve write_note", "Deny write_note"]);
    expect(text($(".agentcell-status"))).toBe("waiting for your approval: write_note");
    expect($$('[role="status"], [aria-live]').filter((e) => !e.hidden && text(e))).toEqual([$(".agentcell-status")]);
  });

  it("a notebook tool's card names no server", () => {
    const { send, $ } = mount();
    const plain = until("approval_requested").map((e) => (e.kind === "approval_requested" ? { ...e, server: undefined } : e));
    send(plain);
    expect(text($(".agentcell-approval-head"))).toBe("approval needed: write_note");
    expect($(".agentcell-approval-server")).toBe(null);
    expect($(".agentcell-approval").getAttribute("aria-label")).toBe("Approval for write_note");
  });

  it("keeps the server once answered, and the tool card names it too", () => {
    const { send, $ } = mount("completed");
    send(EVENTS);
    expect(text($(".agentcell-approval-head"))).toBe("approval needed: write_note (MCP server notes)");
    const tool = $('.agentcell-tool[data-tool="write_note"] .agentcell-tool-server');
    expect([tool.textContent, tool.title]).toEqual(["notes · ", "MCP server notes"]);
  });
});

describe("an MCP tool in the teaching view", () => {
  it("tools_listed adds the server's tools to the offered list, with server and schema", () => {
    const state = replay(EVENTS);
    const offered = offeredTools(state);
    expect(offered.map((t) => t.name)).toEqual(["echo", "write_note", "crash", "boom", "big", "slow", "picture"]);
    expect(offered.every((t) => t.server === "notes" && t.schema?.required?.[0] === "text")).toBe(true);
    const before = replay(EVENTS.filter((e) => e.kind !== "tools_listed"));
    expect(offeredTools(before)).toEqual([]); // the old view: the server's tools were not offered at all
  });

  it("shows the signature and the server of each offered tool, the server on each call, the schema on the wire", () => {
    const { send, view, $ } = mount("completed");
    send(EVENTS);
    $(".agentcell-teach").click();
    view.flush();
    const decl = $('.agentcell-tool-decl[data-tool="write_note"]');
    expect(text(decl.querySelector(".agentcell-tool-server"))).toBe("· MCP server notes");
    expect(decl.querySelector(".ac-signature").textContent).toBe('def write_note(text: str):\n    """(MCP server notes) Write a note (no hints: a write)."""\n    ...');
    const run = $('.ac-run[data-tool="write_note"]');
    expect(text(run.querySelector(".ac-run-server"))).toBe("MCP server notes");
    const wire = $('.ac-seq[data-round="1"] .ac-wire pre');
    const sent = JSON.parse(wire.textContent);
    expect(sent.tools.find((t) => t.function.name === "write_note").function.parameters.required).toEqual(["text"]);
  });
});
