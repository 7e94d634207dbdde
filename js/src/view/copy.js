// Every item's Copy button (render/copy.js) is handled here, by one listener on the widget: the text goes
// to the clipboard (or, where the Clipboard API is refused, through a hidden textarea) and the widget's
// notice — its one polite live region — says what was copied, once per click.
import { COPY_ITEM, copyText } from "../render/copy.js";
import { legacyCopy, notice } from "./export.js";

async function copyItem(ctx, btn) {
  const text = copyText(btn);
  const what = btn.dataset.copy || "text";
  if (text === null) {
    notice(ctx.parts.ex, `nothing to copy yet: ${what}`);
    return;
  }
  try {
    await navigator.clipboard.writeText(text);
    notice(ctx.parts.ex, `copied: ${what}`);
  } catch {
    notice(ctx.parts.ex, legacyCopy(ctx.root, text) ? `copied: ${what}` : `copy failed: select the ${what} and press Ctrl+C`);
  }
}

/** Listen for clicks on item Copy buttons (Enter and Space on a focused button are clicks); returns the unlisten. */
export function wireCopy(ctx) {
  const onClick = (e) => {
    const btn = e.target?.closest?.(`.${COPY_ITEM}`);
    if (!btn || !ctx.root.contains(btn)) return;
    e.preventDefault();
    void copyItem(ctx, btn);
  };
  ctx.root.addEventListener("click", onClick);
  return () => ctx.root.removeEventListener("click", onClick);
}
