// Images the model was sent (`media_added`): a thumbnail in the slot and in the tool card's round, sent once
// per image (later events find it by digest), enlarged and shrunk by a button (keyboard operable), and never
// anything but an image `data:` URI as its source.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { viewMounter } from "./helpers/mount.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "../../tests/fixtures/transcripts");
const events = JSON.parse(readFileSync(join(dir, "media.events.json"), "utf8"));

const mount = viewMounter();

describe("media in the widget", () => {
  it("shows each image's thumbnail, the first event's carried to the later ones", () => {
    const { send, $$ } = mount();
    send(events);
    const figures = $$(".agentcell-media");
    expect(figures.length).toBe(3); // the prompt's, then the tool's twice
    const thumbs = $$(".agentcell-media img");
    expect(thumbs.length).toBe(3);
    const sent = events.filter((e) => e.kind === "media_added");
    expect(sent.filter((e) => e.thumb).length).toBe(1); // the wire carried it once
    for (const img of thumbs) expect(img.getAttribute("src")).toBe(sent[0].thumb);
    expect(figures[0].textContent).toContain("a 8×4 PNG (pic) — sent with the prompt");
    expect(figures[1].textContent).toContain("sent in the tool's result");
    expect(figures[1].dataset.callId).toBe("d1");
  });

  it("enlarges in place with a button and says so", () => {
    const { send, $$ } = mount();
    send(events);
    const button = $$(".agentcell-thumb")[0];
    expect(button.tagName).toBe("BUTTON");
    expect(button.getAttribute("aria-label")).toBe("Enlarge a 8×4 PNG (pic)");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    button.click(); // Enter and Space on a focused button are clicks
    expect(button.getAttribute("aria-expanded")).toBe("true");
    expect(button.classList.contains("agentcell-thumb-open")).toBe(true);
    button.click();
    expect(button.getAttribute("aria-expanded")).toBe("false");
  });

  it("never shows a thumbnail that is not an image data URI", () => {
    const { send, $$ } = mount();
    const hostile = events.map((e) => (e.kind === "media_added" && e.thumb ? { ...e, thumb: "https://evil.example/x.png" } : e));
    send(hostile);
    expect($$(".agentcell-media").length).toBe(3);
    expect($$(".agentcell-media img").length).toBe(0);
  });
});
