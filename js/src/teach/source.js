// The cell that produced the run, at the top of the teaching view: the `%%agent` line (or the Python
// call), the template, and the values `{{ }}` took — masked by Python before they reached the browser
// (src/agentcell/render/cell_source.py, which draws the same block in the lesson export).
import { h } from "../render/dom.js";

/** The section for the widget's `source` trait ({template, call, values}), or null when it is empty. */
export function sourceEl(source) {
  if (!source || typeof source !== "object" || typeof source.template !== "string") return null;
  const values = Array.isArray(source.values) ? source.values.filter((v) => Array.isArray(v) && v.length === 2) : [];
  return h(
    "section",
    { class: "ac-source", aria: { label: "the cell that produced this run" } },
    h("h4", { class: "ac-section-title" }, "The cell"),
    source.call ? h("div", { class: "ac-source-call" }, h("code", {}, String(source.call))) : null,
    h("pre", { class: "agentcell-pre ac-source-template", tabindex: "0", aria: { label: "the template" } }, source.template),
    values.length
      ? h(
          "table",
          { class: "ac-source-values" },
          h("caption", {}, "The values {{ }} took"),
          h("tbody", {}, values.map(([name, value]) => h("tr", {}, h("th", { scope: "row" }, h("code", {}, `{{ ${name} }}`)), h("td", {}, h("code", {}, String(value)))))),
        )
      : null,
  );
}
