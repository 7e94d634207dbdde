// HTML the kernel rendered (a fork's comparison: render/diff.py's table), shown the way every HTML the view
// shows is: sanitized (markdown.js's sanitizer: no script, no handler, no inline style), or as its plain text
// where no sanitizer works in this DOM.
import { plainFragment, sanitizerWorks, sanitizeToFragment } from "../markdown.js";

/** A fragment of `html`, sanitized; `text` as plain text when this DOM has no working sanitizer. */
export function kernelHtml(html, text) {
  return sanitizerWorks() ? sanitizeToFragment(html) : plainFragment(text ?? "");
}
