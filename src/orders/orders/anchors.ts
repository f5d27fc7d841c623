// Deep pages without a deep OFFSET. A page at offset N would make the database step over N index entries
// (O(N): 5 ms at page 5,000 of 100,000 orders). Instead, for the sorts an index covers, a sparse list of
// anchors — the sort key of every STEP-th row — is built once per data version in one pass, and a page
// is a keyset seek past the nearest anchor plus an OFFSET below STEP: O(log N + STEP) per page. The
// anchors are exact for the version they were built at and are thrown away when it moves, so a page is
// never stale; a workload that writes between every deep read pays one pass per write, not per read.
import type { SortField, SortKey } from "./model";
import { filterOf, type OrderFilter } from "./store";

/** Rows between anchors: the most a seek steps over with OFFSET. */
export const STEP = 256;

/** A keyset plan: one sort column (by its field) and its direction, `id` breaking ties the same way. */
export interface Seekable {
  kind: "status" | "customer" | "performer";
  value: number;
  field: SortField;
  dir: "asc" | "desc";
  /** Cache key: filter and sort. */
  key: string;
}

/** Sort columns an index covers, after the filter column (see the list indexes in the migrations). */
const INDEXED: Record<Seekable["kind"], readonly SortField[]> = {
  status: ["createdDate", "price", "id"],
  customer: ["createdDate"],
  performer: ["createdDate"],
};

/**
 * The keyset plan for a filter and sort, or undefined when no index covers it (those lists page with
 * OFFSET over a deferred join). On the status filter a sort by status is constant and drops out.
 */
export function seekable(filter: OrderFilter, sort: SortKey[]): Seekable | undefined {
  const [kind, value] = filterOf(filter);
  let keys = kind === "status" ? sort.filter((s) => s.field !== "status") : sort;
  if (keys.length === 0) keys = [{ field: "id", dir: sort[sort.length - 1]?.dir ?? "asc" }];
  // `field` then `id` in the same direction is what the indexes hold; an explicit trailing id must agree.
  if (keys.length === 2 && !(keys[1].field === "id" && keys[1].dir === keys[0].dir)) return undefined;
  if (keys.length > 2) return undefined;
  const [{ field, dir }] = keys;
  if (!INDEXED[kind].includes(field)) return undefined;
  return { kind, value, field, dir, key: `${kind}|${value}|${field}|${dir}` };
}

/** The sort key of one anchor row: the sort column's value and the id. */
export type Anchor = [number, number];

/** A list's anchors and the data version they are exact for. */
export interface Built {
  version: number;
  anchors: Anchor[];
}

/**
 * A list's anchors are rebuilt at most this often. Under steady writes (every write moves the version)
 * rebuilding for every deep read would cost a pass per read; in between, deep reads page with OFFSET.
 */
export const REBUILD_MS = 250;

/** Anchors per list, each valid for one data version. Bounded: lists are per user, so there can be many. */
export class AnchorCache {
  private readonly lists = new Map<string, Built & { at: number }>();

  /**
   * The anchors of `plan` at `version`, built by `build` if missing (SQLite: reads and builds are
   * synchronous); undefined when they are stale and were rebuilt less than REBUILD_MS ago.
   */
  get(plan: Seekable, version: number, build: () => Anchor[]): Anchor[] | undefined {
    const hit = this.lists.get(plan.key);
    if (hit && hit.version === version) return hit.anchors;
    if (!this.mayRebuild(plan)) return undefined;
    const anchors = build();
    this.put(plan, { version, anchors });
    return anchors;
  }

  /** Whether the anchors of `plan` may be rebuilt now (see REBUILD_MS). */
  mayRebuild(plan: Seekable): boolean {
    const hit = this.lists.get(plan.key);
    return !hit || performance.now() - hit.at >= REBUILD_MS;
  }

  /** The latest anchors of `plan`, whatever their version (the caller checks it). */
  peek(plan: Seekable): Built | undefined {
    return this.lists.get(plan.key);
  }

  put(plan: Seekable, built: Built): void {
    if (this.lists.size >= 1000) this.lists.clear();
    this.lists.set(plan.key, { ...built, at: performance.now() });
  }
}

/** Where a page at `offset` starts: past anchor `anchor` (undefined: from the list's start) with a small OFFSET. */
export function startOf(anchors: Anchor[], offset: number): { after?: Anchor; skip: number } {
  const j = Math.min(Math.floor(offset / STEP), anchors.length);
  if (j === 0) return { skip: offset };
  // anchors[j - 1] is the row at position j * STEP - 1.
  return { after: anchors[j - 1], skip: offset - j * STEP };
}

/** Column names for the keyset SQL (fixed names, never input). */
export const SEEK_COLUMN = { id: "id", price: "price", createdDate: "created_at", status: "status", description: "description" } as const;
export const FILTER_COLUMN = { status: "status", customer: "customer_id", performer: "performer_id" } as const;

export function orderBy(col: string, dir: "asc" | "desc"): string {
  return col === "id" ? `ORDER BY id ${dir}` : `ORDER BY ${col} ${dir}, id ${dir}`;
}
