import { and, asc, desc, eq, gte, inArray, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { PgDataVersion, PgOrdersDb } from "../db/pg";
import { dataVersion, ledger, orderCounts, orders, users } from "../db/schema.pg";
import { type Anchor, AnchorCache, FILTER_COLUMN, orderBy, SEEK_COLUMN, type Seekable, STEP, seekable, startOf } from "./anchors";
import { COMPLETED, IN_PROGRESS, type OrderRow, READY, type SortKey, WAITING } from "./model";
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

type Tx = Parameters<Parameters<PgOrdersDb["transaction"]>[0]>[0];
type Db = PgOrdersDb | Tx;

/** Thrown inside settle's transaction to roll it back when the balance falls short. */
class ShortOfFunds extends Error {}

export class PgOrderStore implements OrderStore {
  private readonly anchors = new AnchorCache();

  constructor(
    private readonly db: PgOrdersDb,
    private readonly version: PgDataVersion,
  ) {}

  private select(db: Db) {
    return db
      .select(columns)
      .from(orders)
      .innerJoin(users, eq(users.id, orders.customerId))
      .leftJoin(performer, eq(performer.id, orders.performerId));
  }

  dataVersion(): Promise<number> {
    return this.version.current();
  }

  async find(id: number): Promise<OrderRow | undefined> {
    return (await this.select(this.db).where(eq(orders.id, id)))[0];
  }

  async create(o: { description: string; price: number; customerId: number; at: number; need: number }): Promise<{ id: number } | { balance: number }> {
    // The balance check is advisory (accept checks again under the row lock), so no lock is taken here.
    return this.db.transaction(async (tx) => {
      const balance = (await tx.select({ money: users.money }).from(users).where(eq(users.id, o.customerId)))[0]?.money ?? 0;
      if (o.need > balance) return { balance };
      const [row] = await tx
        .insert(orders)
        .values({ description: o.description, price: o.price, status: WAITING, createdAt: o.at, customerId: o.customerId })
        .returning({ id: orders.id });
      return { id: row.id };
    });
  }

  // A conditional UPDATE is atomic on its own: racing ones queue on the row lock and re-check the
  // condition on the row as the winner left it, so exactly one matches (READ COMMITTED semantics).
  async take(id: number, performerId: number): Promise<boolean> {
    const rows = await this.db
      .update(orders)
      .set({ status: IN_PROGRESS, performerId })
      .where(and(eq(orders.id, id), eq(orders.status, WAITING)))
      .returning({ id: orders.id });
    return rows.length === 1;
  }

  async pass(id: number, performerId: number): Promise<boolean> {
    const rows = await this.db
      .update(orders)
      .set({ status: READY })
      .where(and(eq(orders.id, id), eq(orders.status, IN_PROGRESS), eq(orders.performerId, performerId)))
      .returning({ id: orders.id });
    return rows.length === 1;
  }

  /**
   * One transaction with row locks taken in a fixed order — the order row, then the customer, then the
   * performer (a user is only ever one of the two) — so concurrent settlements never deadlock, and a
   * crash at any point leaves all of it or none.
   */
  async settle(s: { id: number; customerId: number; performerId: number; price: number; commission: number; at: number }): Promise<Settlement> {
    try {
      return await this.db.transaction(async (tx): Promise<Settlement> => {
        const done = await tx
          .update(orders)
          .set({ status: COMPLETED })
          .where(and(eq(orders.id, s.id), eq(orders.status, READY), eq(orders.customerId, s.customerId)))
          .returning({ id: orders.id });
        if (done.length !== 1) return { ok: false, reason: "state" };
        const need = s.price + s.commission;
        const debited = await tx
          .update(users)
          .set({ money: sql`${users.money} - ${need}` })
          .where(and(eq(users.id, s.customerId), gte(users.money, need)))
          .returning({ id: users.id });
        if (debited.length !== 1) throw new ShortOfFunds();
        await tx.update(users).set({ money: sql`${users.money} + ${s.price}` }).where(eq(users.id, s.performerId));
        const entries: { userId: number | null; amount: number; kind: "payment" | "commission" | "earning" }[] = [
          { userId: s.customerId, amount: -s.price, kind: "payment" },
          { userId: s.customerId, amount: -s.commission, kind: "commission" },
          { userId: s.performerId, amount: s.price, kind: "earning" },
          { userId: null, amount: s.commission, kind: "commission" },
        ];
        await tx.insert(ledger).values(entries.map((e) => ({ ...e, orderId: s.id, createdAt: s.at })));
        return { ok: true };
      });
    } catch (err) {
      if (!(err instanceof ShortOfFunds)) throw err;
      const balance = (await this.db.select({ money: users.money }).from(users).where(eq(users.id, s.customerId)))[0]?.money ?? 0;
      return { ok: false, reason: "funds", balance };
    }
  }

  async page(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }> {
    // One REPEATABLE READ snapshot: the total, the anchors' version and the page agree.
    return this.db.transaction(
      async (tx) => {
        const total = await this.count(tx, filter);
        if (offset >= total) return { rows: [], total };
        const plan = offset >= STEP ? seekable(filter, sort) : undefined;
        const rows = plan ? await this.seek(tx, plan, limit, offset) : await this.list(tx, filter, sort, limit, offset);
        return { rows, total };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  private async seek(tx: Tx, plan: Seekable, limit: number, offset: number): Promise<OrderRow[]> {
    // The version read in this snapshot tags anchors built from this snapshot: exact, across instances.
    const [{ v }] = await tx.select({ v: dataVersion.v }).from(dataVersion);
    const anchors = await this.anchors.get(plan, v, () => this.buildAnchors(tx, plan));
    const { after, skip } = startOf(anchors, offset);
    const col = SEEK_COLUMN[plan.field];
    const c = sql.raw(col);
    const past = after ? sql` AND ${pastAnchor(col, plan.dir, after)}` : sql``;
    const rows = await tx.execute<Record<string, unknown>>(sql`
      SELECT o.id, o.description, o.price, o.status, o.created_at AS "createdAt", o.customer_id AS "customerId",
             c.username AS "customerName", o.performer_id AS "performerId", p.username AS "performerName"
      FROM (SELECT id, ${c} AS k FROM orders WHERE ${sql.raw(FILTER_COLUMN[plan.kind])} = ${plan.value}${past}
            ${sql.raw(orderBy(col, plan.dir))} LIMIT ${limit} OFFSET ${skip}) AS page
      JOIN orders o ON o.id = page.id
      JOIN users c ON c.id = o.customer_id
      LEFT JOIN users p ON p.id = o.performer_id
      ORDER BY page.k ${sql.raw(plan.dir)}, page.id ${sql.raw(plan.dir)}`);
    return [...rows].map((r) => ({
      id: Number(r.id),
      description: String(r.description),
      price: Number(r.price),
      status: Number(r.status),
      createdAt: Number(r.createdAt),
      customerId: Number(r.customerId),
      customerName: String(r.customerName),
      performerId: r.performerId === null ? null : Number(r.performerId),
      performerName: r.performerName === null ? null : String(r.performerName),
    }));
  }

  /**
   * Anchor to anchor in one statement: a recursive query whose every step is a seek plus an OFFSET of
   * STEP - 1 on the list's index, so the build steps over the index once and sorts nothing.
   */
  private async buildAnchors(tx: Tx, plan: Seekable): Promise<Anchor[]> {
    const col = SEEK_COLUMN[plan.field];
    const c = sql.raw(col);
    const f = sql.raw(FILTER_COLUMN[plan.kind]);
    const ob = sql.raw(orderBy(col, plan.dir));
    const cmp = sql.raw(plan.dir === "asc" ? ">" : "<");
    const past = col === "id" ? sql`id ${cmp} a.id` : sql`(${c}, id) ${cmp} (a.k, a.id)`;
    const rows = await tx.execute<{ k: string | number; id: string | number }>(sql`
      WITH RECURSIVE a(k, id) AS (
        (SELECT ${c}, id FROM orders WHERE ${f} = ${plan.value} ${ob} OFFSET ${STEP - 1} LIMIT 1)
        UNION ALL
        SELECT n.k, n.id FROM a CROSS JOIN LATERAL
          (SELECT ${c} AS k, id FROM orders WHERE ${f} = ${plan.value} AND ${past} ${ob} OFFSET ${STEP - 1} LIMIT 1) AS n
      )
      SELECT k, id FROM a`);
    return [...rows].map((r) => [Number(r.k), Number(r.id)]);
  }

  /** OFFSET paging over a deferred join, for the sorts no index covers (and shallow pages). */
  private async list(tx: Tx, filter: OrderFilter, sort: SortKey[], limit: number, offset: number): Promise<OrderRow[]> {
    const [kind, v] = filterOf(filter);
    const by: SQL[] = sort.map((s) => (s.dir === "asc" ? asc(sortColumn[s.field]) : desc(sortColumn[s.field])));
    if (!sort.some((s) => s.field === "id")) by.push(sort[sort.length - 1].dir === "asc" ? asc(orders.id) : desc(orders.id));
    const column = kind === "status" ? orders.status : kind === "customer" ? orders.customerId : orders.performerId;
    const page = tx
      .select({ id: orders.id })
      .from(orders)
      .where(eq(column, v))
      .orderBy(...by)
      .limit(limit)
      .offset(offset);
    return this.select(tx)
      .where(inArray(orders.id, page))
      .orderBy(...by);
  }

  private async count(tx: Tx, filter: OrderFilter): Promise<number> {
    const [kind, v] = filterOf(filter);
    if (kind === "status") return (await tx.select({ n: orderCounts.n }).from(orderCounts).where(eq(orderCounts.status, v)))[0]?.n ?? 0;
    const column = kind === "customer" ? orders.customerId : orders.performerId;
    return Number((await tx.select({ n: sql<string>`count(*)` }).from(orders).where(eq(column, v)))[0]?.n ?? 0);
  }
}

/** `(col, id) > (k, id)` (or `<` descending) against an anchor's values: an index range. */
function pastAnchor(col: string, dir: "asc" | "desc", [k, id]: Anchor): SQL {
  const cmp = sql.raw(dir === "asc" ? ">" : "<");
  return col === "id" ? sql`id ${cmp} ${id}` : sql`(${sql.raw(col)}, id) ${cmp} (${k}, ${id})`;
}
