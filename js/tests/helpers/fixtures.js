// Wire events shaped like src/agentcell/events/json.py's to_wire() output.
const R = "run-1";
export const ev = {
  runStarted: (extra = {}) => ({
    kind: "run_started", run_id: R, slot: null, model: "openai:gpt-4o-mini", offline: false,
    slots: [{ name: "answer", type: "text", required: false, use_tools: true }],
    limits: { requests: 20, tool_calls: 20, output_tokens: 250000 }, tools: ["lookup_module"], t: 0, ...extra,
  }),
  slotStarted: (slot = "answer", extra = {}) => ({ kind: "slot_started", run_id: R, slot, slot_type: "text", index: 0, t: 0.01, ...extra }),
  token: (text, extra = {}) => ({ kind: "token_delta", run_id: R, slot: "answer", text, round: 1, t: 0.5, ...extra }),
  thinking: (text, extra = {}) => ({ kind: "thinking_delta", run_id: R, slot: "answer", text, round: 1, t: 0.2, ...extra }),
  retracted: (reason, text = "", extra = {}) => ({ kind: "slot_retracted", run_id: R, slot: "answer", reason, text, round: 1, t: 0.6, ...extra }),
  toolStarted: (extra = {}) => ({ kind: "tool_started", run_id: R, slot: "answer", call_id: "c1", tool_name: "lookup_module", args: { module_code: "PSYC605" }, round: 1, t: 0.7, ...extra }),
  toolCompleted: (extra = {}) => ({ kind: "tool_completed", run_id: R, slot: "answer", call_id: "c1", tool_name: "lookup_module", ok: true, result: "Research Methods, led by Dr Ada", error: null, was_cached: false, elapsed_ms: 12.5, round: 1, t: 0.8, ...extra }),
  approvalRequested: (extra = {}) => ({ kind: "approval_requested", run_id: R, slot: "answer", call_id: "c9", tool_name: "send_email", args: { to: "a@b.c" }, t: 0.9, ...extra }),
  approvalResolved: (approved, reason = null, extra = {}) => ({ kind: "approval_resolved", run_id: R, slot: "answer", call_id: "c9", approved, reason, t: 1.0, ...extra }),
  retrying: (extra = {}) => ({ kind: "retrying", run_id: R, slot: "answer", attempt: 1, delay_s: 2, reason: "429", t: 1.1, ...extra }),
  usage: (usage, extra = {}) => ({ kind: "usage_updated", run_id: R, slot: "answer", usage: { requests: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0, cost: null, ...usage }, t: 1.2, ...extra }),
  warning: (message, extra = {}) => ({ kind: "run_warning", run_id: R, slot: null, message, t: 1.3, ...extra }),
  guard: (reason, extra = {}) => ({ kind: "guard_tripped", run_id: R, slot: "answer", reason, t: 1.4, ...extra }),
  checkpoint: (name, extra = {}) => ({ kind: "checkpoint_reached", run_id: R, name, slot: null, t: 1.5, ...extra }),
  slotCompleted: (value, text, extra = {}) => ({ kind: "slot_completed", run_id: R, slot: "answer", value, text, t: 2, ...extra }),
  slotFailed: (status, error, partial = "", extra = {}) => ({ kind: "slot_failed", run_id: R, slot: "answer", status, error, partial, t: 2, ...extra }),
  context: (used, window = 128000, extra = {}) => ({ kind: "context_updated", run_id: R, slot: "answer", used_tokens: used, window, fraction: Math.round((used / window) * 1e4) / 1e4, request: 1, t: 1.25, ...extra }),
  compactionStarted: (extra = {}) => ({ kind: "compaction_started", run_id: R, slot: "answer", tokens: 41000, window: 50000, threshold: 0.8, messages: 23, t: 1.3, ...extra }),
  compactionFinished: (summary = "The user asked about PSYC605; lookup_module said Dr Ada leads it.", extra = {}) => ({
    kind: "compaction_finished", run_id: R, slot: "answer", before: 41000, after: 9000, messages_before: 23, messages_after: 12, summarized: 11, summary, t: 1.4, ...extra,
  }),
  request: (request, extra = {}) => ({
    kind: "request_completed", run_id: R, slot: "answer", request, usage: { requests: 1, tool_calls: 0, input_tokens: 120, output_tokens: 45, cost: null },
    latency_ms: 340, model: "gpt-4o-mini", purpose: "answer", ended: "completed", t: 1.2, ...extra,
  }),
  resumed: (extra = {}) => ({ kind: "run_resumed", run_id: R, segment: 2, kept: [], restarting: "answer", slot: null, t: 5, ...extra }),
  modelRequest: (round, messages, extra = {}) => ({ kind: "model_request", run_id: R, slot: "answer", round, messages, offset: 0, tools: ["lookup_module"], t: 0.1, ...extra }),
  modelResponse: (round, parts, extra = {}) => ({
    kind: "model_response", run_id: R, slot: "answer", round, parts, usage: { requests: 1, tool_calls: 0, input_tokens: 120, output_tokens: 45, cost: null }, model_name: "gpt-4o-mini", t: 0.4, ...extra,
  }),
  done: (status = "completed", extra = {}) => ({
    kind: "processing_complete", run_id: R, slot: null, status, early_termination: false, answer: "done",
    usage: { requests: 2, tool_calls: 1, input_tokens: 1200, output_tokens: 340, cost: 0.0012 }, t: 3.25, ...extra,
  }),
};

/** A complete run that touches most kinds. */
export function fullRun() {
  return [
    ev.runStarted(),
    ev.slotStarted(),
    ev.thinking("Let me look "),
    ev.thinking("that up."),
    ev.token("I will check "),
    ev.token("the module."),
    ev.retracted("gathering", "I will check the module."),
    ev.toolStarted(),
    ev.toolCompleted(),
    ev.usage({ requests: 1, tool_calls: 1, input_tokens: 500, output_tokens: 40 }),
    ev.token("**Dr Ada** leads ", { round: 2, t: 1.6 }),
    ev.token("PSYC605.\n\nSee [the page](https://example.org/m).", { round: 2, t: 1.7 }),
    ev.usage({ requests: 2, tool_calls: 1, input_tokens: 1200, output_tokens: 340, cost: 0.0012 }),
    ev.slotCompleted("**Dr Ada** leads PSYC605.\n\nSee [the page](https://example.org/m).", "**Dr Ada** leads PSYC605.\n\nSee [the page](https://example.org/m)."),
    ev.done(),
  ];
}

/** Segment 1 stops mid-answer after `intro` finished; segment 2 (same run id) resumes `answer`. */
export function resumedRun() {
  const slots = [{ name: "intro", type: "text" }, { name: "answer", type: "text", use_tools: true }];
  const segment1 = [
    ev.runStarted({ slots }),
    ev.slotStarted("intro"),
    ev.token("Hello from intro.", { slot: "intro" }),
    ev.slotCompleted("Hello from intro.", undefined, { slot: "intro" }),
    ev.slotStarted("answer", { index: 1 }),
    ev.token("Let me check.", { t: 0.6 }),
    ev.retracted("gathering", "Let me check."),
    ev.toolStarted(),
    ev.toolCompleted(),
    ev.token("Dr Ada le", { round: 2, t: 1.6 }),
    ev.slotFailed("stopped", "stopped", "Dr Ada le", { t: 1.7 }),
    ev.done("stopped", { answer: null, t: 1.8 }),
  ];
  const segment2 = [
    ev.runStarted({ slots, t: 5 }),
    ev.resumed({ kept: ["intro"], restarting: "answer" }),
    ev.slotStarted("answer", { index: 1, t: 5.1 }),
    ev.token("Dr Ada leads PSYC605.", { round: 1, t: 5.5 }),
  ];
  const end = [ev.slotCompleted("Dr Ada leads PSYC605.", undefined, { t: 6 }), ev.done("completed", { answer: "Dr Ada leads PSYC605.", t: 6.1 })];
  return { segment1, segment2, end };
}
