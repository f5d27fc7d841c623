// Terminal escape sequences and frame diffing: only lines that changed since the last frame are
// written (cursor moved to the line, the full-width line written); the screen is never cleared. No
// erase-to-end-of-line either: after a full-width line the cursor sits on the last column, where EL
// would erase the line's last character.

export const ENTER = "\x1b[?1049h\x1b[?25l\x1b[?7l\x1b[H";
/** Leaves the alternate screen with autowrap on, the cursor visible and attributes reset. */
export const LEAVE = "\x1b[0m\x1b[?7h\x1b[?25h\x1b[?1049l";

/** OSC 52: asks the terminal (also over SSH and through tmux) to put `text` on the clipboard. */
export function osc52(text: string): string {
  return `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`;
}

/**
 * The bytes turning frame `prev` into frame `next` on screen; `prev` null means the screen content is
 * unknown (first frame, after a resize) and every line is written. Frames are as tall as the terminal
 * and every line is padded to its width, so rewriting all lines repaints every cell.
 */
export function diffFrame(prev: string[] | null, next: string[]): string {
  let out = "";
  for (let i = 0; i < next.length; i++) {
    if (prev && prev[i] === next[i]) continue;
    out += `\x1b[${i + 1};1H${next[i]}\x1b[0m`;
  }
  return out;
}
