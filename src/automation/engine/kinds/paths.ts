// Dotted-path helpers shared by the transform kinds (`a.b.0.c`).

export function splitPath(path: string): string[] {
  return path.split(".").filter((s) => s !== "");
}

export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const segs = splitPath(path);
  let cur: Record<string, unknown> = target;
  for (const seg of segs.slice(0, -1)) {
    const next = cur[seg];
    if (next === null || typeof next !== "object") cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]] = value;
}

export function removePath(target: unknown, path: string): void {
  const segs = splitPath(path);
  let cur: unknown = target;
  for (const seg of segs.slice(0, -1)) {
    if (cur === null || typeof cur !== "object") return;
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (cur === null || typeof cur !== "object") return;
  const last = segs[segs.length - 1];
  if (Array.isArray(cur) && /^\d+$/.test(last)) cur.splice(Number(last), 1);
  else delete (cur as Record<string, unknown>)[last];
}

export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
