// One `Range: bytes=...` header against a size (RFC 9110 §14). Several ranges or a syntactically bad
// header are ignored (the whole body is sent, as the RFC allows); a range past the end is unsatisfiable.
export type RangeResult = { start: number; end: number } | "unsatisfiable" | null;

export function parseRange(header: string | null, size: number): RangeResult {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1].length > 15 || m[2].length > 15) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (end < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end: Math.min(end, size - 1) };
}
