// Keyboard focus across re-renders. Items are rebuilt when they change (an approval card when it is
// answered, then again when it is resolved), which would drop the focus to <body>. Elements that can
// hold focus carry `data-focus-key`; a render remembers the focused key and puts the focus back on the
// new element with the same key. A new pending approval takes the focus when the reader is not busy
// elsewhere (the focus is in the widget, on its own cell, or nowhere).

/** The element with `key` in `root`, or null. */
export function keyed(root, key) {
  for (const el of root.querySelectorAll("[data-focus-key]")) if (el.getAttribute("data-focus-key") === key) return el;
  return null;
}

/** The focus key of the focused element when it is in `root` (its own, or its nearest keyed ancestor's). */
export function focusedKey(root) {
  const active = root.ownerDocument.activeElement;
  if (!active || !root.contains(active)) return null;
  return active.closest("[data-focus-key]")?.getAttribute("data-focus-key") ?? null;
}

/** True when the focus is lost (on <body> or nowhere). */
function focusLost(doc) {
  const active = doc.activeElement;
  return !active || active === doc.body || !active.isConnected;
}

/**
 * Is the reader's focus somewhere a new approval may take it from? In the widget, on nothing, or on an
 * ancestor that holds only this widget (JupyterLab's command mode focuses the cell). Never from an
 * editor, another cell or another widget.
 */
export function focusNearby(root) {
  const doc = root.ownerDocument;
  const active = doc.activeElement;
  if (focusLost(doc) || root.contains(active)) return true;
  return active.contains(root) && active.querySelectorAll(".agentcell").length === 1;
}

/** Focus the element with `key`: when the focus was lost, or always with `force`. True when it took. */
export function placeFocus(root, key, { force = false } = {}) {
  if (!key || (!force && !focusLost(root.ownerDocument))) return false;
  const el = keyed(root, key);
  if (!el) return false;
  el.focus();
  return root.ownerDocument.activeElement === el;
}

/**
 * After a render: the focus requested by an action (`ui.focusNext`, e.g. an answered card's outcome
 * line), else a new pending approval's card when the focus is nearby, else the key that was focused
 * before the render, when the rebuild dropped it.
 */
export function settleFocus(root, ui, before, pending) {
  const next = ui.focusNext;
  ui.focusNext = null;
  if (next && placeFocus(root, next, { force: true })) return;
  const fresh = pending.filter((it) => !ui.seenApprovals.has(it.callId));
  for (const it of fresh) ui.seenApprovals.add(it.callId);
  if (fresh.length && focusNearby(root) && placeFocus(root, `approval:${fresh[0].callId}`, { force: true })) return;
  placeFocus(root, before);
}
