import { and, asc, desc, eq, gte, inArray, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { OrdersDb } from "../db/open";
import type { DataVersion } from "../db/version";
import { ledger, orderCounts, orders, users } from "../db/schema";
import { COMPLETED, IN_PROGRESS, type OrderRow, READY, type SortKey, WAITING } from "./model";

/** Which orders a list shows. */
export type OrderFilter = { status: number } | { customerId: number } | { performerId: number };

const performer = alias(users, "performer");
const columns = {
  id: orders.id,
  description: orders.description,
  price: orders.price,
  status: orders.status,
  createdAt: orders.createdAt,
  customerId: orders.customerId,
  customerName: users.username,
  performerId: orders.performerId,
  performerName: performer.username,
};
const sortColumn = {
  id: orders.id,
  price: orders.price,
  status: orders.status,
  createdDate: orders.createdAt,
  description: orders.description,
} as const;

export type LedgerKind = "opening" | "payment" | "commission" | "earning";

export class OrderStore {
  private readonly byId;
  private readonly lists = new Map<string, { all(p: { v: number; limit: number; offset: number }): OrderRow[] }>();
  private readonly countStatus;
  private readonly countCustomer;
  private readonly countPerformer;

  constructor(
    readonly db: OrdersDb,
    private readonly version?: DataVersion,
  ) {
    this.byId = this.select().where(eq(orders.id, sql.placeholder("id"))).prepare();
    this.countStatus = db.select({ n: orderCounts.n }).from(orderCounts).where(eq(orderCounts.status, sql.placeholder("v"))).prepare();
    this.countCustomer = db.select({ n: sql<number>`count(*)` }).from(orders).where(eq(orders.customerId, sql.placeholder("v"))).prepare();
    this.countPerformer = db.select({ n: sql<number>`count(*)` }).from(orders).where(eq(orders.performerId, sql.placeholder("v"))).prepare();
  }

  private select() {
    return this.db
      .select(columns)
      .from(orders)
      .innerJoin(users, eq(users.id, orders.customerId))
      .leftJoin(performer, eq(performer.id, orders.performerId));
  }

  /** Runs `fn` in one IMMEDIATE transaction: it holds the write lock from the first read. */
  tx<T>(fn: () => T): T {
    try {
      return this.db.transaction(() => fn(), { behavior: "immediate" });
    } finally {
      this.version?.bump();
    }
  }

  /** Runs reads in one snapshot, so a page and its total agree even while another process writes. */
  snapshot<T>(fn: () => T): T {
    return this.db.transaction(() => fn(), { behavior: "deferred" });
  }

  /** Changes whenever orders or balances may have changed (see DataVersion). */
  dataVersion(): number {
    return this.version?.current() ?? -1;
  }

  find(id: number): OrderRow | undefined {
    return this.byId.get({ id });
  }

  insert(o: { description: string; price: number; customerId: number; at: number }): number {
    return this.db
      .insert(orders)
      .values({ description: o.description, price: o.price, status: WAITING, createdAt: o.at, customerId: o.customerId })
      .returning({ id: orders.id })
      .get()!.id;
  }

  list(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): OrderRow[] {
    const [kind, v] = filterOf(filter);
    const key = `${kind}|${sort.map((s) => `${s.field}:${s.dir}`).join(",")}`;
    let q = this.lists.get(key);
    if (!q) {
      const by: SQL[] = sort.map((s) => (s.dir === "asc" ? asc(sortColumn[s.field]) : desc(sortColumn[s.field])));
      // A total order, so pages never overlap or skip rows that tie on the sort fields.
      if (!sort.some((s) => s.field === "id")) by.push(sort[sort.length - 1].dir === "asc" ? asc(orders.id) : desc(orders.id));
      // Deferred join: page through ids on the (filter, created_at, id) index alone, then join the
      // page's rows. A deep OFFSET then skips index entries, not joined rows.
      const column = kind === "status" ? orders.status : kind === "customer" ? orders.customerId : orders.performerId;
      const page = this.db
        .select({ id: orders.id })
        .from(orders)
        .where(eq(column, sql.placeholder("v")))
        .orderBy(...by)
        .limit(sql.placeholder("limit"))
        .offset(sql.placeholder("offset"));
      q = this.select()
        .where(inArray(orders.id, page))
        .orderBy(...by)
        .prepare();
      if (this.lists.size < 500) this.lists.set(key, q);
    }
    return q.all({ v, limit, offset });
  }

  count(filter: OrderFilter): number {
    const [kind, v] = filterOf(filter);
    const q = kind === "status" ? this.countStatus : kind === "customer" ? this.countCustomer : this.countPerformer;
    return q.get({ v })?.n ?? 0;
  }

  /** WAITING → IN_PROGRESS only if still WAITING; false when someone else got there first. */
  take(id: number, performerId: number): boolean {
    return (
      this.db
        .update(orders)
        .set({ status: IN_PROGRESS, performerId })
        .where(and(eq(orders.id, id), eq(orders.status, WAITING)))
        .returning({ id: orders.id }).all().length === 1
    );
  }

  pass(id: number, performerId: number): boolean {
    return (
      this.db
        .update(orders)
        .set({ status: READY })
        .where(and(eq(orders.id, id), eq(orders.status, IN_PROGRESS), eq(orders.performerId, performerId)))
        .returning({ id: orders.id }).all().length === 1
    );
  }

  complete(id: number, customerId: number): boolean {
    return (
      this.db
        .update(orders)
        .set({ status: COMPLETED })
        .where(and(eq(orders.id, id), eq(orders.status, READY), eq(orders.customerId, customerId)))
        .returning({ id: orders.id }).all().length === 1
    );
  }

  balance(userId: number): number {
    return this.db.select({ money: users.money }).from(users).where(eq(users.id, userId)).get()?.money ?? 0;
  }

  /** Takes `amount` from the user only if the balance covers it. */
  debit(userId: number, amount: number): boolean {
    return (
      this.db
        .update(users)
        .set({ money: sql`${users.money} - ${amount}` })
        .where(and(eq(users.id, userId), gte(users.money, amount)))
        .returning({ id: users.id })
        .all().length === 1
    );
  }

  credit(userId: number, amount: number): void {
    this.db.update(users).set({ money: sql`${users.money} + ${amount}` }).where(eq(users.id, userId)).run();
  }

  /** `userId` null is the platform account. */
  record(entries: { userId: number | null; orderId: number; amount: number; kind: LedgerKind; at: number }[]): void {
    this.db
      .insert(ledger)
      .values(entries.map((e) => ({ userId: e.userId, orderId: e.orderId, amount: e.amount, kind: e.kind, createdAt: e.at })))
      .run();
  }
}

function filterOf(f: OrderFilter): ["status" | "customer" | "performer", number] {
  if ("status" in f) return ["status", f.status];
  if ("customerId" in f) return ["customer", f.customerId];
  return ["performer", f.performerId];
}
