// The batch's progress as words and bar widths (pure: no DOM). `p` is the kernel's progress object:
// {done, failed, stopped, running, pending, not_started, total, tokens, cost, rows_per_min, eta_s, elapsed_s, paused_s,
// pause_note, reason}.
import { formatCost, formatCount, formatElapsed } from "../format.js";

export const GROUPS = ["done", "failed", "stopped", "running", "pending", "not_started"];

const GROUP_WORD = { done: "done", failed: "failed", stopped: "stopped", running: "running", pending: "pending", not_started: "not started" };

/** Row status → the progress group it counts in (the kernel's batch/results.py GROUPS). */
export function groupOf(status) {
  if (status === "completed" || status === "halted") return "done";
  if (status === "failed" || status === "budget_exhausted") return "failed";
  return GROUP_WORD[status] ? status : "pending";
}

/** Bar segments: [{group, percent}] for the groups that have rows. */
export function segments(p) {
  const total = Math.max(1, num(p?.total));
  return GROUPS.filter((g) => num(p?.[g]) > 0).map((g) => ({ group: g, percent: (100 * num(p[g])) / total }));
}

/** "12 of 50 rows · 10 done · 1 failed · 1 running · 38 pending" */
export function countsText(p) {
  const parts = GROUPS.filter((g) => num(p?.[g]) > 0).map((g) => `${num(p[g])} ${GROUP_WORD[g]}`);
  const finished = num(p?.done) + num(p?.failed) + num(p?.stopped);
  return [`${finished} of ${num(p?.total)} rows`, ...parts].join(" · ");
}

/**
 * "1.2k tokens · $0.012 · 42 rows/min · about 1 m 20 s left" (rate and time left only once known). The cost
 * shows once tokens were spent: "—" when the model's price is unknown, never $0.00.
 */
export function statsText(p) {
  const parts = [`${formatCount(num(p?.tokens))} tokens`];
  if (num(p?.tokens) > 0 || Number.isFinite(p?.cost)) parts.push(formatCost(p?.cost));
  if (Number.isFinite(p?.rows_per_min)) parts.push(`${p.rows_per_min} rows/min`);
  const left = num(p?.pending) + num(p?.running);
  if (left > 0 && Number.isFinite(p?.eta_s)) parts.push(`about ${formatElapsed(p.eta_s)} left`);
  if (num(p?.paused_s) > 0) parts.push(`paused ${formatElapsed(p.paused_s)} (rate limit)`);
  if (typeof p?.pause_note === "string" && p.pause_note) parts.push(p.pause_note); // a Retry-After longer than the cap
  parts.push(`elapsed ${formatElapsed(num(p?.elapsed_s))}`);
  return parts.join(" · ");
}

function num(v) {
  return Number.isFinite(v) ? v : 0;
}
