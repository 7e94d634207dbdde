// A fork's "Compare with the original": a toggle button under the fork's view, and the comparison inside it.
//
// The comparison is `agentcell.diff(original, fork)`, computed in the kernel (render/diff.py owns its table)
// and sent once as the `comparison` trait: `{original}` while it is only offered, then also `html` (the
// table), `text` and `summary` (the sentence said when it opens). The browser never recomputes it: the
// button asks (`{kind: "compare"}`) the first time, then only shows or hides what it has. The button stays
// the same element across renders, so the focus stays on it; opening says the summary once, in the view's
// status line; nothing moves or animates.
import { h, setAttr, setHidden, setText } from "../render/dom.js";
import { kernelHtml } from "../render/kernel-html.js";
import { notice } from "./export.js";

const OPEN_LABEL = "Compare with the original";
const CLOSE_LABEL = "Hide the comparison";

/** The control's elements; `viewId` keeps the panel's id unique across views of one run. */
export function buildCompare(viewId) {
  const btn = h("button", {
    type: "button", class: "agentcell-btn agentcell-compare-btn",
    aria: { expanded: "false", label: OPEN_LABEL }, data: { "focus-key": "compare" },
  }, OPEN_LABEL);
  const panel = h("div", {
    class: "agentcell-compare-panel", role: "region",
    aria: { label: "Comparison of this fork with its original run" }, hidden: true,
  });
  const el = h("div", { class: "agentcell-compare", hidden: true }, btn, panel);
  // The id ties the button to its panel; given only where the control is offered (views of other runs stay
  // identical across views: no per-view id in them).
  return { el, btn, panel, panelId: `agentcell-compare-${viewId ?? ""}`, open: false, waiting: false, shown: null };
}

/** The comparison trait as the kernel set it (an empty object for a run that is no fork shown live). */
function comparisonOf(model) {
  const c = model.get("comparison");
  return c && typeof c === "object" ? c : {};
}

/** Offered once the fork has ended; the table shown while open. */
export function renderCompare(cmp, model, ended) {
  const c = comparisonOf(model);
  const offered = Boolean(ended && c.original);
  setHidden(cmp.el, !offered);
  if (offered && !cmp.panel.id) {
    cmp.panel.id = cmp.panelId;
    cmp.btn.setAttribute("aria-controls", cmp.panelId);
  }
  const showing = cmp.open && typeof c.html === "string";
  if (showing && cmp.shown !== c.html) {
    // The kernel's table, sanitized like every HTML the view shows; its plain text where no sanitizer works.
    cmp.panel.replaceChildren(kernelHtml(c.html, c.text));
    cmp.shown = c.html;
  }
  setHidden(cmp.panel, !showing);
  setText(cmp.btn, cmp.open ? CLOSE_LABEL : OPEN_LABEL);
  setAttr(cmp.btn, "aria-label", cmp.open ? CLOSE_LABEL : OPEN_LABEL);
  setAttr(cmp.btn, "aria-expanded", showing ? "true" : "false");
  setAttr(cmp.btn, "aria-busy", cmp.open && !showing ? "true" : null);
}

/** The button's clicks and the trait's arrival; returns the function that stops listening. */
export function wireCompare(cmp, ctx) {
  const say = () => notice(ctx.parts.ex, comparisonOf(ctx.model).summary ?? "compared with the original");
  cmp.btn.addEventListener("click", () => {
    cmp.open = !cmp.open;
    if (cmp.open && typeof comparisonOf(ctx.model).html !== "string") {
      cmp.waiting = true; // said when it arrives
      ctx.send({ kind: "compare" });
    } else if (cmp.open) say();
    ctx.schedule();
  });
  const arrived = () => {
    if (cmp.waiting && typeof comparisonOf(ctx.model).html === "string") {
      cmp.waiting = false;
      if (cmp.open) say();
    }
    ctx.schedule();
  };
  ctx.model.on("change:comparison", arrived);
  return () => ctx.model.off("change:comparison", arrived);
}
