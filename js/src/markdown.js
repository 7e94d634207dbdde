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
import { Lexer, Marked, Parser } from "marked";
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
  // Parsed once: sanitize(html, cfg) would rebuild the allow-lists on every call (one per chunk).
  purifier.setConfig({ ...PURIFY_CONFIG, RETURN_DOM_FRAGMENT: true });
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
      const frag = p.sanitize(CANARY);
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

/** `text` as plain text (no working sanitizer in this DOM: fail closed). */
export function plainFragment(text) {
  const frag = document.createDocumentFragment();
  const pre = document.createElement("div");
  pre.className = "agentcell-plain";
  pre.textContent = String(text ?? "");
  frag.append(pre);
  return frag;
}

/** Remote images become links (the <img> has no src by now, so nothing was fetched). */
function linkBlockedImages(frag) {
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

/** Sanitize an HTML string into a DocumentFragment of the current document. */
export function sanitizeToFragment(html) {
  if (!sanitizerWorks()) return plainFragment(html);
  return linkBlockedImages(getPurifier().sanitize(String(html ?? "")));
}

let inertDoc = null;

/** The document of <template> contents: no browsing context, so parsing there runs no script and loads nothing. */
function inertDocument() {
  inertDoc ??= document.createElement("template").content.ownerDocument;
  return inertDoc;
}

/**
 * Several HTML strings sanitized in one sanitizer pass: one `<div>` each, in order. DOMPurify parses
 * every string input into a new document (`DOMParser`), about a millisecond per call; a frame that
 * commits several blocks of a streamed answer paid that per block. Here each string is parsed on its
 * own (its own `<div>`'s `innerHTML`, in the inert document of <template> contents, so no string can
 * close or re-open another's elements) and the container of all of them is sanitized once as a node.
 * Null when the sanitizer does not work in this DOM (callers then show plain text).
 */
export function sanitizeEach(htmls) {
  if (!sanitizerWorks()) return null;
  const doc = inertDocument();
  const box = doc.createElement("div");
  for (const html of htmls) {
    const part = doc.createElement("div");
    part.innerHTML = String(html ?? "");
    box.append(part);
  }
  const clean = linkBlockedImages(getPurifier().sanitize(box)).firstElementChild;
  const parts = clean ? [...clean.children] : [];
  // Every part is a plain <div> the sanitizer keeps; anything else means the structure was not kept.
  if (parts.length !== htmls.length || parts.some((el) => el.nodeName !== "DIV")) return htmls.map((h) => sanitizeToFragment(h));
  return parts.map((el) => {
    const frag = document.createDocumentFragment();
    frag.append(...el.childNodes);
    return frag;
  });
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
 * rest is re-rendered per frame.
 */
export function stablePrefixLength(text) {
  return completeBlocks(text, false).reduce((n, raw) => n + raw.length, 0);
}

/**
 * The top-level blocks of `src` that more text cannot change, as raw source pieces (each with the
 * blank lines after it). With `final`, every block. A CommonMark block, once the next block has
 * started, cannot be re-opened, so the pieces render alone to what they render to in the whole text —
 * except for link references (handled by `lexMarkdown`'s `links`) and raw HTML left open (see
 * `htmlDepth`). Block lexing only (no inline pass): this runs on the open tail every frame.
 */
export function completeBlocks(src, final) {
  const end = final ? src.length : src.lastIndexOf("\n") + 1;
  if (end === 0) return [];
  const complete = src.slice(0, end);
  let tokens;
  try {
    tokens = new Lexer(marked.defaults).blockTokens(complete, []);
  } catch {
    return [];
  }
  let k = tokens.length;
  if (!final) {
    k -= 1;
    while (k >= 0 && tokens[k].type === "space") k--;
  }
  const pieces = [];
  for (let i = 0; i < k; i++) {
    if (tokens[i].type === "space" && pieces.length > 0) pieces[pieces.length - 1] += tokens[i].raw;
    else pieces.push(tokens[i].raw);
  }
  // The lexer's raw pieces concatenate to its input; if that ever fails, do not split.
  const joined = pieces.join("");
  if (!complete.startsWith(joined)) return final ? [src] : [];
  if (final && joined.length < src.length) pieces.push(src.slice(joined.length));
  return pieces.filter((p) => p.length > 0);
}

/**
 * Lex `src` knowing the link definitions `links` (lowercased label → {href, title}) from the rest of
 * the text, as one pass over the whole text would (the first definition of a label wins).
 * `tokens.links` then holds those plus `src`'s own.
 */
export function lexMarkdown(src, links) {
  const lexer = new Lexer(marked.defaults);
  Object.assign(lexer.tokens.links, links);
  try {
    return lexer.lex(src);
  } catch (err) {
    console.warn("[agentcell] markdown failed", err);
    return Object.assign([{ type: "code", raw: src, text: src, codeBlockStyle: "indented" }], { links: lexer.tokens.links });
  }
}

/** marked tokens → HTML (not yet sanitized). */
export function tokensToHtml(tokens) {
  try {
    return new Parser(marked.defaults).parse(tokens);
  } catch (err) {
    console.warn("[agentcell] markdown failed", err);
    const div = document.createElement("div");
    div.textContent = tokens.map((t) => t.raw).join("");
    return `<pre>${div.innerHTML}</pre>`;
  }
}

/** Markdown source already lexed and rendered to HTML → sanitized fragment (plain text if no sanitizer). */
export function htmlToFragment(html, src) {
  return sanitizerWorks() ? sanitizeToFragment(html) : plainFragment(src);
}

const VOID_TAGS = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"]);
const TAG = /<(\/?)([a-z][a-z0-9-]*)\b[^>]*>/gi;

/**
 * Raw HTML elements left open by these tokens, added to `depth` (tag → count). An element a block
 * opens and does not close (`<div>`, `<b>`, `<script>`) changes how the HTML parser reads every block
 * after it, so such a block is rendered together with the blocks up to the one that closes it.
 * Conservative on purpose: a tag name that does not balance keeps the rest in one piece.
 */
export function htmlDepth(tokens, depth) {
  marked.walkTokens(tokens, (token) => {
    if (token.type !== "html") return;
    for (const m of String(token.raw).replace(/<!--[\s\S]*?-->/g, "").matchAll(TAG)) {
      const tag = m[2].toLowerCase();
      if (VOID_TAGS.has(tag)) continue;
      const n = (depth.get(tag) ?? 0) + (m[1] ? -1 : 1);
      if (n > 0) depth.set(tag, n);
      else depth.delete(tag); // a stray end tag is ignored by the HTML parser
    }
  });
  return depth;
}

/**
 * A block's text in the form marked looks link labels up by (whitespace collapsed, case folded the way
 * marked folds it; final sigma folded too, since lower-casing it depends on context): a reference in the
 * block to the definition with key `k` implies `refKey(block).includes(refKey(k))`.
 */
export function refKey(text) {
  return text.replace(/\s+/g, " ").toLowerCase().toUpperCase().toLowerCase().replace(/\u03c2/g, "\u03c3");
}

/** A short answer made of what answers are made of: heading, emphasis, code, a link, a list, a fence, a table, a quote. */
const WARM_SAMPLE =
  "## Warm-up\n\nA paragraph with *emphasis*, **bold**, `code` and a [link](https://example.org/ \"t\").\n\n" +
  "- one\n- two with [a ref][r]\n\n1. first\n2. second\n\n```python\ndef f(x):\n    return x\n```\n\n" +
  "| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted ~~text~~ <https://example.org>\n\n[r]: https://example.org/r\n";

let warmed = null;

/**
 * Run each of marked's regular expressions of one grammar on the sample, twice: V8 compiles a regular
 * expression on its first run and to native code on the next. Those of the GFM grammar were ~30 ms of
 * the cold start (the longest: 1,300 characters of pattern); compiled here, a piece at a time, not in
 * the first render. `lastIndex` is put back (marked relies on it for its global ones).
 */
function compileRules(rules) {
  for (const re of Object.values(rules ?? {})) {
    if (!(re instanceof RegExp)) continue;
    const at = re.lastIndex;
    re.exec(WARM_SAMPLE);
    re.exec(WARM_SAMPLE);
    re.lastIndex = at;
  }
}

/**
 * The Markdown path run once on a small sample, one step per call, so the first real render does not pay
 * for a cold start. Cold, V8 compiles each function and each of marked's regular expressions on first use
 * and DOMPurify sets itself up: in Chromium the first render of 6,000 characters of streamed Markdown took
 * 134 ms, the next ones 26–38 ms (benchmark history §4). widget.js runs the steps in tasks of their own while
 * the view loads. Each step is a piece of the work `AnswerView.step` does; the results are dropped.
 */
export const warmUpSteps = [
  () => sanitizerWorks(),
  () => compileRules(Lexer.rules.block.gfm),
  () => compileRules(Lexer.rules.inline.gfm),
  () => completeBlocks(WARM_SAMPLE, false),
  () => (warmed = lexMarkdown(WARM_SAMPLE, Object.create(null))),
  () => sanitizeEach([tokensToHtml(warmed ?? lexMarkdown(WARM_SAMPLE, Object.create(null)))]),
];
