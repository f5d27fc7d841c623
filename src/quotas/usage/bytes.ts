// Byte-level helpers for reading JSON Lines without building a JS object per line. A key pattern with
// its quotes (`"usage":{`) can only match a real key: inside a JSON string every quote is escaped.

const enc = new TextEncoder();
export const pat = (s: string) => Buffer.from(enc.encode(s));

/** The non-negative integer right after `key` (e.g. `"input_tokens":`) in `line`, searched from `from`; -1 when absent. */
export function intAfter(line: Buffer, key: Buffer, from = 0): number {
  const at = line.indexOf(key, from);
  if (at === -1) return -1;
  const buf = line;
  let i = at + key.length;
  while (buf[i] === 32) i++;
  let n = 0;
  let digits = 0;
  for (let c = buf[i]; c >= 48 && c <= 57; c = buf[++i]) {
    n = n * 10 + (c - 48);
    digits++;
  }
  return digits ? n : -1;
}

/** End (exclusive) of the JSON string whose first character is at `start`; -1 when it does not end before `to`. */
export function stringEnd(buf: Buffer, start: number, to: number): number {
  for (let i = start; i < to; i++) {
    const c = buf[i];
    if (c === 34) return i;
    if (c === 92) i++;
  }
  return -1;
}

/** Index of the `}` closing the object whose `{` is at `open`; strings are skipped. -1 if unclosed. */
export function objectEnd(buf: Buffer, open: number, to: number): number {
  let depth = 0;
  for (let i = open; i < to; i++) {
    const c = buf[i];
    if (c === 34) {
      i = stringEnd(buf, i + 1, to);
      if (i === -1) return -1;
    } else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return i;
  }
  return -1;
}

const DAYS_BEFORE_MONTH = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/** Epoch ms of an ISO-8601 timestamp at buf[i] (`2025-10-12T08:31:02.123Z`, offsets allowed); NaN if not one. */
export function isoMs(buf: Buffer, i: number): number {
  const d = (k: number) => buf[i + k] - 48;
  if (buf[i + 4] !== 45 || buf[i + 7] !== 45 || buf[i + 10] !== 84 || buf[i + 13] !== 58) return Number.NaN;
  const y = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3);
  const mo = d(5) * 10 + d(6);
  const day = d(8) * 10 + d(9);
  const h = d(11) * 10 + d(12);
  const mi = d(14) * 10 + d(15);
  const s = buf[i + 16] === 58 ? d(17) * 10 + d(18) : 0;
  if (!(mo >= 1 && mo <= 12 && day >= 1 && day <= 31 && h <= 23 && mi <= 59 && s <= 60)) return Number.NaN;
  let j = buf[i + 16] === 58 ? i + 19 : i + 16;
  let ms = 0;
  if (buf[j] === 46) {
    let scale = 100;
    for (j++; buf[j] >= 48 && buf[j] <= 57; j++) {
      ms += (buf[j] - 48) * scale;
      scale /= 10;
    }
  }
  let offset = 0;
  const z = buf[j];
  if (z === 43 || z === 45) {
    const oh = (buf[j + 1] - 48) * 10 + (buf[j + 2] - 48);
    const om = buf[j + 3] === 58 ? (buf[j + 4] - 48) * 10 + (buf[j + 5] - 48) : (buf[j + 3] - 48) * 10 + (buf[j + 4] - 48);
    offset = (z === 43 ? 1 : -1) * (oh * 60 + om) * 60_000;
  } else if (z !== 90) return Number.NaN;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const yy = y - 1970;
  const days = yy * 365 + Math.floor((y - 1969) / 4) - Math.floor((y - 1901) / 100) + Math.floor((y - 1601) / 400) + DAYS_BEFORE_MONTH[mo - 1] + (leap && mo > 2 ? 1 : 0) + day - 1;
  return days * 86_400_000 + h * 3_600_000 + mi * 60_000 + s * 1000 + Math.round(ms) - offset;
}
