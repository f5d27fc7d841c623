// JSON Pointers (RFC 6901) over task data: the addresses of reviewable fields.

const unescape = (s: string) => s.replace(/~1/g, "/").replace(/~0/g, "~");
const escape = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** Segments of a pointer; null when it is not a pointer (`""` is the whole document). */
export function segments(pointer: string): string[] | null {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return null;
  return pointer.slice(1).split("/").map(unescape);
}

export const isScalar = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** The value at `pointer`, or `{found: false}`. */
export function lookup(data: unknown, pointer: string): { found: true; value: unknown } | { found: false } {
  const segs = segments(pointer);
  if (!segs) return { found: false };
  let cur: unknown = data;
  for (const s of segs) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9]\d*)$/.test(s) || Number(s) >= cur.length) return { found: false };
      cur = cur[Number(s)];
    } else if (cur !== null && typeof cur === "object" && Object.hasOwn(cur, s)) {
      cur = (cur as Record<string, unknown>)[s];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: cur };
}

/** A copy of `data` with `value` at an existing `pointer`. */
export function assign(data: unknown, pointer: string, value: unknown): unknown {
  const segs = segments(pointer);
  if (!segs || segs.length === 0) return value;
  const root = structuredClone(data);
  let cur = root as Record<string, unknown>;
  for (const s of segs.slice(0, -1)) cur = cur[s] as Record<string, unknown>;
  cur[segs.at(-1)!] = value;
  return root;
}

/** Every scalar leaf of `data` with its pointer, in document order. */
export function leaves(data: unknown, at = ""): [string, unknown][] {
  if (isScalar(data)) return at === "" ? [] : [[at, data]];
  if (Array.isArray(data)) return data.flatMap((v, i) => leaves(v, `${at}/${i}`));
  if (typeof data === "object") return Object.entries(data as Record<string, unknown>).flatMap(([k, v]) => leaves(v, `${at}/${escape(k)}`));
  return [];
}
