// A slot's requests rebuilt from the `model_request` teaching payloads, and the small conversions the
// wire view needs (a response's parts as the OpenAI assistant message). Pure; mirrors static_teaching_model.py.

/** A message's text for a bubble: its content, or its tool calls written as calls. */
export function messageText(m) {
  if (!m || typeof m !== "object") return String(m ?? "");
  const parts = [];
  if (typeof m.content === "string") parts.push(m.content);
  else if (Array.isArray(m.content)) parts.push(m.content.map(partText).join("\n"));
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    parts.push(`${c?.function?.name ?? "?"}(${c?.function?.arguments ?? ""})`);
  }
  return parts.filter(Boolean).join("\n");
}

/** A content part that is not text (an image, a file, audio): its label (`_parts_text` in render/teaching/view.py). */
const PART_LABELS = { image_url: "[image]", file: "[document]", input_audio: "[audio]" };

function partText(c) {
  if (typeof c?.text === "string") return c.text;
  return PART_LABELS[c?.type] ?? JSON.stringify(c);
}

/** Rough tokens of a text (4 characters a token): shown with "~", never as the provider's count. */
export function estimateTokens(text) {
  return Math.ceil(String(text ?? "").length / 4);
}

/** The OpenAI assistant message of a response's pydantic-ai parts (text joined, tool calls as `tool_calls`). */
export function responseMessage(parts) {
  const list = Array.isArray(parts) ? parts : [];
  const text = list.filter((p) => p?.part_kind === "text").map((p) => String(p.content ?? "")).join("");
  const calls = list
    .filter((p) => p?.part_kind === "tool-call")
    .map((p) => ({
      id: p.tool_call_id ?? "",
      type: "function",
      function: { name: String(p.tool_name ?? ""), arguments: typeof p.args === "string" ? p.args : JSON.stringify(p.args ?? {}) },
    }));
  const msg = { role: "assistant", content: text || null };
  if (calls.length) msg.tool_calls = calls;
  return msg;
}

/**
 * Each `model_request` of a slot with the whole message list it sent: `{data, messages, earlier}` where
 * `earlier` is how many of `messages` earlier requests already sent (the rest are new in this one).
 */
export function rebuildRequests(payloads) {
  let messages = [];
  return payloads.map((d) => {
    const offset = Number.isInteger(d?.offset) && d.offset > 0 ? Math.min(d.offset, messages.length) : 0;
    const fresh = Array.isArray(d?.messages) ? d.messages : [];
    messages = [...messages.slice(0, offset), ...fresh];
    return { data: d, messages, earlier: offset };
  });
}
