// The host page's dark theme, where the host does not say it with JupyterLab's or VS Code's variables.
//
// marimo marks its dark theme with a `dark` (or `dark-theme`) class on <html> or <body> and defines its
// palette as CSS variables (`--background`, `--foreground`, `--muted-foreground`, `--border`…), which
// widget.css reads after JupyterLab's and VS Code's. What variables cannot do is pick the accent *text*
// colours that keep 4.5:1 on a dark background: `data-host-theme="dark"` on the widget selects those. The
// view may live in a shadow root (marimo renders widgets in one), so the class is looked up on the page's
// own <html> and <body>, and watched there: marimo switches theme without reloading.
import { setAttr } from "../render/dom.js";

const DARK_CLASSES = ["dark", "dark-theme"];

function marked(el) {
  return !!el && (DARK_CLASSES.some((c) => el.classList?.contains(c)) || el.getAttribute?.("data-theme") === "dark");
}

/** Whether the page around `root` says it is dark (marimo's way). */
export function hostIsDark(root) {
  const doc = root.ownerDocument;
  return marked(doc?.documentElement) || marked(doc?.body) || !!root.closest?.(".dark, .dark-theme");
}

/** Keep `data-host-theme` on `root` in step with the page; returns the function that stops watching. */
export function watchHostTheme(root) {
  const apply = () => setAttr(root, "data-host-theme", hostIsDark(root) ? "dark" : null);
  apply();
  const doc = root.ownerDocument;
  if (typeof MutationObserver !== "function" || !doc) return () => {};
  const observer = new MutationObserver(apply);
  for (const el of [doc.documentElement, doc.body]) {
    if (el) observer.observe(el, { attributes: true, attributeFilter: ["class", "data-theme"] });
  }
  return () => observer.disconnect();
}
