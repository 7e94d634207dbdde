// The output a live view renders into says so: `data-agentcell-view` on JupyterLab's output element
// (`.jp-OutputArea-child`). widget.css hides the saved static twin that follows such an output, and the
// twin's own CSS (src/agentcell/render/html.py) hides a widget output that has no live view ("Loading
// widget…" in a notebook opened without a kernel) only when the attribute is absent.
//
// Why an attribute and not `:has(.agentcell)`: a `:has()` whose argument is a descendant selector is
// matched by visiting the element's whole subtree, and the browser checks it again as the subtree
// changes. On the output of a streaming answer (tens of thousands of elements, new ones every frame),
// that made every frame's style recalculation grow with the answer (benchmark history §4). The attribute
// is on an ancestor and written once; the rules that read it look only at that element and at the
// next output's direct children.

export const VIEW_ATTR = "data-agentcell-view";

/** JupyterLab's (and Notebook 7's, nbconvert's) element for one output of a cell. */
const OUTPUT_SELECTOR = ".jp-OutputArea-child";

/** How often and how long to look for the output element while the view is not in the page yet. */
export const RETRY_MS = 100;
export const MAX_TRIES = 300;

/**
 * Mark the output element holding `el` once `el` is in the page (anywidget calls `render` before the
 * view is attached). Outside JupyterLab there is no such element and nothing is marked. Returns the
 * function that removes the mark (a closed view no longer hides the twin) and stops looking.
 */
export function markOutput(el, { retryMs = RETRY_MS, maxTries = MAX_TRIES, setTimer = setTimeout, clearTimer = clearTimeout } = {}) {
  let marked = null;
  let timer = null;
  let tries = 0;
  const attempt = () => {
    timer = null;
    if (el.isConnected) {
      marked = el.closest(OUTPUT_SELECTOR);
      marked?.setAttribute(VIEW_ATTR, "");
    } else if (++tries < maxTries) {
      timer = setTimer(attempt, retryMs);
    }
  };
  attempt();
  return () => {
    if (timer !== null) clearTimer(timer);
    timer = null;
    marked?.removeAttribute(VIEW_ATTR);
    marked = null;
  };
}
