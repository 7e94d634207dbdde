// Small pure formatting helpers (no DOM). The words the widget shows come from
// src/agentcell/labels.json, which the Python static (saved-notebook) view reads too.
import labels from "../../src/agentcell/labels.json";

export { labels };

/** Fill a labels.json template: "round {round}" + {round: 2} → "round 2" (unknown names are left as they are). */
export function fill(template, vars = {}) {
  return String(template).replace(/\{(\w+)\}/g, (m, k) => (Object.hasOwn(vars, k) ? String(vars[k]) : m));
}

/** labels.label[key], filled with `vars`. */
export function label(key, vars) {
  return fill(Object.hasOwn(labels.label, key) ? labels.label[key] : key, vars);
}

/** "MCP server git": how every view names the server an MCP tool comes from (Python: `render/items.py`). */
export function serverNote(server) {
  return label("mcp_server", { server });
}

export function formatElapsed(seconds) {
  const s = Math.max(0, Number.isFinite(seconds) ? seconds : 0);
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  const rest = Math.floor(s - m * 60);
  if (m < 60) return `${m} m ${String(rest).padStart(2, "0")} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${String(m - h * 60).padStart(2, "0")} m`;
}

export function formatCount(n) {
  if (!Number.isFinite(n)) return "0";
  if (Math.abs(n) < 1000) return String(Math.round(n));
  if (Math.abs(n) < 1e6) return `${(n / 1000).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

export const UNKNOWN_COST = "—";

/**
 * A cost in USD for people: two significant digits under a dollar ($0.0000045, $0.012), cents above; unknown
 * is "—", never $0.00. The same function as `format_cost` in src/agentcell/usage.py (a shared table of
 * cases, tests/fixtures/cost-format.json, keeps them equal).
 */
export function formatCost(cost) {
  if (typeof cost !== "number" || !Number.isFinite(cost)) return UNKNOWN_COST;
  if (cost <= 0) return "$0";
  if (cost >= 1) return `$${cost.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (cost < 1e-8) return "< $0.00000001";
  const digits = 1 - Math.floor(Math.log10(cost));
  const text = cost.toFixed(Math.max(2, digits));
  if (text === "1.00") return "$1.00";
  const [head, tail] = text.split(".");
  return `$${head}.${tail.slice(0, 2)}${tail.slice(2).replace(/0+$/, "")}`;
}

/** The exact cost for a tooltip: "$0.0000045" in plain decimals (12 significant digits), or "—". */
export function costExact(cost) {
  if (formatCost(cost) === UNKNOWN_COST) return UNKNOWN_COST;
  return `$${cost.toLocaleString("en-US", { maximumSignificantDigits: 12, useGrouping: false })}`;
}

export function formatMs(ms) {
  if (!Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

/** Pretty JSON for display; never throws (cycles, BigInt…). Strings are shown as-is. */
export function formatJSON(value, { quoteStrings = true } = {}) {
  if (value === undefined) return "";
  if (typeof value === "string" && !quoteStrings) return value;
  try {
    const out = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v), 2);
    return out === undefined ? String(value) : out;
  } catch {
    return String(value);
  }
}

/** Tool arguments: one line when short, else pretty-printed. */
export function formatArgs(args, max = 72) {
  const pretty = formatJSON(args);
  if (pretty.length > max * 2) return pretty;
  // JSON.stringify escapes newlines inside strings, so every raw newline here is layout.
  const oneLine = pretty.replace(/\n */g, " ");
  return oneLine.length <= max ? oneLine : pretty;
}

/** A tool result is a string; if it is JSON, show it pretty-printed. */
export function formatResult(result) {
  if (typeof result !== "string") return formatJSON(result);
  const s = result.trim();
  if ((s.startsWith("{") && s.endsWith("}")) || (s.startsWith("[") && s.endsWith("]"))) {
    try {
      return JSON.stringify(JSON.parse(s), null, 2);
    } catch {
      /* not JSON */
    }
  }
  return result;
}

export function isLong(text, { chars = 600, lines = 12 } = {}) {
  if (typeof text !== "string") return false;
  if (text.length > chars) return true;
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10 && ++n >= lines) return true;
  return false;
}

export const STATUS_LABEL = labels.status;

export function statusLabel(status) {
  return Object.hasOwn(STATUS_LABEL, status) ? STATUS_LABEL[status] : String(status ?? "");
}

export const RETRACT_LABEL = labels.retract;

export function retractLabel(reason) {
  return reason !== "other" && Object.hasOwn(RETRACT_LABEL, reason) ? RETRACT_LABEL[reason] : fill(RETRACT_LABEL.other, { reason });
}

export function retryText(item) {
  const why = item.reason ? ` after ${item.reason}` : "";
  const attempt = item.attempt ? ` (attempt ${item.attempt})` : "";
  return `retrying in ${Number(item.delay || 0).toFixed(1)} s${why}${attempt}`;
}

/** "1 tool", "2 tools", "1 match", "2 matches" (English; `many` when the plural is not word+s). */
export function plural(n, one, many = `${one}s`) {
  const k = Number.isFinite(n) ? n : 0;
  return `${k.toLocaleString("en")} ${k === 1 ? one : many}`;
}

/** Token counts for gauges: 950, 9k, 12.3k, 128k, 1.2M (one decimal below 100k, trailing .0 dropped). */
export function formatTokens(n) {
  if (!Number.isFinite(n)) return "0";
  const a = Math.abs(n);
  const trim = (s) => s.replace(/\.0$/, "");
  if (a < 1000) return String(Math.round(n));
  if (a < 1e5) return `${trim((n / 1000).toFixed(1))}k`;
  if (a < 1e6) return `${Math.round(n / 1000)}k`;
  return `${trim((n / 1e6).toFixed(1))}M`;
}

/** One model request row (teaching view): "request 2 · 340 ms · 120 in / 45 out". */
export function requestText(item) {
  const parts = [`${item.purpose === "compaction" ? "compaction request" : "request"} ${item.request}`];
  if (Number.isFinite(item.latencyMs) && item.latencyMs > 0) parts.push(formatMs(item.latencyMs));
  parts.push(`${formatCount(item.input)} in / ${formatCount(item.output)} out`);
  parts.push(`cost ${formatCost(item.cost)}`); // per request: "—" when the model's price is unknown
  if (item.ended && item.ended !== "completed") parts.push(`cut off (${item.ended})`);
  return parts.join(" · ");
}
