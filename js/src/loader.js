// The module anywidget imports (the `_esm` of AgentWidget and BatchWidget), built by js/build.mjs
// around the real entry (js/src/widget.js or js/src/batch.js), whose bundle it holds as a string.
//
// Why: anywidget imports `_esm` inside the websocket message that creates the widget's model, and
// importing the whole 165 KB bundle there took 11.0 ms of that task in Chromium (median of 25 imports,
// against 4.2 ms for a one-line module), a task JupyterLab's own work already brings near 50 ms
// (benchmark history §4, session 14). Held as a string it takes 6.5 ms there; it is compiled when the first
// view renders, in a task of its own, and once per page: every widget of the same build shares it.
//
// The stylesheet stays anywidget's `_css`. Inserted by this module it would leave that task too (in a
// JupyterLab page the 18 KB sheet and the layout it forces took 5.0 ms against 2.3 for a one-rule sheet),
// but marimo renders the widget in a shadow root and adopts `_css` into it: a sheet put in the
// document's head would not style the view there.

/** Imported bundles of this page, by build key: one compile for all the widgets of a notebook. */
const MODULES = (globalThis[Symbol.for("agentcell.modules")] ??= new Map());

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A URL the browser imports `code` from: a Blob where there is one, else a data: URL (Node). */
export function codeURL(code) {
  if (typeof Blob === "function" && typeof URL.createObjectURL === "function") {
    return URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  }
  return `data:text/javascript;charset=utf-8,${encodeURIComponent(code)}`;
}

/**
 * The module of `code`, imported in a new task, once per `key`; a failed import is forgotten, so the
 * next view tries again.
 */
export function importCode(code, key, { toURL = codeURL } = {}) {
  let mod = MODULES.get(key);
  if (mod) return mod;
  mod = nextTask().then(async () => {
    const url = toURL(code);
    try {
      return await import(/* @vite-ignore */ url);
    } finally {
      if (url.startsWith("blob:")) URL.revokeObjectURL(url);
    }
  });
  MODULES.set(key, mod);
  mod.catch(() => MODULES.delete(key));
  return mod;
}

/** The loader's anywidget entry for a bundle: `render` waits for the bundle, then hands over to it. */
export function entry(code, key) {
  return {
    async render(props) {
      const mod = await importCode(code, key);
      return mod.default.render(props);
    },
  };
}
