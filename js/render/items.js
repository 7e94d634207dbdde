// One timeline item (thinking, narration, tool card, approval, retry, guard, warning, checkpoint,
// teaching payload) -> a fresh element. All untrusted text goes in as text nodes.
import { h } from "./dom.js";
import { formatArgs, formatJSON, formatMs, formatResult, isLong, retryText, retractLabel } from "../format.js";

function collapsible(part, cls, label, text, { open = false } = {}) {
  return h(
    "details",
    { class: ["agentcell-collapse", cls], data: { part }, open },
    h("summary", { class: "agentcell-collapse-summary" }, label),
    h("pre", { class: "agentcell-pre" }, text),
  );
}

function textBlock(part, cls, label, text) {
  if (isLong(text)) return collapsible(part, cls, `${label} (${text.length.toLocaleString("en")} chars)`, text);
  return h("div", { class: ["agentcell-block", cls], data: { part } }, h("span", { class: "agentcell-label" }, label), h("pre", { class: "agentcell-pre" }, text));
}

function argsBlock(args) {
  if (args === null || args === undefined) return null;
  const isEmpty = typeof args === "object" && Object.keys(args).length === 0;
  if (isEmpty) return h("div", { class: "agentcell-tool-args agentcell-muted" }, "no arguments");
  return textBlock("args", "agentcell-tool-args", "arguments", formatArgs(args));
}

const RENDER = {
  thinking(item) {
    const n = item.text.length;
    return h(
      "details",
      { class: "agentcell-item agentcell-thinking", data: { part: "thinking", round: item.round } },
      h("summary", { class: "agentcell-collapse-summary" }, `thinking (${n.toLocaleString("en")} chars)`),
      h("div", { class: "agentcell-thinking-text" }, item.text),
    );
  },

  narration(item) {
    const label = retractLabel(item.reason);
    return h(
      "div",
      { class: "agentcell-item agentcell-narration", data: { reason: item.reason, round: item.round } },
      h("div", { class: "agentcell-narration-reason" }, label),
      h("div", { class: "agentcell-narration-text" }, item.text),
    );
  },

  tool(item, ctx) {
    const status = item.status ?? "running";
    const badges = [];
    if (item.cached) badges.push(h("span", { class: "agentcell-badge agentcell-cached", title: "answered from the cache" }, "cached"));
    if (status === "running") badges.push(h("span", { class: "agentcell-badge agentcell-running-badge" }, "running…"));
    if (status === "error") badges.push(h("span", { class: "agentcell-badge agentcell-error-badge" }, "error"));
    const duration = Number.isFinite(item.elapsedMs) ? h("span", { class: "agentcell-tool-duration" }, formatMs(item.elapsedMs)) : null;
    const body = [argsBlock(item.args)];
    if (status !== "running") {
      if (status === "error" && item.error) body.push(h("div", { class: "agentcell-tool-error" }, String(item.error)));
      const result = formatResult(item.result ?? "");
      if (result !== "" || status !== "error") body.push(textBlock("result", "agentcell-tool-result", status === "error" ? "sent to the model" : "result", result));
    }
    if (ctx.teaching && item.callId) body.push(h("div", { class: "agentcell-teach-only agentcell-call-id" }, `call id: ${item.callId}`));
    return h(
      "div",
      {
        class: "agentcell-item agentcell-tool",
        data: { "call-id": item.callId, tool: item.name, "tool-status": status, cached: item.cached ? "true" : null, round: item.round },
      },
      h("div", { class: "agentcell-tool-head" }, h("span", { class: "agentcell-tool-icon", "aria-hidden": "true" }, "\u2692"), h("span", { class: "agentcell-tool-name" }, item.name), ...badges, duration),
      ...body,
    );
  },

  approval(item, ctx) {
    const sent = ctx.sentApprovals.get(item.callId);
    let state = "pending";
    if (item.resolved) state = item.resolved.approved ? "approved" : "denied";
    else if (sent !== undefined) state = "sent";
    const children = [
      h("div", { class: "agentcell-approval-head" }, h("span", { class: "agentcell-label" }, "approval needed: "), h("span", { class: "agentcell-tool-name" }, item.name)),
      argsBlock(item.args),
    ];
    if (state === "pending" && !ctx.ended) {
      const reason = h("input", {
        type: "text",
        class: "agentcell-reason",
        placeholder: "reason (optional, sent with a denial)",
        aria: { label: `Reason for denying ${item.name}` },
      });
      const send = (approved) => () => ctx.onApprove(item.callId, approved, reason.value.trim() || null);
      children.push(
        h(
          "div",
          { class: "agentcell-approval-actions" },
          h("button", { type: "button", class: "agentcell-btn agentcell-approve", aria: { label: `Approve ${item.name}` }, on: { click: send(true) } }, "Approve"),
          h("button", { type: "button", class: "agentcell-btn agentcell-deny", aria: { label: `Deny ${item.name}` }, on: { click: send(false) } }, "Deny"),
          reason,
        ),
      );
    } else {
      let text = "";
      if (state === "approved") text = "approved";
      else if (state === "denied") text = `denied${item.resolved.reason ? `: ${item.resolved.reason}` : ""}`;
      else if (state === "sent") text = sent ? "approval sent…" : "denial sent…";
      else text = "not answered (the run ended)";
      children.push(h("div", { class: "agentcell-approval-outcome" }, text));
    }
    return h("div", { class: "agentcell-item agentcell-approval", data: { "call-id": item.callId, approval: state, round: item.round }, role: "group", aria: { label: `Approval for ${item.name}` } }, ...children);
  },

  retry(item) {
    return h("div", { class: "agentcell-item agentcell-retry", role: "status" }, retryText(item));
  },

  warning(item) {
    return h("div", { class: "agentcell-item agentcell-warning" }, h("span", { class: "agentcell-label" }, "warning: "), item.message);
  },

  guard(item) {
    return h("div", { class: "agentcell-item agentcell-guard" }, h("span", { class: "agentcell-label" }, "guard tripped: "), item.reason || "(no reason given)");
  },

  checkpoint(item) {
    return h("div", { class: "agentcell-item agentcell-checkpoint" }, `checkpoint${item.name ? `: ${item.name}` : ""} — the conversation restarts`);
  },

  payload(item) {
    const { kind, run_id: _r, slot: _s, t: _t, round: _rd, ...rest } = item.data ?? {};
    return h(
      "details",
      { class: "agentcell-item agentcell-payload agentcell-teach-only", data: { part: `payload-${kind}`, kind } },
      h("summary", { class: "agentcell-collapse-summary" }, kind.replace(/_/g, " ")),
      h("pre", { class: "agentcell-pre" }, formatJSON(rest)),
    );
  },
};

export function renderItem(item, ctx) {
  const fn = RENDER[item.type];
  if (!fn) return h("div", { class: "agentcell-item agentcell-muted" }, `(${item.type})`);
  return fn(item, ctx);
}
