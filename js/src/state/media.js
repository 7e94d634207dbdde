// `media_added`: an image (document, audio) the model was sent, with a slot's prompt or in a tool's result.
// The thumbnail (a `data:` URI) comes with the first event of its image only; later ones find it by digest.
// Twin of `media_added` in src/agentcell/transcript/handlers.py.
import { addItem, evRound, getSlot } from "./core.js";

const str = (x) => (x === undefined || x === null ? "" : String(x));

export const MEDIA_HANDLERS = {
  media_added(state, ev) {
    const ref = ev.media && typeof ev.media === "object" ? ev.media : {};
    const digest = str(ref.digest);
    if (typeof ev.thumb === "string" && ev.thumb.startsWith("data:image/")) state.thumbs.set(digest, ev.thumb);
    const slot = getSlot(state, ev.slot);
    const item = {
      type: "media",
      v: 0,
      callId: ev.call_id,
      digest,
      media_kind: str(ref.media_kind),
      media_type: str(ref.media_type),
      width: ref.width,
      height: ref.height,
      name: str(ref.name),
      label: str(ev.label),
      thumb: state.thumbs.get(digest) ?? "",
    };
    addItem(state, ev.slot, item, evRound(slot, ev.round));
  },
};
