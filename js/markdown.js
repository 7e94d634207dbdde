// Untrusted Markdown -> sanitized DOM.
//
// marked renders Markdown (GFM) to an HTML string; DOMPurify parses that string in an inert
// document, removes everything not allow-listed, and returns a DocumentFragment that is inserted
// as-is (no second parse, so no mutation-XSS window). On top of DOMPurify's defaults:
// - no script/style/iframe/object/embed/form/controls/meta/link/base/svg/math/media elements;
// - no `style`, `srcset`, `action`, `formaction`, `background`, `ping`, `data-*` attributes;
// - links: only http(s), mailto and #anchors keep their href; all get target=_blank and
//   rel="noopener noreferrer";
// - images: only inline raster data: URLs load. A remote image would fetch a URL the model chose
//   (a way to leak data after a prompt injection), so it becomes a plain link instead.
// - id/name are prefixed (DOM clobbering of the host page).
import { Marked } from "marked";
import DOMPurify from "dompurify";

const SAFE_HREF = /^(?:https?:|mailto:|#)/i;
const SAFE_IMG = /^data:image\/(?:png|gif|jpe?g|webp|avif);base64,[a-z0-9+/=\s]*$/i;

export const PURIFY_CONFIG = Object.freeze({
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "input",
    "button", "textarea", "select", "option", "meta", "link", "base", "svg", "math", "template",
    "video", "audio", "source", "track", "dialog", "noscript", "portal", "canvas", "picture",
  ],
  FORBID_ATTR: ["style", "srcset", "action", "formaction", "background", "ping", "poster", "xlink:href"],
  ALLOW_DATA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  SANITIZE_NAMED_PROPS: true,
  WHOLE_DOCUMENT: false,
});

const BLOCKED_IMG = "data-agentcell-blocked-src";
let purifier = null;

function getPurifier() {
  if (purifier) return purifier;
  purifier = DOMPurify(globalThis.window);
  purifier.addHook("afterSanitizeAttributes", (node) => {
    const tag = node.nodeName;
    if (tag === "A" || tag === "AREA") {
      const href = node.getAttribute("href");
      if (href !== null && !SAFE_HREF.test(href.trim())) node.removeAttribute("href");
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    } else if (tag === "IMG") {
      const src = (node.getAttribute("src") ?? "").trim();
      if (!SAFE_IMG.test(src)) {
        node.removeAttribute("src");
        if (/^https?:/i.test(src)) node.setAttribute(BLOCKED_IMG, src);
      }
    }
  });
  return purifier;
}

/** Sanitize an HTML string into a DocumentFragment of the current document. */
export function sanitizeToFragment(html) {
  const frag = getPurifier().sanitize(String(html ?? ""), { ...PURIFY_CONFIG, RETURN_DOM_FRAGMENT: true });
  // Remote images become links (the <img> has no src by now, so nothing was fetched).
  for (const img of frag.querySelectorAll(`img[${BLOCKED_IMG}]`)) {
    const a = document.createElement("a");
    a.href = img.getAttribute(BLOCKED_IMG);
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.className = "agentcell-img-link";
    a.textContent = `[image${img.alt ? `: ${img.alt}` : ""}]`;
    img.replaceWith(a);
  }
  return frag;
}

/** Sanitize to an HTML string (tests, export). */
export function sanitizeHtml(html) {
  const div = document.createElement("div");
  div.append(sanitizeToFragment(html));
  return div.innerHTML;
}

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  renderer: {
    // GFM task lists without <input> elements (forms are not allowed).
    checkbox({ checked }) {
      return checked ? "\u2611 " : "\u2610 ";
    },
  },
});

export function markdownToHtml(text) {
  try {
    return marked.parse(String(text ?? ""));
  } catch (err) {
    console.warn("[agentcell] markdown failed", err);
    const div = document.createElement("div");
    div.textContent = String(text ?? "");
    return `<pre>${div.innerHTML}</pre>`;
  }
}

/** Markdown -> sanitized DocumentFragment. */
export function renderMarkdown(text) {
  return sanitizeToFragment(markdownToHtml(text));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Where the "stable" part of streaming Markdown ends: just after the last blank line that is outside a
 * code fence and followed by an unindented line. Text before it is complete blocks that will not change
 * as more tokens arrive, so it can be rendered once; only the tail is re-rendered per frame.
 */
export function splitStable(text) {
  let inFence = null;
  let stable = 0;
  let pos = 0;
  let prevBlank = false;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end === -1) break; // the last (incomplete) line never counts
    const line = text.slice(pos, end);
    const m = FENCE.exec(line);
    if (inFence) {
      if (m && m[1][0] === inFence[0] && m[1].length >= inFence.length && line.trim() === m[1]) inFence = null;
    } else if (m) {
      if (prevBlank) stable = pos;
      inFence = m[1];
    } else if (line.trim() === "") {
      prevBlank = true;
      pos = end + 1;
      continue;
    } else if (prevBlank && !/^\s/.test(line)) {
      stable = pos;
    }
    prevBlank = false;
    pos = end + 1;
  }
  return stable;
}
