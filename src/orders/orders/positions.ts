// Deep pages in O(page size), on both backends. A page at offset N of an SQL list costs O(N): the database
// steps over N index entries (5 ms at page 5,000 of 100,000 orders). Instead, for each list a page was
// asked of deeply, this process keeps the list's order in memory: the sort key and id of every row,
// sorted, in two typed arrays. A page is then a slice of ids, and its rows are read by primary key (or
// not at all: rows shown are kept, up to a bound, until the log says they changed).
//
// The order stays exact under writes from any process or instance: the database logs every change to an
// order (its filter and sort columns before and after) into `order_changes`, in commit order, in the
// writing transaction. Before a list is used, the changes it has not seen are read in the same snapshot
// as the page's rows and applied (a binary search and a shift per change), so a page agrees with its
// total and with the rows it shows. A list that fell further behind than the log keeps is dropped and
// built again (one ordered scan of the list's index: ~50 ms per 100,000 rows). Applying a change a list
// already reflects is harmless (an insert of a present entry, a removal of an absent one, and the log
// holds each order's whole history in order), so a list may safely be labelled older than it is.
import type { SortField, SortKey } from "./model";
import { filterOf, type OrderFilter } from "./store";

/** Below this offset a page reads SQL directly (a short OFFSET on the list's index); from here on, a kept list. */
export const DEEP = 256;

/**
 * How far back the change log reaches (in log positions: rows on SQLite, data versions on PostgreSQL).
 * The triggers that write the log delete what is older; a list further behind is rebuilt.
 */
export const RETAIN = 10_000;

/** More changes than this in one catch-up: rebuilding the lists on demand is cheaper than patching. */
const PATCH_LIMIT = 2_000;

/** Entries (rows of all kept lists) held in memory at most: 16 bytes each, so 32 MB. */
export const BUDGET = 2_000_000;

/** Order rows kept for deep pages at most (about 250 bytes each: 25 MB); the first kept go first. */
const ROWS = 100_000;

/** The columns a list's filter and sort read, as the change log records them. */
export interface OrderKeys {
  status: number;
  customerId: number;
  performerId: number | null;
  createdAt: number;
  price: number;
}

/** One logged change to an order: its keys before (null: inserted) and after (null: deleted). */
export interface Change {
  seq: number;
  id: number;
  before: OrderKeys | null;
  after: OrderKeys | null;
}

export type ListKind = "status" | "customer" | "performer";

/** A list the positions can serve: one filter and one numeric sort column, `id` breaking ties the same way. */
export interface Plan {
  kind: ListKind;
  value: number;
  field: Exclude<SortField, "description">;
  dir: "asc" | "desc";
  /** The kept list's key (both directions share one list: descending is ascending read backwards). */
  key: string;
}

/**
 * The plan for a filter and sort, or undefined when the sort is not one numeric column (then pages are
 * SQL with OFFSET over a deferred join). On the status filter a sort by status is constant and drops out.
 */
export function planOf(filter: OrderFilter, sort: SortKey[]): Plan | undefined {
  const [kind, value] = filterOf(filter);
  let keys = kind === "status" ? sort.filter((s) => s.field !== "status") : sort;
  if (keys.length === 0) keys = [{ field: "id", dir: sort[sort.length - 1]?.dir ?? "asc" }];
  // `field` then `id` in the same direction is the order a list keeps; an explicit trailing id must agree.
  if (keys.length === 2 && !(keys[1].field === "id" && keys[1].dir === keys[0].dir)) return undefined;
  if (keys.length > 2) return undefined;
  const [{ field, dir }] = keys;
  if (field === "description") return undefined;
  return { kind, value, field, dir, key: `${kind}|${value}|${field}` };
}

/** SQL column of a sort field and of a filter kind (fixed names, never input). */
export const SORT_COLUMN = { id: "id", price: "price", createdDate: "created_at", status: "status" } as const;
export const FILTER_COLUMN = { status: "status", customer: "customer_id", performer: "performer_id" } as const;

function keyOf(k: OrderKeys, id: number, field: Plan["field"]): number {
  return field === "id" ? id : field === "price" ? k.price : field === "createdDate" ? k.createdAt : k.status;
}

function matches(k: OrderKeys, kind: ListKind, value: number): boolean {
  return kind === "status" ? k.status === value : kind === "customer" ? k.customerId === value : k.performerId === value;
}

/** One list's rows in ascending (key, id) order, exact as of log position `at`. */
class SortedList {
  n: number;
  keys: Float64Array;
  ids: Float64Array;
  used = 0;

  constructor(
    readonly plan: Plan,
    public at: number,
    keys: ArrayLike<number>,
    ids: ArrayLike<number>,
  ) {
    this.n = ids.length;
    const cap = Math.max(16, Math.ceil(this.n * 1.25));
    this.keys = new Float64Array(cap);
    this.ids = new Float64Array(cap);
    this.keys.set(keys);
    this.ids.set(ids);
  }

  /** The first position whose (key, id) is not below (k, id). */
  private lowerBound(k: number, id: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const mk = this.keys[mid];
      if (mk < k || (mk === k && this.ids[mid] < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(k: number, id: number): void {
    const at = this.lowerBound(k, id);
    if (at < this.n && this.keys[at] === k && this.ids[at] === id) return;
    if (this.n === this.ids.length) {
      const cap = Math.ceil(this.n * 1.5) + 16;
      const keys = new Float64Array(cap);
      const ids = new Float64Array(cap);
      keys.set(this.keys);
      ids.set(this.ids);
      this.keys = keys;
      this.ids = ids;
    }
    this.keys.copyWithin(at + 1, at, this.n);
    this.ids.copyWithin(at + 1, at, this.n);
    this.keys[at] = k;
    this.ids[at] = id;
    this.n++;
  }

  remove(k: number, id: number): void {
    const at = this.lowerBound(k, id);
    if (at >= this.n || this.keys[at] !== k || this.ids[at] !== id) return;
    this.keys.copyWithin(at, at + 1, this.n);
    this.ids.copyWithin(at, at + 1, this.n);
    this.n--;
  }

  /** The ids of the page at `offset` in the plan's direction. */
  page(dir: "asc" | "desc", limit: number, offset: number): number[] {
    const out: number[] = [];
    if (dir === "asc") for (let i = offset; i < Math.min(this.n, offset + limit); i++) out.push(this.ids[i]);
    else for (let i = this.n - 1 - offset; i >= Math.max(0, this.n - offset - limit); i--) out.push(this.ids[i]);
    return out;
  }
}

/** What a backend reads for the positions: the log since a position, and a list built in one snapshot. */
export interface Built {
  at: number;
  keys: ArrayLike<number>;
  ids: ArrayLike<number>;
}

/**
 * The kept lists of one process, bounded by BUDGET entries (the least recently used go first), and the
 * rows their pages showed: a row is exact until the log names its order (every column a row shows is
 * logged when it changes, or never changes: descriptions, creation times, usernames), so a deep page of
 * rows already seen costs no SQL.
 */
export class Positions<R extends { id: number }> {
  private readonly lists = new Map<string, SortedList>();
  private readonly rows = new Map<number, R>();
  /** The log position the kept rows are exact at. */
  private rowsAt = -1;
  /** Kept lists by filter (`kind|value`), so a change finds the lists it touches without a scan. */
  private readonly byFilter = new Map<string, SortedList[]>();
  private entries = 0;
  private tick = 0;

  /** The list of `plan` if kept, marked as just used. */
  get(plan: Plan): SortedList | undefined {
    const list = this.lists.get(plan.key);
    if (list) list.used = ++this.tick;
    return list;
  }

  /** Whether nothing is kept (then there is no log to read). */
  get empty(): boolean {
    return this.lists.size === 0 && this.rows.size === 0;
  }

  /** The oldest log position a kept list or the kept rows are exact at: changes after it are the ones to read. */
  oldest(): number {
    let at = this.rows.size ? this.rowsAt : Infinity;
    for (const l of this.lists.values()) at = Math.min(at, l.at);
    return at;
  }

  /** The kept rows of `ids` if they are exact at `at` and all kept, else undefined. */
  rowsOf(ids: number[], at: number): R[] | undefined {
    if (at !== this.rowsAt) return undefined;
    const out: R[] = [];
    for (const id of ids) {
      const r = this.rows.get(id);
      if (!r) return undefined;
      out.push(r);
    }
    return out;
  }

  /** Keeps rows read at log position `at` (kept rows at an older one are dropped first; rows older than the kept ones are not kept). */
  remember(rows: R[], at: number): void {
    if (at < this.rowsAt) return;
    if (at > this.rowsAt) {
      this.rows.clear();
      this.rowsAt = at;
    }
    for (const r of rows) this.rows.set(r.id, r);
    if (this.rows.size > ROWS) {
      let over = this.rows.size - ROWS;
      for (const id of this.rows.keys()) {
        if (over-- <= 0) break;
        this.rows.delete(id);
      }
    }
  }

  /** Keeps a freshly built list (unless it alone is over the budget), evicting the least recently used. */
  put(plan: Plan, built: Built): SortedList | undefined {
    if (built.ids.length > BUDGET) return undefined;
    this.drop(plan.key);
    while (this.entries + built.ids.length > BUDGET) {
      let lru: SortedList | undefined;
      for (const l of this.lists.values()) if (!lru || l.used < lru.used) lru = l;
      this.drop(lru!.plan.key);
    }
    const list = new SortedList(plan, built.at, built.keys, built.ids);
    list.used = ++this.tick;
    this.lists.set(plan.key, list);
    const f = `${plan.kind}|${plan.value}`;
    this.byFilter.set(f, [...(this.byFilter.get(f) ?? []), list]);
    this.entries += list.n;
    return list;
  }

  /**
   * Applies the log read in one snapshot: `changes` (ascending, every change after `since` up to `head`)
   * to each list not already past them. `complete` false (the log no longer reaches back to `since`) or
   * a long log drops the lists that needed it; they are rebuilt on demand.
   */
  apply(since: number, head: number, changes: Change[], complete: boolean): void {
    if (!complete || changes.length > PATCH_LIMIT || (this.rows.size && this.rowsAt < since)) {
      this.rows.clear();
    } else {
      for (const c of changes) if (c.seq > this.rowsAt) this.rows.delete(c.id);
    }
    this.rowsAt = Math.max(this.rowsAt, head);
    if (!complete || changes.length > PATCH_LIMIT) {
      for (const l of [...this.lists.values()]) if (l.at < head) this.drop(l.plan.key);
      return;
    }
    for (const c of changes) {
      for (const [keys, op] of [
        [c.before, "remove"],
        [c.after, "insert"],
      ] as const) {
        if (!keys) continue;
        for (const f of [`status|${keys.status}`, `customer|${keys.customerId}`, `performer|${keys.performerId}`]) {
          for (const l of this.byFilter.get(f) ?? []) {
            if (l.at >= c.seq || l.at < since || !matches(keys, l.plan.kind, l.plan.value)) continue;
            const before = l.n;
            l[op](keyOf(keys, c.id, l.plan.field), c.id);
            this.entries += l.n - before;
          }
        }
      }
    }
    for (const l of this.lists.values()) if (l.at >= since && l.at < head) l.at = head;
  }

  /** Drops every kept list and row (they are read again on demand). */
  forget(): void {
    for (const key of [...this.lists.keys()]) this.drop(key);
    this.rows.clear();
  }

  private drop(key: string): void {
    const list = this.lists.get(key);
    if (!list) return;
    this.lists.delete(key);
    this.entries -= list.n;
    const f = `${list.plan.kind}|${list.plan.value}`;
    const rest = (this.byFilter.get(f) ?? []).filter((l) => l !== list);
    if (rest.length) this.byFilter.set(f, rest);
    else this.byFilter.delete(f);
  }
}

/** `rows` (a page's, in any order) in the order of `ids`; undefined if one is missing (a bug: the caller falls back). */
export function inOrder<R extends { id: number }>(ids: number[], rows: R[]): R[] | undefined {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out: R[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    if (!r) return undefined;
    out.push(r);
  }
  return out;
}

/** A row of the change log as both backends return it (PostgreSQL casts its bigints to numbers). */
export interface LogRow {
  seq: number;
  order_id: number;
  old_status: number | null;
  old_customer: number;
  old_performer: number | null;
  old_created: number;
  old_price: number;
  new_status: number | null;
  new_customer: number;
  new_performer: number | null;
  new_created: number;
  new_price: number;
}

export function changeOf(r: LogRow): Change {
  return {
    seq: r.seq,
    id: r.order_id,
    before: r.old_status === null ? null : { status: r.old_status, customerId: r.old_customer, performerId: r.old_performer, createdAt: r.old_created, price: r.old_price },
    after: r.new_status === null ? null : { status: r.new_status, customerId: r.new_customer, performerId: r.new_performer, createdAt: r.new_created, price: r.new_price },
  };
}
