// Copy and Download: the transcript in the chosen format (js/src/transcript.js builds the data), and the
// short notice that says what happened.
import { h } from "../render/dom.js";
import { exportData } from "../transcript.js";

// [value, label, download file suffix]
export const EXPORT_FORMATS = [
  ["openai", "OpenAI messages", "openai.json"],
  ["pydantic_ai", "pydantic-ai messages", "pydantic-ai.json"],
  ["events", "agentcell events", "events.json"],
];

const UNAVAILABLE = {
  openai: "OpenAI messages are available once the first model request went out",
  pydantic_ai: "pydantic-ai messages are available once the run has ended",
};

export function buildExport() {
  const formatSel = h(
    "select",
    { class: "agentcell-export-format", title: "Transcript format for Copy and Download" },
    EXPORT_FORMATS.map(([value, name]) => h("option", { value }, name)),
  );
  // A visible label that names the select (it wraps it, so no id is needed): "Transcript as [OpenAI messages]".
  const formatLabel = h("label", { class: "agentcell-export-label" }, h("span", { class: "agentcell-export-label-text" }, "Transcript as"), formatSel);
  const copyBtn = h("button", { type: "button", class: "agentcell-btn agentcell-copy", aria: { label: "Copy transcript JSON" }, title: "Copy the transcript as JSON" }, "Copy");
  const downloadBtn = h("button", { type: "button", class: "agentcell-btn agentcell-download", aria: { label: "Download transcript JSON" }, title: "Download the transcript as JSON" }, "Download");
  const noticeEl = h("div", { class: "agentcell-notice", role: "status", hidden: true });
  return { formatSel, formatLabel, copyBtn, downloadBtn, noticeEl, noticeTimer: null, controls: [formatLabel, copyBtn, downloadBtn] };
}

export function notice(ex, text) {
  ex.noticeEl.textContent = text;
  ex.noticeEl.hidden = false;
  clearTimeout(ex.noticeTimer);
  ex.noticeTimer = setTimeout(() => (ex.noticeEl.hidden = true), 2500);
}

/** The chosen format's JSON text, or null (after telling the person why) when it is not available yet. */
function exportText(ex, ctx) {
  const fmt = (ctx.ui.exportFormat = ex.formatSel.value);
  const data = exportData(ctx.store.state, ctx.store.events, fmt, { traitStatus: ctx.model.get("status") });
  if (data === null) {
    notice(ex, UNAVAILABLE[fmt] ?? "not available yet");
    return null;
  }
  return JSON.stringify(data, null, 2);
}

export function legacyCopy(root, text) {
  // Clipboard API unavailable (insecure context, permissions): the legacy way.
  const ta = h("textarea", { class: "agentcell-offscreen", "aria-hidden": "true" });
  ta.value = text;
  root.append(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    /* ignore */
  }
  ta.remove();
  return ok;
}

async function copy(ex, ctx) {
  const text = exportText(ex, ctx);
  if (text === null) return;
  try {
    await navigator.clipboard.writeText(text);
    notice(ex, "transcript copied");
  } catch {
    notice(ex, legacyCopy(ctx.root, text) ? "transcript copied" : "copy failed: use Download");
  }
}

function download(ex, ctx) {
  const text = exportText(ex, ctx);
  if (text === null) return;
  try {
    const blob = new Blob([text], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const suffix = EXPORT_FORMATS.find(([v]) => v === ctx.ui.exportFormat)?.[2] ?? "json";
    const a = h("a", { href: url, download: `agentcell-${ctx.store.state.runId ?? "run"}.${suffix}`, class: "agentcell-offscreen" });
    ctx.root.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (err) {
    console.warn("[agentcell] download failed", err);
    notice(ex, "download failed");
  }
}

export function wireExport(ex, ctx) {
  ex.formatSel.addEventListener("change", () => (ctx.ui.exportFormat = ex.formatSel.value));
  ex.copyBtn.addEventListener("click", () => copy(ex, ctx));
  ex.downloadBtn.addEventListener("click", () => download(ex, ctx));
}
