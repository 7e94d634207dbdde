// A Copy button for one item: the answer as Markdown, a tool call's arguments, a tool result, a request
// or response body in the wire view. It only carries what to copy (`text`, or a function giving it at
// click time) and what it is; view/copy.js copies it and announces it once, in the widget's one notice.
import { h } from "./dom.js";

export const COPY_ITEM = "agentcell-copy-item";

/** A keyboard-operable button (a real <button>) that copies `text` (a string, or a function returning one). */
export function copyItemButton(what, text) {
  const btn = h("button", { type: "button", class: `agentcell-btn ${COPY_ITEM}`, aria: { label: `Copy ${what}` }, title: `Copy ${what}`, data: { copy: what } }, "Copy");
  btn.agentcellCopy = text;
  return btn;
}

/** The text a copy button holds, or null. */
export function copyText(btn) {
  const value = typeof btn.agentcellCopy === "function" ? btn.agentcellCopy() : btn.agentcellCopy;
  return typeof value === "string" ? value : null;
}
