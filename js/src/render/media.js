// A `media` item: the thumbnail of an image the model was sent (with the prompt, or in a tool's result),
// as a button that enlarges it in place and shrinks it back (Enter / Space, like any button). Documents,
// audio and images without a thumbnail show their label. The thumbnail is a `data:` URI the kernel made
// (never a URL the browser would fetch); anything else is dropped (`safeThumb`).
import { h } from "./dom.js";

const THUMB = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/;

/** `uri` when it is a thumbnail a view may show: an image `data:` URI and nothing else (never a URL to fetch). */
export function safeThumb(uri) {
  return typeof uri === "string" && THUMB.test(uri) ? uri : "";
}

function toggle(e) {
  const button = e.currentTarget;
  const open = button.getAttribute("aria-expanded") !== "true";
  button.setAttribute("aria-expanded", String(open));
  button.classList.toggle("agentcell-thumb-open", open);
}

export function renderMedia(item) {
  const where = item.callId != null ? "in the tool's result" : "with the prompt";
  const name = item.name ? ` (${item.name})` : "";
  const text = `${item.label || item.media_kind || "media"}${name}`;
  const thumb = safeThumb(item.thumb);
  const picture = thumb
    ? h(
        "button",
        { type: "button", class: "agentcell-thumb", aria: { expanded: "false", label: `Enlarge ${text}` }, title: "click to enlarge", on: { click: toggle } },
        h("img", { src: thumb, alt: text, class: "agentcell-thumb-img" }),
      )
    : null;
  return h(
    "figure",
    { class: "agentcell-item agentcell-media", data: { part: "media", "call-id": item.callId, digest: item.digest, round: item.round } },
    picture,
    h("figcaption", { class: "agentcell-media-caption" }, `${text} — sent ${where}`),
  );
}
