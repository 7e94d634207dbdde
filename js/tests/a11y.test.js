// Accessibility (issue 22): approvals announced and focused, focus kept across Stop / Approve / Deny,
// one announcement per state change, decorative marks out of the text, headings, presentation size.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ev } from "./helpers/fixtures.js";
import { viewMounter, text } from "./helpers/mount.js";

const mount = viewMounter();
afterEach(() => document.activeElement?.blur?.());
const active = () => document.activeElement;

describe("a pending approval", () => {
  it("is named by the status, which goes back to running once answered", () => {
    const { send, view, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    expect(text($(".agentcell-status"))).toBe("waiting for your approval: send_email");
    expect($(".agentcell").dataset.waiting).toBe("approval");
    expect($(".agentcell").dataset.status).toBe("running");
    expect($(".agentcell-goto-approval").hidden).toBe(false);
    $(".agentcell-approve").click();
    view.flush();
    expect(text($(".agentcell-status"))).toBe("running");
    expect($(".agentcell").hasAttribute("data-waiting")).toBe(false);
    expect($(".agentcell-goto-approval").hidden).toBe(true);
  });

  it("takes the focus when the focus is nowhere (or in the widget)", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    expect(active()).toBe($(".agentcell-approval"));
    expect(active().getAttribute("aria-label")).toBe("Approval for send_email");
  });

  it("never takes the focus from an editor elsewhere; the skip link leads to the card", () => {
    const { send, view, $ } = mount();
    const editor = document.createElement("textarea");
    document.body.append(editor);
    editor.focus();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    expect(active()).toBe(editor);
    $(".agentcell-goto-approval").click();
    view.flush();
    expect(active()).toBe($(".agentcell-approval"));
    editor.remove();
  });

  it("puts the reason field before Deny, and keeps what was typed when the card is rebuilt", () => {
    const { send, view, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    const order = $$(".agentcell-approval-actions > *").map((e) => e.className);
    expect(order).toEqual(["agentcell-btn agentcell-approve", "agentcell-reason", "agentcell-btn agentcell-deny"]);
    const reason = $(".agentcell-reason");
    reason.value = "not today";
    reason.dispatchEvent(new Event("input"));
    $(".agentcell-teach").click(); // a new render key: the card is rebuilt
    view.flush();
    expect($(".agentcell-reason")).not.toBe(reason);
    expect($(".agentcell-reason").value).toBe("not today");
  });
});

describe("focus after Approve, Deny and Stop", () => {
  it("Approve: the focus lands on the card's outcome line, and stays there when the answer is resolved", () => {
    const { send, view, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    $(".agentcell-approve").focus();
    $(".agentcell-approve").click();
    view.flush();
    expect(active()).toBe($(".agentcell-approval-outcome"));
    expect(text(active())).toBe("approval sent…");
    send(ev.approvalResolved(true));
    expect(active()).toBe($(".agentcell-approval-outcome"));
    expect(text(active())).toBe("approved");
  });

  it("Deny: the same, with the reason", () => {
    const { send, view, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.approvalRequested());
    $(".agentcell-reason").value = "not today";
    $(".agentcell-deny").click();
    view.flush();
    expect(text(active())).toBe("denial sent…");
    send(ev.approvalResolved(false, "not today"));
    expect(active().className).toBe("agentcell-approval-outcome");
    expect(text(active())).toBe("denied: not today");
  });

  it("a snapshot that rebuilds the view keeps the focus on the same card", () => {
    const { model, send, view, $ } = mount();
    const events = [ev.runStarted(), ev.slotStarted(), ev.approvalRequested()];
    send(...events);
    expect(active()).toBe($(".agentcell-approval"));
    const before = active();
    model.emit({ kind: "snapshot", events });
    view.flush();
    expect(active()).not.toBe(before);
    expect(active()).toBe($(".agentcell-approval"));
  });

  it("Stop keeps the focus: aria-disabled while focused, disabled once the focus leaves", () => {
    const { model, send, view, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.token("Hello"));
    const stop = $(".agentcell-stop");
    stop.focus();
    stop.click();
    view.flush();
    expect(model.sent).toContainEqual({ kind: "stop" });
    send(ev.slotFailed("stopped", "stopped by the user", "Hello"), ev.done("stopped"));
    model.set("status", "stopped");
    view.flush();
    expect(active()).toBe(stop);
    expect(stop.disabled).toBe(false);
    expect(stop.getAttribute("aria-disabled")).toBe("true");
    stop.click(); // inert
    expect(model.sent.filter((m) => m.kind === "stop")).toHaveLength(1);
    stop.blur();
    view.flush();
    expect(stop.disabled).toBe(true);
  });

  it("a stop is announced once: by the status, with no alert", () => {
    const { model, send, view, $, $$ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.token("Hello"), ev.slotFailed("stopped", "stopped by the user", "Hello"), ev.done("stopped"));
    model.set("status", "stopped");
    view.flush();
    expect($$('[role="alert"]')).toEqual([]);
    expect($$('[role="status"], [aria-live]').filter((e) => !e.hidden && text(e))).toEqual([$(".agentcell-status")]);
    expect(text($(".agentcell-status"))).toBe("stopped");
  });
});

describe("structure and decoration", () => {
  it("slots and rounds are headings; the status dot has no text", () => {
    const { send, $ } = mount();
    send(ev.runStarted(), ev.slotStarted(), ev.thinking("hmm"), ev.thinking("and then", { round: 2 }));
    expect($(".agentcell-slot-head").tagName).toBe("H3");
    expect(text($(".agentcell-slot-head"))).toBe("answer text · tools running");
    expect([...document.querySelectorAll(".agentcell-round-label")].map((e) => [e.tagName, text(e)])).toEqual([
      ["H4", "round 1"],
      ["H4", "round 2"],
    ]);
    expect($(".agentcell-status-dot").getAttribute("aria-hidden")).toBe("true");
    expect(text($(".agentcell-status-dot"))).toBe("");
    expect($(".agentcell").textContent).not.toMatch(/[\u25CF\u258D]/);
  });

  it("the stylesheet draws the dot and caret without characters and stops all motion on request", () => {
    const css = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../src/widget.css"), "utf8");
    expect(css).not.toMatch(/content:\s*"\\25CF|content:\s*"\\258D/);
    expect(css).not.toMatch(/--jp-ui-font-color3/);
    expect(css).toMatch(/@media \(prefers-reduced-motion: reduce\) \{\s*\.agentcell \*, \.agentcell \*::before, \.agentcell \*::after \{ animation: none !important;/);
    expect(css).toMatch(/\.agentcell\[data-status="running"\]:not\(\[data-waiting\]\)/);
  });

  it("a block long enough to scroll, and every Markdown code block, can take the keyboard focus", () => {
    const { send, $, $$ } = mount();
    const long = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    send(ev.runStarted(), ev.slotStarted(), ev.toolStarted(), ev.toolCompleted({ result: long }), ev.toolStarted({ call_id: "c2" }), ev.toolCompleted({ call_id: "c2", result: "short" }));
    send(ev.slotCompleted("x", "```\ncode\n```"), ev.done());
    const pres = $$(".agentcell-tool-result .agentcell-pre");
    expect(pres.map((p) => p.getAttribute("tabindex"))).toEqual(["0", null]);
    expect($(".agentcell-markdown pre").getAttribute("tabindex")).toBe("0");
  });

  it("the presentation trait sets data-size on the root", () => {
    const { model, view, $ } = mount({ status: "idle" });
    expect($(".agentcell").hasAttribute("data-size")).toBe(false);
    model.set("presentation", true);
    view.flush();
    expect($(".agentcell").dataset.size).toBe("presentation");
  });
});
