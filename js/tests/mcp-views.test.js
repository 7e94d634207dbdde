// An MCP server's tool in every view of the widget: the approval card names the server (its buttons, focus and
// the one announcement unchanged), the tool card too, and the teaching view lists the server's tools (from
// `tools_listed`) with their Python signature and their server, names the server on each call in the lanes,
// and sends the real schema in the wire view. Events: tests/fixtures/transcripts/mcp-approval.events.json.
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
    expect(text(card.querySelector(".agentcell-approval-head"))).toBe("approval needed: git_commit (MCP server git)");
    expect(card.getAttribute("aria-label")).toBe("Approval for git_commit (MCP server git)");
    expect(document.activeElement).toBe(card);
    expect($$(".agentcell-approval-actions button").map((b) => b.getAttribute("aria-label"))).toEqual(["Approve git_commit", "Deny git_commit"]);
    expect(text($(".agentcell-status"))).toBe("waiting for your approval: git_commit");
    expect($$('[role="status"], [aria-live]').filter((e) => !e.hidden && text(e))).toEqual([$(".agentcell-status")]);
  });

  it("a notebook tool's card names no server", () => {
    const { send, $ } = mount();
    const plain = until("approval_requested").map((e) => (e.kind === "approval_requested" ? { ...e, server: undefined } : e));
    send(plain);
    expect(text($(".agentcell-approval-head"))).toBe("approval needed: git_commit");
    expect($(".agentcell-approval-server")).toBe(null);
    expect($(".agentcell-approval").getAttribute("aria-label")).toBe("Approval for git_commit");
  });

  it("keeps the server once answered, and the tool card names it too", () => {
    const { send, $ } = mount("completed");
    send(EVENTS);
    expect(text($(".agentcell-approval-head"))).toBe("approval needed: git_commit (MCP server git)");
    const tool = $('.agentcell-tool[data-tool="git_commit"] .agentcell-tool-server');
    expect([tool.textContent, tool.title]).toEqual(["git · ", "MCP server git"]);
  });
});

describe("an MCP tool in the teaching view", () => {
  it("tools_listed adds the server's tools to the offered list, with server and schema", () => {
    const state = replay(EVENTS);
    expect(offeredTools(state).map((t) => [t.name, t.server, t.schema?.required])).toEqual([
      ["git_status", "git", ["repo_path"]],
      ["git_commit", "git", ["repo_path", "message"]],
    ]);
    const before = replay(EVENTS.filter((e) => e.kind !== "tools_listed"));
    expect(offeredTools(before)).toEqual([]); // the old view: the server's tools were not offered at all
  });

  it("shows the signature and the server of each offered tool, the server on each call, the schema on the wire", () => {
    const { send, view, $ } = mount("completed");
    send(EVENTS);
    $(".agentcell-teach").click();
    view.flush();
    const decl = $('.agentcell-tool-decl[data-tool="git_commit"]');
    expect(text(decl.querySelector(".agentcell-tool-server"))).toBe("· MCP server git");
    expect(decl.querySelector(".ac-signature").textContent).toBe('def git_commit(repo_path: str, message: str):\n    """Records changes to the repository"""\n    ...');
    const run = $('.ac-run[data-tool="git_commit"]');
    expect(text(run.querySelector(".ac-run-server"))).toBe("MCP server git");
    const wire = $('.ac-seq[data-round="1"] .ac-wire pre');
    const sent = JSON.parse(wire.textContent);
    expect(sent.tools.find((t) => t.function.name === "git_commit").function.parameters.required).toEqual(["repo_path", "message"]);
  });
});
