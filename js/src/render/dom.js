// DOM building without innerHTML: every string becomes a text node.

/**
 * h("div", {class: "x", data: {slot: "a"}, aria: {label: "..."}, title: "..."}, child, "text", [more])
 * Attribute values are set with setAttribute (never parsed as HTML); children that are strings or
 * numbers become text nodes; null/undefined/false children are skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = Array.isArray(v) ? v.filter(Boolean).join(" ") : v;
      else if (k === "data") for (const [dk, dv] of Object.entries(v)) dv != null && el.setAttribute(`data-${dk}`, String(dv));
      else if (k === "aria") for (const [ak, av] of Object.entries(v)) av != null && el.setAttribute(`aria-${ak}`, String(av));
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      else if (k === "text") el.textContent = String(v);
      else if (k === "open" || k === "disabled" || k === "hidden") el[k] = !!v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (typeof c === "string" || typeof c === "number") el.append(document.createTextNode(String(c)));
    else el.append(c);
  }
}

export function setText(el, text) {
  const s = String(text ?? "");
  if (el.textContent !== s) el.textContent = s;
}

export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else {
    const s = value === true ? "" : String(value);
    if (el.getAttribute(name) !== s) el.setAttribute(name, s);
  }
}

/**
 * Show or hide `el`, touching the attribute only when that changes: setting `hidden` to the value it
 * has is still an attribute change to the browser (style invalidation on every render of a frame).
 */
export function setHidden(el, hidden) {
  if (el.hidden !== Boolean(hidden)) el.hidden = Boolean(hidden);
}

/** Replace `old` with `next`, carrying over which <details data-part=…> were open. */
export function swap(old, next) {
  if (!old) return next;
  const openParts = new Map();
  for (const d of old.querySelectorAll("details[data-part]")) openParts.set(d.getAttribute("data-part"), d.open);
  if (old.matches?.("details[data-part]")) openParts.set(old.getAttribute("data-part"), old.open);
  const apply = (d) => {
    const k = d.getAttribute("data-part");
    if (openParts.has(k)) d.open = openParts.get(k);
  };
  for (const d of next.querySelectorAll("details[data-part]")) apply(d);
  if (next.matches?.("details[data-part]")) apply(next);
  old.replaceWith(next);
  return next;
}

/** Make `parent`'s children exactly `els`, in order, touching only what moved. */
export function syncChildren(parent, els) {
  let cur = parent.firstChild;
  for (const el of els) {
    if (cur === el) {
      cur = cur.nextSibling;
    } else {
      parent.insertBefore(el, cur);
    }
  }
  while (cur) {
    const next = cur.nextSibling;
    cur.remove();
    cur = next;
  }
}

/**
 * A <pre> of `text` (CSS caps it at 24em and scrolls it). One long enough to scroll is focusable, so a
 * keyboard can scroll it too (WCAG 2.1.1; axe's scrollable-region-focusable).
 */
export function preBlock(cls, text) {
  const s = String(text ?? "");
  const rows = s.split("\n").reduce((n, line) => n + 1 + Math.floor(line.length / 100), 0);
  return h("pre", { class: cls, tabindex: rows > 14 ? "0" : null }, s);
}
