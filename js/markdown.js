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
let purifierOk = null;

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
    } else if (tag === "PRE") {
      node.setAttribute("tabindex", "0"); // a code block may scroll sideways: the keyboard must reach it
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

const CANARY = '<p>ok<img src="x" onerror="x"><a href="javascript:x">l</a></p><script>x</script><svg onload="x"></svg>';

/**
 * Does the sanitizer really sanitize in this DOM? (It does in browsers and jsdom; in DOMs it does not
 * support, such as happy-dom, it silently lets handlers through.) If not, we fail closed: plain text.
 */
export function sanitizerWorks() {
  if (purifierOk !== null) return purifierOk;
  purifierOk = false;
  try {
    const p = getPurifier();
    if (p.isSupported) {
      const frag = p.sanitize(CANARY, { ...PURIFY_CONFIG, RETURN_DOM_FRAGMENT: true });
      const div = document.createElement("div");
      div.append(frag);
      purifierOk =
        div.querySelector("p") !== null &&
        div.querySelector("script, svg, [onerror], [onload]") === null &&
        div.querySelector("a[href]") === null &&
        !/onerror|javascript:/i.test(div.innerHTML);
    }
  } catch {
    purifierOk = false;
  }
  if (!purifierOk) console.warn("[agentcell] HTML sanitizer unavailable in this DOM: showing Markdown as plain text");
  return purifierOk;
}

function plainFragment(text) {
  const frag = document.createDocumentFragment();
  const pre = document.createElement("div");
  pre.className = "agentcell-plain";
  pre.textContent = String(text ?? "");
  frag.append(pre);
  return frag;
}

/** Sanitize an HTML string into a DocumentFragment of the current document. */
export function sanitizeToFragment(html) {
  if (!sanitizerWorks()) return plainFragment(html);
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
  if (!sanitizerWorks()) return plainFragment(text);
  return sanitizeToFragment(markdownToHtml(text));
}

/**
 * How much of streaming Markdown is complete blocks that more text cannot change: the top-level blocks
 * (marked's lexer) before the last one, counting only complete lines (a partial line such as "-" or "`"
 * could still turn into something that joins the block above). That prefix is rendered once; only the
 * rest is re-rendered per frame. (Reference-style link definitions that arrive later are picked up by
 * the single full render when the answer is final.)
 */
export function stablePrefixLength(text) {
  const end = text.lastIndexOf("\n") + 1;
  if (end === 0) return 0;
  const complete = text.slice(0, end);
  let tokens;
  try {
    tokens = marked.lexer(complete);
  } catch {
    return 0;
  }
  let k = tokens.length - 1;
  while (k >= 0 && tokens[k].type === "space") k--;
  if (k <= 0) return 0;
  let n = 0;
  for (let i = 0; i < k; i++) n += tokens[i].raw.length;
  // The lexer's raw pieces concatenate to its input; if that ever fails, do not split.
  return complete.startsWith(tokens.slice(0, k).map((t) => t.raw).join("")) ? n : 0;
}
