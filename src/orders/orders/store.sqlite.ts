import { and, asc, desc, eq, gte, inArray, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { OrdersDb } from "../db/handle.sqlite";
import type { DataVersion } from "../../kernel/data-version";
import { ledger, orderCounts, orders, users } from "../db/schema.sqlite";
import { COMPLETED, IN_PROGRESS, type OrderRow, READY, type SortKey, WAITING } from "./model";
import { type Built, changeOf, DEEP, FILTER_COLUMN, inOrder, type LogRow, type Plan, planOf, Positions, SORT_COLUMN } from "./positions";
import { type OrderFilter, type OrderStore, type Settlement, filterOf } from "./store";

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
export class SqliteOrderStore implements OrderStore {
  private readonly byId;
  private readonly lists = new Map<string, { all(p: { v: number; limit: number; offset: number }): OrderRow[] }>();
  private readonly pageRows;
  /** Runs a function in one read transaction (`.deferred(fn)`): one snapshot for all its reads. */
  private readonly snapshot;
  private readonly countStatus;
  private readonly countCustomer;
  private readonly countPerformer;
  private readonly positions = new Positions<OrderRow>();
  /** The data version the kept lists last caught up at (undefined: never, or no version to read). */
  private caughtUp: number | undefined;
  private readonly log;
  private readonly logStart;
  private readonly logHead;

  constructor(
    readonly db: OrdersDb,
    private readonly version?: DataVersion,
  ) {
    this.byId = this.select().where(eq(orders.id, sql.placeholder("id"))).prepare();
    this.countStatus = db.select({ n: orderCounts.n }).from(orderCounts).where(eq(orderCounts.status, sql.placeholder("v"))).prepare();
    this.countCustomer = db.select({ n: sql<number>`count(*)` }).from(orders).where(eq(orders.customerId, sql.placeholder("v"))).prepare();
    this.countPerformer = db.select({ n: sql<number>`count(*)` }).from(orders).where(eq(orders.performerId, sql.placeholder("v"))).prepare();
    this.log = db.$client.prepare<LogRow, [number]>(`SELECT * FROM order_changes WHERE seq > ?1 ORDER BY seq`);
    this.logStart = db.$client.prepare<{ seq: number }, []>("SELECT seq FROM order_changes ORDER BY seq LIMIT 1");
    this.logHead = db.$client.prepare<{ seq: number }, []>("SELECT seq FROM order_changes ORDER BY seq DESC LIMIT 1");
    // The rows of a page whose ids a kept list holds (a JSON array). Plain bun:sqlite on this hot path:
    // drizzle's row mapping and transaction wrapper cost more than the query itself.
    this.pageRows = db.$client.prepare<OrderRow, [string]>(
      `SELECT o.id, o.description, o.price, o.status, o.created_at AS createdAt, o.customer_id AS customerId, c.username AS customerName,
              o.performer_id AS performerId, p.username AS performerName
       FROM orders o JOIN users c ON c.id = o.customer_id LEFT JOIN users p ON p.id = o.performer_id
       WHERE o.id IN (SELECT value FROM json_each(?1))`,
    );
    this.snapshot = db.$client.transaction((fn: () => unknown) => fn());
  }

  private select() {
    return this.db
      .select(columns)
      .from(orders)
      .innerJoin(users, eq(users.id, orders.customerId))
      .leftJoin(performer, eq(performer.id, orders.performerId));
  }

  /** Runs `fn` in one IMMEDIATE transaction (it holds the write lock from the first read) and marks the data changed. */
  private tx<T>(fn: () => T): T {
    try {
      return this.db.transaction(() => fn(), { behavior: "immediate" });
    } finally {
      this.version?.bump();
    }
  }

  dataVersion(): number {
    return this.version?.current() ?? -1;
  }

  async find(id: number): Promise<OrderRow | undefined> {
    return this.byId.get({ id });
  }

  async create(o: { description: string; price: number; customerId: number; at: number; need: number }): Promise<{ id: number } | { balance: number }> {
    return this.tx(() => {
      const balance = this.db.select({ money: users.money }).from(users).where(eq(users.id, o.customerId)).get()?.money ?? 0;
      if (o.need > balance) return { balance };
      const row = this.db
        .insert(orders)
        .values({ description: o.description, price: o.price, status: WAITING, createdAt: o.at, customerId: o.customerId })
        .returning({ id: orders.id })
        .get()!;
      return { id: row.id };
    });
  }

  async take(id: number, performerId: number): Promise<boolean> {
    return this.tx(
      () =>
        this.db
          .update(orders)
          .set({ status: IN_PROGRESS, performerId })
          .where(and(eq(orders.id, id), eq(orders.status, WAITING)))
          .returning({ id: orders.id })
          .all().length === 1,
    );
  }

  async pass(id: number, performerId: number): Promise<boolean> {
    return this.tx(
      () =>
        this.db
          .update(orders)
          .set({ status: READY })
          .where(and(eq(orders.id, id), eq(orders.status, IN_PROGRESS), eq(orders.performerId, performerId)))
          .returning({ id: orders.id })
          .all().length === 1,
    );
  }

  async settle(s: { id: number; customerId: number; performerId: number; price: number; commission: number; at: number }): Promise<Settlement> {
    const funds = new Error("funds");
    try {
      return this.tx((): Settlement => {
        const done = this.db
          .update(orders)
          .set({ status: COMPLETED })
          .where(and(eq(orders.id, s.id), eq(orders.status, READY), eq(orders.customerId, s.customerId)))
          .returning({ id: orders.id })
          .all();
        if (done.length !== 1) return { ok: false, reason: "state" };
        const need = s.price + s.commission;
        const debited = this.db
          .update(users)
          .set({ money: sql`${users.money} - ${need}` })
          .where(and(eq(users.id, s.customerId), gte(users.money, need)))
          .returning({ id: users.id })
          .all();
        // Throwing rolls back the status change above.
        if (debited.length !== 1) throw funds;
        this.db.update(users).set({ money: sql`${users.money} + ${s.price}` }).where(eq(users.id, s.performerId)).run();
        const entries: { userId: number | null; amount: number; kind: "payment" | "commission" | "earning" }[] = [
          { userId: s.customerId, amount: -s.price, kind: "payment" },
          { userId: s.customerId, amount: -s.commission, kind: "commission" },
          { userId: s.performerId, amount: s.price, kind: "earning" },
          { userId: null, amount: s.commission, kind: "commission" },
        ];
        this.db
          .insert(ledger)
          .values(entries.map((e) => ({ ...e, orderId: s.id, createdAt: s.at })))
          .run();
        return { ok: true };
      });
    } catch (err) {
      if (err !== funds) throw err;
      const balance = this.db.select({ money: users.money }).from(users).where(eq(users.id, s.customerId)).get()?.money ?? 0;
      return { ok: false, reason: "funds", balance };
    }
  }

  async page(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }> {
    // Nothing written anywhere since the lists last caught up (the data version, as the reply cache
    // reads it) and every row of the page kept: no SQL at all.
    const plan = planOf(filter, sort);
    const list = plan && this.version && this.version.current() === this.caughtUp ? this.positions.get(plan) : undefined;
    if (plan && list) {
      const rows = this.positions.rowsOf(list.page(plan.dir, limit, offset), list.at);
      if (rows) return { rows, total: list.n };
    }
    // One read snapshot, so a page, its total and the kept list order agree even while another process writes.
    return this.snapshot.deferred(() => this.pageIn(filter, sort, limit, offset)) as { rows: OrderRow[]; total: number };
  }

  private pageIn(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): { rows: OrderRow[]; total: number } {
    const plan = planOf(filter, sort);
    if (plan) {
      this.catchUp();
      const list = this.positions.get(plan) ?? (offset >= DEEP ? this.positions.put(plan, this.build(plan)) : undefined);
      if (list) {
        const ids = list.page(plan.dir, limit, offset);
        let rows = this.positions.rowsOf(ids, list.at);
        if (!rows) {
          const read = this.pageRows.all(JSON.stringify(ids));
          rows = inOrder(ids, read);
          if (rows) this.positions.remember(read, list.at);
        }
        if (rows) return { rows, total: list.n };
        // A kept list that names a row the snapshot lacks would be a bug: forget it, answer from SQL.
        this.positions.forget();
      }
    }
    const total = this.count(filter);
    if (offset >= total) return { rows: [], total };
    return { rows: this.list(filter, sort, limit, offset), total };
  }

  /** Brings the kept lists up to this snapshot from the change log (a primary-key range read, empty when nothing changed). */
  private catchUp(): void {
    if (this.positions.empty) return;
    // Read before the log, so the log is at least as new as this version.
    const version = this.version?.current();
    const since = this.positions.oldest();
    const changes = this.log.all(since).map(changeOf);
    this.caughtUp = version;
    if (changes.length === 0) return;
    // The log's oldest row is past `since` + 1: the trim removed changes a list has not seen.
    const complete = (this.logStart.get()?.seq ?? 0) <= since + 1;
    this.positions.apply(since, changes[changes.length - 1].seq, changes, complete);
  }

  /** A list's order, read from its index in this snapshot, and the log position it is exact at. */
  private build(plan: Plan): Built {
    const col = SORT_COLUMN[plan.field];
    const by = col === "id" ? "id" : `${col}, id`;
    const rows = this.db.$client
      .prepare<[number, number], [number]>(`SELECT ${col}, id FROM orders WHERE ${FILTER_COLUMN[plan.kind]} = ?1 ORDER BY ${by}`)
      .values(plan.value);
    const at = this.logHead.get()?.seq ?? 0;
    return { at, keys: rows.map((r) => r[0] as number), ids: rows.map((r) => r[1] as number) };
  }

  /** OFFSET paging over a deferred join: shallow pages, and the sorts no kept list serves. */
  private list(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): OrderRow[] {
    const [kind, v] = filterOf(filter);
    const key = `${kind}|${sort.map((s) => `${s.field}:${s.dir}`).join(",")}`;
    let q = this.lists.get(key);
    if (!q) {
      const by: SQL[] = sort.map((s) => (s.dir === "asc" ? asc(sortColumn[s.field]) : desc(sortColumn[s.field])));
      // A total order, so pages never overlap or skip rows that tie on the sort fields.
      if (!sort.some((s) => s.field === "id")) by.push(sort[sort.length - 1].dir === "asc" ? asc(orders.id) : desc(orders.id));
      // Deferred join: page through ids on the (filter, sort, id) index alone, then join the page's rows.
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

  private count(filter: OrderFilter): number {
    const [kind, v] = filterOf(filter);
    const q = kind === "status" ? this.countStatus : kind === "customer" ? this.countCustomer : this.countPerformer;
    return q.get({ v })?.n ?? 0;
  }
}

