// Decodes raw terminal input (raw mode) into key names for the state core.
import type { Key } from "./state.ts";

const SEQUENCES: Record<string, Key> = {
  "\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left",
  "\x1bOA": "up", "\x1bOB": "down", "\x1bOC": "right", "\x1bOD": "left",
  "\x1b[5~": "pgup", "\x1b[6~": "pgdn",
  "\x1b[H": "home", "\x1b[F": "end", "\x1bOH": "home", "\x1bOF": "end",
  "\x1b[1~": "home", "\x1b[4~": "end", "\x1b[7~": "home", "\x1b[8~": "end",
  "\x1b[Z": "backtab",
};

const isFinal = (code: number) => code >= 0x40 && code <= 0x7e;

/**
 * Splits input into keys. An escape sequence cut off at the end of the chunk (over a slow link an
 * arrow key can arrive as "\x1b" then "[A") is returned as `rest`, to be prefixed to the next chunk;
 * with `final` (no more input came soon) a lone ESC is the Esc key.
 */
export function decodeKeys(input: string, final = false): { keys: Key[]; rest: string } {
  const keys: Key[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch === "\x1b") {
      const next = input[i + 1];
      if (next === undefined) {
        if (!final) return { keys, rest: input.slice(i) };
        keys.push("esc");
        i++;
        continue;
      }
      if (next === "[" || next === "O") {
        let j = i + 2;
        // CSI parameters end at a final byte in 0x40..0x7e; SS3 is one byte.
        while (j < input.length && !isFinal(input.charCodeAt(j))) j++;
        if (j >= input.length && !final) return { keys, rest: input.slice(i) };
        keys.push(SEQUENCES[input.slice(i, j + 1)] ?? "unknown");
        i = j + 1;
        continue;
      }
      keys.push("esc");
      i++;
      continue;
    }
    i++;
    if (ch === "\r" || ch === "\n") keys.push("enter");
    else if (ch === "\t") keys.push("tab");
    else if (ch === "\x03") keys.push("ctrl-c");
    else if (ch === "\x7f" || ch === "\b") keys.push("backspace");
    else if (ch.charCodeAt(0) >= 0x20) keys.push(ch);
  }
  return { keys, rest: "" };
}
