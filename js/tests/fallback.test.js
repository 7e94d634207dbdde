// @vitest-environment happy-dom
// DOMPurify does not work under happy-dom (it lets handlers through). The widget must detect that
// and fail closed: Markdown shown as plain text, never as live HTML.
import { expect, it } from "vitest";
import { renderMarkdown, sanitizeToFragment, sanitizerWorks } from "../src/markdown.js";

it("fails closed when the DOM cannot be sanitized", () => {
  expect(sanitizerWorks()).toBe(false);
  const div = document.createElement("div");
  div.append(renderMarkdown('**x** <img src=x onerror="globalThis.__pwned=1"> <a href="javascript:alert(1)">y</a>'));
  expect(div.querySelector("img, a, strong")).toBeNull();
  expect(div.textContent).toContain("onerror"); // shown as text, inert
  const d2 = document.createElement("div");
  d2.append(sanitizeToFragment("<script>globalThis.__pwned=1</script>"));
  expect(d2.querySelector("script")).toBeNull();
  expect(globalThis.__pwned).toBeUndefined();
});
