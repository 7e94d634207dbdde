// One timeline item (thinking, narration, tool card, approval, retry, guard, warning, checkpoint,
// teaching payload) -> a fresh element. All untrusted text goes in as text nodes.
import { h, preBlock } from "./dom.js";
import { renderMedia } from "./media.js";
import { copyItemButton } from "./copy.js";
import { formatArgs, formatCount, formatJSON, formatMs, formatResult, formatTokens, isLong, label, plural, requestText, retryText, retractLabel, serverNote } from "../format.js";

/** Item types shown only in the teaching view (a round holding nothing else is hidden too). */
export const TEACH_ONLY_ITEMS = new Set(["payload", "request"]);

/**
 * Item types whose element depends on whether the run has ended (a pending approval's buttons). Only
 * these are built again when the run ends: at the end of a long answer, rebuilding every item (a model
 * response's payload holds the whole answer as JSON) was most of the last frame's script.
 */
export const ENDED_ITEMS = new Set(["approval", "tool"]);

function payloadSummary(kind, d) {
  if (kind === "model_request" && Array.isArray(d.messages)) {
    const earlier = Number.isFinite(d.offset) && d.offset > 0 ? ` (after ${plural(d.offset, "earlier message")})` : "";
    const tools = Array.isArray(d.tools) && d.tools.length ? ` · ${plural(d.tools.length, "tool")} offered` : "";
    return `model request · round ${d.round ?? "?"} · ${plural(d.messages.length, "message")}${earlier}${tools}`;
  }
  if (kind === "model_response" && Array.isArray(d.parts)) {
    const est = d.usage?.estimated === true ? "~" : "";
    const u = d.usage && typeof d.usage === "object" ? ` · ${est}${formatCount(d.usage.input_tokens ?? 0)} in / ${est}${formatCount(d.usage.output_tokens ?? 0)} out` : "";
    return `model response · round ${d.round ?? "?"} · ${plural(d.parts.length, "part")}${u}${d.model_name ? ` · ${d.model_name}` : ""}`;
  }
  return kind.replace(/_/g, " ");
}

function collapsible(part, cls, heading, text, { open = false, copy = null } = {}) {
  return h(
    "details",
    { class: ["agentcell-collapse", cls], data: { part }, open },
    h("summary", { class: "agentcell-collapse-summary" }, heading),
    copy ? copyItemButton(copy, text) : null,
    preBlock("agentcell-pre", text),
  );
}

/** A labelled block of text; `copy` (what it is, e.g. "tool result") adds a Copy button for it. */
function textBlock(part, cls, heading, text, copy = null) {
  if (isLong(text)) return collapsible(part, cls, `${heading} (${text.length.toLocaleString("en")} chars)`, text, { copy });
  const head = copy ? h("div", { class: "agentcell-block-head" }, h("span", { class: "agentcell-label" }, heading), copyItemButton(copy, text)) : h("span", { class: "agentcell-label" }, heading);
  return h("div", { class: ["agentcell-block", cls], data: { part } }, head, preBlock("agentcell-pre", text));
}

/** `copy`: a Copy button for the arguments (not on an approval card: Tab goes from the card to Approve). */
function argsBlock(args, { copy = true } = {}) {
  if (args === null || args === undefined) return null;
  const isEmpty = typeof args === "object" && Object.keys(args).length === 0;
  if (isEmpty) return h("div", { class: "agentcell-tool-args agentcell-muted" }, label("no_arguments"));
  return textBlock("args", "agentcell-tool-args", label("arguments"), formatArgs(args), copy ? "tool call arguments" : null);
}

/** Approve, then the reason a denial carries, then Deny (the reason comes before the button it belongs to). */
function approvalActions(item, ctx) {
  const id = item.callId;
  const reason = h("input", {
    type: "text",
    class: "agentcell-reason",
    placeholder: label("reason"),
    aria: { label: `Reason for denying ${item.name}` },
    data: { "focus-key": `reason:${id}` },
    on: { input: (e) => ctx.reasons?.set(id, e.target.value) },
  });
  reason.value = ctx.reasons?.get(id) ?? "";
  const send = (approved) => () => ctx.onApprove(id, approved, reason.value.trim() || null);
  const button = (cls, text, approved) =>
    h("button", { type: "button", class: `agentcell-btn ${cls}`, aria: { label: `${text} ${item.name}` }, data: { "focus-key": `${cls}:${id}` }, on: { click: send(approved) } }, text);
  return h("div", { class: "agentcell-approval-actions" }, button("agentcell-approve", "Approve", true), reason, button("agentcell-deny", "Deny", false));
}

/**
 * "Edit and re-run from here" on a finished run: a button, or (open) a labelled text box with Re-run and
 * Cancel. `edit` names what is edited: `key` (unique in the view), `target` (what the kernel is told:
 * `{call_id}` for a tool result, `{slot}` for a slot's user message), `what` (words for the labels), `value`
 * (the text it starts from). Re-run asks the kernel for a fork that keeps the rounds up to this point with
 * this one thing changed; the fork is shown in a new output below the view.
 */
export function forkControls(edit, ctx) {
  const { key, what } = edit;
  if (ctx.forkEdit?.key !== key) {
    return h(
      "button",
      { type: "button", class: "agentcell-btn agentcell-fork-edit", data: { "focus-key": `fork:${key}` },
        aria: { label: `Edit the ${what} and re-run from here` }, on: { click: () => ctx.onForkEdit(edit) } },
      label("fork_edit"),
    );
  }
  const inputId = `agentcell-fork-${ctx.viewId ?? ""}-${key.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const box = h("textarea", {
    id: inputId,
    class: "agentcell-fork-value",
    rows: "3",
    data: { "focus-key": `fork-value:${key}` },
    on: { input: (e) => (ctx.forkEdit.value = e.target.value) },
  });
  box.value = ctx.forkEdit.value;
  return h(
    "div",
    { class: "agentcell-fork-editor", role: "group", aria: { label: `New ${what}` } },
    h("label", { class: "agentcell-label", for: inputId }, `New ${what}`),
    box,
    h(
      "div",
      { class: "agentcell-approval-actions" },
      h("button", { type: "button", class: "agentcell-btn agentcell-fork-go", data: { "focus-key": `fork-go:${key}` },
        on: { click: () => ctx.onForkGo(edit, box.value) } }, label("fork_go")),
      h("button", { type: "button", class: "agentcell-btn agentcell-fork-cancel", data: { "focus-key": `fork-cancel:${key}` },
        on: { click: () => ctx.onForkCancel(edit) } }, label("fork_cancel")),
    ),
  );
}

/** The answer's line: focused after Approve / Deny (tabindex -1), so the focus stays in the card. */
function approvalOutcome(item, state, sent) {
  let text = label("not_answered");
  if (state === "approved") text = label("approved");
  else if (state === "denied") text = `${label("denied")}${item.resolved.reason ? `: ${item.resolved.reason}` : ""}`;
  else if (state === "sent") text = label(sent ? "approval_sent" : "denial_sent");
  // A line of text with a mark (CSS), sized to its words: focused, it must not look like a field to type in.
  return h("div", { class: "agentcell-approval-outcome", tabindex: "-1", data: { "focus-key": `outcome:${item.callId}`, outcome: state } }, text);
}

const RENDER = {
  thinking(item) {
    const n = item.text.length;
    return h(
      "details",
      { class: "agentcell-item agentcell-thinking", data: { part: "thinking", round: item.round } },
      h("summary", { class: "agentcell-collapse-summary" }, `${label("thinking")} (${plural(n, "char")})`),
      h("div", { class: "agentcell-thinking-text" }, item.text),
    );
  },

  narration(item) {
    const reason = retractLabel(item.reason);
    return h(
      "div",
      { class: "agentcell-item agentcell-narration", data: { reason: item.reason, round: item.round } },
      h("div", { class: "agentcell-narration-reason" }, reason),
      h("div", { class: "agentcell-narration-text" }, item.text),
    );
  },

  tool(item, ctx) {
    const status = item.status ?? "running";
    const badges = [];
    if (item.cached) badges.push(h("span", { class: "agentcell-badge agentcell-cached", title: "answered from the cache" }, label("cached")));
    if (status === "running") badges.push(h("span", { class: "agentcell-badge agentcell-running-badge" }, label("tool_running")));
    if (status === "error") badges.push(h("span", { class: "agentcell-badge agentcell-error-badge" }, label("tool_error")));
    const duration = Number.isFinite(item.elapsedMs) ? h("span", { class: "agentcell-tool-duration" }, formatMs(item.elapsedMs)) : null;
    const body = [argsBlock(item.args)];
    if (status !== "running") {
      if (status === "error" && item.error) body.push(h("div", { class: "agentcell-tool-error" }, String(item.error)));
      const result = formatResult(item.result ?? "");
      if (result !== "" || status !== "error") body.push(textBlock("result", "agentcell-tool-result", label(status === "error" ? "error_result" : "result"), result, "tool result"));
    }
    if (ctx.teaching && item.callId) body.push(h("div", { class: "agentcell-teach-only agentcell-call-id" }, `call id: ${item.callId}`));
    if (ctx.ended && ctx.onForkGo && item.callId && status !== "running") {
      const edit = { key: `call:${item.callId}`, target: { call_id: item.callId }, what: `result of ${item.name} (${item.callId})`, value: formatResult(item.result ?? "") };
      body.push(forkControls(edit, ctx));
    }
    return h(
      "div",
      {
        class: "agentcell-item agentcell-tool",
        data: { "call-id": item.callId, tool: item.name, "tool-status": status, cached: item.cached ? "true" : null, round: item.round },
      },
      h("div", { class: "agentcell-tool-head" }, h("span", { class: "agentcell-tool-icon", "aria-hidden": "true" }, "\u2692"), item.server ? h("span", { class: "agentcell-tool-server", title: serverNote(item.server) }, `${item.server} · `) : null, h("span", { class: "agentcell-tool-name" }, item.name), ...badges, duration),
      ...body,
    );
  },

  approval(item, ctx) {
    const sent = ctx.sentApprovals.get(item.callId);
    let state = "pending";
    if (item.resolved) state = item.resolved.approved ? "approved" : "denied";
    else if (sent !== undefined) state = "sent";
    return h(
      "div",
      {
        class: "agentcell-item agentcell-approval",
        data: { "call-id": item.callId, approval: state, round: item.round, "focus-key": `approval:${item.callId}` },
        role: "group",
        aria: { label: `Approval for ${item.name}${item.server ? ` (${serverNote(item.server)})` : ""}` },
        tabindex: "-1",
      },
      h(
        "div",
        { class: "agentcell-approval-head" },
        h("span", { class: "agentcell-label" }, `${label("approval_needed")}: `),
        h("span", { class: "agentcell-tool-name" }, item.name),
        item.server ? h("span", { class: "agentcell-approval-server" }, ` (${serverNote(item.server)})`) : null,
      ),
      argsBlock(item.args, { copy: false }),
      state === "pending" && !ctx.ended ? approvalActions(item, ctx) : approvalOutcome(item, state, sent),
    );
  },

  retry(item) {
    return h("div", { class: "agentcell-item agentcell-retry", role: "status" }, retryText(item));
  },

  warning(item) {
    return h("div", { class: "agentcell-item agentcell-warning" }, h("span", { class: "agentcell-label" }, `${label("warning")}: `), item.message);
  },

  guard(item) {
    return h("div", { class: "agentcell-item agentcell-guard" }, h("span", { class: "agentcell-label" }, `${label("guard_tripped")}: `), item.reason || label("no_reason"));
  },

  checkpoint(item) {
    return h("div", { class: "agentcell-item agentcell-checkpoint" }, `${label("checkpoint")}${item.name ? `: ${item.name}` : ""} — ${label("checkpoint_note")}`);
  },

  /**
   * The JSON is written only while the teaching view is on (which shows it; turning the view on renders
   * the items again): a model response's payload holds the whole answer, and formatting a long one as
   * JSON on every rebuild of a hidden element cost the end of a 50,000-token answer milliseconds.
   */
  payload(item, ctx) {
    const data = item.data ?? {};
    const { kind, run_id: _r, slot: _s, t: _t, round: _rd, ...rest } = data;
    return h(
      "details",
      { class: "agentcell-item agentcell-payload agentcell-teach-only", data: { part: `payload-${kind}`, kind, round: item.round } },
      h("summary", { class: "agentcell-collapse-summary" }, payloadSummary(kind, data)),
      ctx.teaching ? preBlock("agentcell-pre", formatJSON(rest)) : null,
    );
  },

  request(item) {
    return h(
      "div",
      {
        class: "agentcell-item agentcell-request agentcell-teach-only",
        data: { request: item.request, purpose: item.purpose, ended: item.ended, "latency-ms": item.latencyMs, input: item.input, output: item.output, round: item.round },
        title: item.model ? `model: ${item.model}` : null,
      },
      requestText(item),
    );
  },

  compaction(item) {
    const done = item.status === "done";
    const text = done
      ? `${label("compacted")}: ${formatTokens(item.before)} → ${formatTokens(item.after)} tokens`
      : `${label("compacting")}: ~${formatTokens(item.tokens)} tokens${item.window ? ` of ${formatTokens(item.window)}` : ""}…`;
    const detail = done
      ? `${plural(item.summarized, "message")} summarized (${item.messagesBefore} → ${plural(item.messagesAfter, "message")})`
      : item.messages ? plural(item.messages, "message") : "";
    return h(
      "div",
      {
        class: "agentcell-item agentcell-compaction",
        data: { compaction: done ? "done" : "running", before: done ? item.before : item.tokens, after: done ? item.after : null, round: item.round },
        role: done ? null : "status",
      },
      h("div", { class: "agentcell-compaction-head" }, h("span", { class: "agentcell-compaction-text" }, text), detail ? h("span", { class: "agentcell-compaction-detail" }, detail) : null),
      done && item.summary
        ? h(
            "details",
            { class: "agentcell-collapse agentcell-compaction-summary", data: { part: "compaction-summary" } },
            h("summary", { class: "agentcell-collapse-summary" }, `summary the model now reads (${plural(item.summary.length, "char")})`),
            h("div", { class: "agentcell-compaction-summary-text" }, item.summary),
          )
        : null,
    );
  },

  media: renderMedia,

  resumed(item) {
    if (item.forked_from != null) {
      const edited = item.edited?.length ? ` (${label("forked_edited")}: ${item.edited.join(", ")})` : "";
      return h(
        "div",
        { class: "agentcell-item agentcell-resumed agentcell-forked", data: { part: "fork-point", round: item.round } },
        h("span", { class: "agentcell-resumed-text" }, label("forked", { run: item.forked_from, round: item.fork_round }) + edited),
      );
    }
    const parts = [];
    if (item.kept?.length) parts.push(`${label("resumed_kept")}: ${item.kept.join(", ")}`);
    if (item.restarting) parts.push(`${label("resumed_restarting")}: ${item.restarting}`);
    return h(
      "div",
      { class: "agentcell-item agentcell-resumed", data: { segment: item.segment, round: item.round } },
      h("span", { class: "agentcell-resumed-text" }, label("resumed", { segment: item.segment })),
      parts.length ? h("span", { class: "agentcell-resumed-detail" }, parts.join(" · ")) : null,
    );
  },
};

export function renderItem(item, ctx) {
  const fn = RENDER[item.type];
  if (!fn) return h("div", { class: "agentcell-item agentcell-muted" }, `(${item.type})`);
  return fn(item, ctx);
}
