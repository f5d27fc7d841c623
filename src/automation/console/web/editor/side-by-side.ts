// Two texts side by side, line against line (jsdiff's line diff): removed lines on the left facing the
// lines that replaced them on the right, unchanged lines on both. Its own chunk, like the editor: only
// the diff page imports it.
import { diffLines } from "diff";

export interface Side {
  n: number;
  text: string;
}

export interface DiffRow {
  kind: "same" | "removed" | "added" | "changed";
  left?: Side;
  right?: Side;
}

const split = (value: string) => value.replace(/\n$/, "").split("\n");

export function sideBySide(a: string, b: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let l = 1;
  let r = 1;
  let removed: string[] = [];
  const flush = (added: string[]) => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      const left = i < removed.length ? { n: l++, text: removed[i] } : undefined;
      const right = i < added.length ? { n: r++, text: added[i] } : undefined;
      rows.push({ kind: left && right ? "changed" : left ? "removed" : "added", left, right });
    }
    removed = [];
  };
  for (const part of diffLines(a.endsWith("\n") ? a : `${a}\n`, b.endsWith("\n") ? b : `${b}\n`)) {
    const lines = split(part.value);
    if (part.removed) {
      removed.push(...lines);
      continue;
    }
    if (part.added) {
      flush(lines);
      continue;
    }
    flush([]);
    for (const text of lines) rows.push({ kind: "same", left: { n: l++, text }, right: { n: r++, text } });
  }
  flush([]);
  return rows;
}
