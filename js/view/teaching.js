// The teaching panel: the tools offered to the model (with their JSON schemas) and the events this
// widget does not know yet. Per-round payloads and request rows live in the slot timelines.
import { formatJSON, plural } from "../format.js";
import { h, preBlock, syncChildren } from "../render/dom.js";

function schemaOf(s) {
  return s ? (s.parameters_json_schema ?? s.parameters ?? s.input_schema) : undefined;
}

function toolDeclaration(name, s) {
  const schema = schemaOf(s);
  return h(
    "li",
    { class: "agentcell-tool-decl", data: { tool: name } },
    h("span", { class: "agentcell-tool-name" }, name),
    s?.description ? h("div", { class: "agentcell-tool-description" }, String(s.description)) : null,
    schema !== undefined
      ? h(
          "details",
          { class: "agentcell-collapse agentcell-tool-schema", data: { part: `schema-${name}`, tool: name }, open: true },
          h("summary", { class: "agentcell-collapse-summary" }, "parameters (JSON schema)"),
          preBlock("agentcell-pre agentcell-tool-schema-json", formatJSON(schema)),
        )
      : null,
  );
}

/** run_started.tools + run_started.tool_schemas ([{name, description, parameters_json_schema}]) → elements. */
export function toolDeclarations(tools, schemas) {
  const byName = new Map();
  for (const t of tools) byName.set(t, null);
  const structured = Array.isArray(schemas) && schemas.every((s) => s && typeof s === "object" && !Array.isArray(s));
  if (structured) for (const s of schemas) byName.set(String(s.name ?? "?"), s);
  const n = byName.size;
  const out = [h("div", { class: "agentcell-label" }, n ? `${plural(n, "tool")} offered to the model:` : "no tools offered")];
  if (n) out.push(h("ul", { class: "agentcell-tool-list" }, [...byName].map(([name, s]) => toolDeclaration(name, s))));
  // Some other shape: shown as it came.
  if (schemas != null && !structured) out.push(preBlock("agentcell-pre agentcell-tool-schemas", formatJSON(schemas)));
  return out;
}

export function buildTeaching() {
  const toolsEl = h("div", { class: "agentcell-teach-tools" });
  const unknownEl = h("div", { class: "agentcell-teach-unknown" });
  const el = h(
    "div",
    { class: "agentcell-teaching agentcell-teach-only" },
    h("h3", { class: "agentcell-teach-title" }, "Teaching view"),
    toolsEl,
    h("div", { class: "agentcell-teach-note agentcell-muted" }, "Per-round requests and responses appear in each round when the kernel sends them."),
    unknownEl,
  );
  // What was drawn last: redrawn only when it changes, so the reader's open/closed <details> stay put.
  return { el, toolsEl, unknownEl, key: {} };
}

export function renderTeaching(tp, state, teaching) {
  if (tp.key.state !== state) tp.key = { state }; // a reset or a new run: draw the panel anew
  if (!teaching) return;
  const key = tp.key;
  if (key.tools !== state.tools || key.schemas !== state.toolSchemas) {
    key.tools = state.tools;
    key.schemas = state.toolSchemas;
    syncChildren(tp.toolsEl, toolDeclarations(state.tools, state.toolSchemas));
  }
  if (key.unknown !== state.unknownCount) {
    key.unknown = state.unknownCount;
    if (state.unknown.length) {
      syncChildren(tp.unknownEl, [
        h("div", { class: "agentcell-label" }, `events this widget does not know yet (${state.unknownCount}):`),
        preBlock("agentcell-pre", formatJSON(state.unknown)),
      ]);
    } else tp.unknownEl.replaceChildren();
  }
}
