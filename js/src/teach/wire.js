// The wire: each round's request and response in the chosen format — OpenAI Chat Completions,
// pydantic-ai messages, or the HTTP exchange captured as sent (keys redacted by Python) — each
// copyable; and the context gauge over time (tokens per round against the model's window).
import { h } from "../render/dom.js";
import { copyItemButton } from "../render/copy.js";
import { formatCount, formatJSON, formatTokens, plural } from "../format.js";
import { responseMessage } from "./messages.js";
import { words } from "./words.js";

export const FORMATS = ["openai", "pydantic_ai", "http"];

function toolDecl(name, tools) {
  const t = tools.find((x) => x.name === name);
  return { type: "function", function: { name, description: t?.description ?? "", parameters: t?.schema ?? {} } };
}

/** {request, response} of one round in format `fmt` (values to show as JSON), or null for none. */
export function wireData(r, fmt, { model, tools }) {
  if (fmt === "openai") {
    const request = r.request ? { model, messages: r.request.messages } : null;
    if (request && r.offered?.length) request.tools = r.offered.map((n) => toolDecl(n, tools));
    return { request, response: r.response ? { message: responseMessage(r.response.parts), usage: r.response.usage } : null };
  }
  if (fmt === "pydantic_ai") {
    const parts = r.request?.data?.pydantic_ai;
    return {
      request: Array.isArray(parts) ? { new_messages: parts } : null,
      response: r.response ? { kind: "response", parts: r.response.parts, usage: r.response.usage, model_name: r.response.model_name } : null,
    };
  }
  if (!r.http.length) return null;
  return {
    request: r.http.map((x) => x.request),
    response: r.http.map((x) => x.response),
  };
}

/** Copied and announced by the widget's one handler (view/copy.js), like every item's Copy button. */
function copyButton(text, what) {
  const btn = copyItemButton(what, text);
  btn.classList.add("ac-copy");
  return btn;
}

function block(title, value, what) {
  const text = typeof value === "string" ? value : formatJSON(value);
  return h(
    "div",
    { class: "ac-wire-block" },
    h("div", { class: "ac-wire-head" }, h("span", { class: "ac-caption" }, title), copyButton(text, what)),
    h("pre", { class: "agentcell-pre ac-wire-json", tabindex: "0" }, text),
  );
}

/** One round's wire, as a <details> (closed until the reader opens it; kept open across redraws). */
export function wireRound(r, fmt, ctx, part) {
  const name = words.wire[fmt];
  const data = wireData(r, fmt, ctx);
  const body = [];
  if (!data) body.push(h("p", { class: "ac-caption ac-no-http" }, fmt === "http" ? words.wire.no_http : "not available for this round"));
  else {
    body.push(h("p", { class: "ac-caption" }, words.wire[fmt === "http" ? "http_note" : fmt === "openai" ? "openai_note" : "pydantic_note"]));
    if (data.request !== null) body.push(block(fmt === "http" ? `HTTP request${data.request.length > 1 ? "s" : ""} (body as sent)` : "request", data.request, `the request of round ${r.round} (${name})`));
    if (data.response !== null) body.push(block(fmt === "http" ? "HTTP response (events as received)" : "response", data.response, `the response of round ${r.round} (${name})`));
  }
  return h(
    "details",
    { class: "ac-wire", data: { part, round: r.round, format: fmt } },
    h("summary", {}, `the wire · round ${r.round} · ${name}${fmt === "http" && r.http.length ? ` · ${plural(r.http.length, "exchange")}` : ""}`),
    body,
  );
}

/** The format switch: three toggle buttons (one pressed); `onPick(fmt)` redraws. */
export function formatSwitch(current, onPick) {
  return h(
    "div",
    { class: "ac-format", role: "group", aria: { label: "wire format" } },
    h("span", { class: "ac-caption" }, "Show the wire as: "),
    FORMATS.map((fmt) =>
      h("button", { type: "button", class: "agentcell-btn ac-format-btn", data: { format: fmt }, aria: { pressed: fmt === current ? "true" : "false" }, on: { click: () => onPick(fmt) } }, words.wire[fmt]),
    ),
  );
}

/** Tokens per round against the window: the context gauge over time. */
export function contextStrip(lesson, window) {
  const rows = lesson.rounds.filter((r) => r.usage);
  if (!rows.length) return null;
  const top = window > 0 ? window : Math.max(...rows.map((r) => (r.usage.input_tokens ?? 0) + (r.usage.output_tokens ?? 0)), 1);
  return h(
    "div",
    { class: "ac-context", aria: { label: `context over time, slot ${lesson.name}` }, role: "group" },
    h("div", { class: "ac-caption" }, window > 0 ? `context used per round (of a ${formatTokens(window)}-token window)` : "tokens per round"),
    rows.map((r) => {
      const used = (r.usage.input_tokens ?? 0) + (r.usage.output_tokens ?? 0);
      const pct = Math.min(100, (used / top) * 100);
      return h(
        "div",
        { class: "ac-context-row", data: { round: r.round, used } },
        h("span", { class: "ac-context-label" }, `round ${r.round}`),
        h("span", { class: "agentcell-bar ac-context-bar", role: "img", aria: { label: `${formatCount(used)} tokens` } }, h("span", { class: "agentcell-bar-fill", style: `width:${pct.toFixed(1)}%` })),
        h("span", { class: "ac-context-num" }, `${formatCount(r.usage.input_tokens ?? 0)} in · ${formatCount(r.usage.output_tokens ?? 0)} out`),
      );
    }),
  );
}
