// Line building for the view: styled segments clipped and padded to an exact display width, so
// every frame line fits the terminal whatever the content (and styles never get cut in half).

export type Style = (s: string) => string;

export interface Seg {
  t: string;
  s?: Style;
}

export const seg = (t: string, s?: Style): Seg => ({ t, s });

export function width(text: string): number {
  return Bun.stringWidth(text);
}

/** Cuts `text` to at most `max` display cells (ending with "…" when something was cut and room allows). */
export function clipText(text: string, max: number): string {
  if (max <= 0) return "";
  if (width(text) <= max) return text;
  let out = "";
  let used = 0;
  for (const ch of text) {
    const w = width(ch);
    if (used + w > max - 1) break;
    out += ch;
    used += w;
  }
  return out + "…";
}

/** Joins segments into one line of exactly `cols` cells (clipped, then padded with spaces). */
export function line(segs: Seg[], cols: number): string {
  let out = "";
  let used = 0;
  for (const { t, s } of segs) {
    if (used >= cols) break;
    const text = used + width(t) > cols ? clipText(t, cols - used) : t;
    if (!text) continue;
    used += width(text);
    out += s ? s(text) : text;
  }
  return out + " ".repeat(Math.max(0, cols - used));
}

/** `left` at the start, `right` at the end, filled between with `fill`. Right side wins room last. */
export function spread(left: Seg[], right: Seg[], cols: number, fill = " ", fillStyle?: Style): string {
  const rw = right.reduce((n, x) => n + width(x.t), 0);
  const lw = left.reduce((n, x) => n + width(x.t), 0);
  if (lw + rw + 1 > cols) return line([...left, seg(" "), ...right], cols);
  return line([...left, seg(fill.repeat(cols - lw - rw), fillStyle), ...right], cols);
}

/** Pads/clips plain text to exactly `n` cells. */
export function fixed(text: string, n: number, alignRight = false): string {
  const t = clipText(text, n);
  const pad = " ".repeat(Math.max(0, n - width(t)));
  return alignRight ? pad + t : t + pad;
}
