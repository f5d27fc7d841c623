import { and, eq, gte, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { PgDataVersion, PgOrdersDb } from "../db/pg";
import { ledger, orders, users } from "../db/schema.pg";
import { type Anchor, AnchorCache, type Built, FILTER_COLUMN, orderBy, SEEK_COLUMN, type Seekable, STEP, seekable, startOf } from "./anchors";
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
/** Thrown inside settle's transaction to roll it back when the balance falls short. */
class ShortOfFunds extends Error {}

export class PgOrderStore implements OrderStore {
  private readonly anchors = new AnchorCache();
  private readonly building = new Map<string, Promise<Built>>();

  constructor(
    private readonly db: PgOrdersDb,
    private readonly version: PgDataVersion,
  ) {}

  private select() {
    return this.db
      .select(columns)
      .from(orders)
      .innerJoin(users, eq(users.id, orders.customerId))
      .leftJoin(performer, eq(performer.id, orders.performerId));
  }

  dataVersion(): Promise<number> {
    return this.version.current();
  }

  async find(id: number): Promise<OrderRow | undefined> {
    return (await this.select().where(eq(orders.id, id)))[0];
  }

  async create(o: { description: string; price: number; customerId: number; at: number; need: number }): Promise<{ id: number } | { balance: number }> {
    // One statement: the order is inserted only if the balance covers it right now. The check is
    // advisory (accept checks again under the row lock), so it takes no lock.
    const [row] = [
      ...(await this.db.execute<{ id: number }>(sql`
        INSERT INTO orders (description, price, status, created_at, customer_id)
        SELECT ${o.description}, ${o.price}, ${WAITING}, ${o.at}, id FROM users WHERE id = ${o.customerId} AND money >= ${o.need}
        RETURNING id`)),
    ];
    if (row) return { id: Number(row.id) };
    return { balance: (await this.db.select({ money: users.money }).from(users).where(eq(users.id, o.customerId)))[0]?.money ?? 0 };
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

  /**
   * A page and its total in one statement, so one round trip and one snapshot. A deep page seeks past
   * the nearest anchor; the same statement reads the data version, and only if it is the one the
   * anchors were built at is the page used (else the anchors are rebuilt and the page read again).
   */
  async page(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }> {
    const plan = offset >= STEP ? seekable(filter, sort) : undefined;
    if (plan) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const built = this.anchors.peek(plan) ?? (await this.buildAnchors(plan));
        const { after, skip } = startOf(built.anchors, offset);
        const col = SEEK_COLUMN[plan.field];
        const where = sql`${sql.raw(FILTER_COLUMN[plan.kind])} = ${plan.value}${after ? sql` AND ${pastAnchor(col, plan.dir, after)}` : sql``}`;
        const keys = col === "id" ? [{ col, dir: plan.dir }] : [{ col, dir: plan.dir }, { col: "id", dir: plan.dir }];
        const r = await this.pageStatement(filter, where, keys, limit, skip);
        if (r.version === built.version) return r;
        // Stale: rebuild, unless that was done a moment ago (then page with OFFSET below).
        if (!this.anchors.mayRebuild(plan)) break;
        await this.buildAnchors(plan);
      }
    }
    const [kind, v] = filterOf(filter);
    const keys: SortColumn[] = sort.map((s) => ({ col: SEEK_COLUMN[s.field], dir: s.dir }));
    // A total order, so pages never overlap or skip rows that tie on the sort fields.
    if (!sort.some((s) => s.field === "id")) keys.push({ col: "id", dir: sort[sort.length - 1].dir });
    return this.pageStatement(filter, sql`${sql.raw(FILTER_COLUMN[kind])} = ${v}`, keys, limit, offset);
  }

  /**
   * Version, total and one page of rows in one statement: the page's ids (and sort keys) from the
   * index alone (a deferred join), then their rows. Column names are fixed ones, never input.
   */
  private async pageStatement(filter: OrderFilter, where: SQL, keys: SortColumn[], limit: number, offset: number) {
    const [kind, v] = filterOf(filter);
    const cols = [...new Set(["id", ...keys.map((k) => k.col)])].join(", ");
    const inner = `ORDER BY ${keys.map((k) => `${k.col} ${k.dir}`).join(", ")}`;
    const outer = `ORDER BY ${keys.map((k) => `page.${k.col} ${k.dir}`).join(", ")}`;
    const total = kind === "status" ? sql`(SELECT n FROM order_counts WHERE status = ${v})` : sql`(SELECT count(*) FROM orders WHERE ${sql.raw(FILTER_COLUMN[kind])} = ${v})`;
    const rows = await this.db.execute<Record<string, unknown>>(sql`
      WITH page AS (SELECT ${sql.raw(cols)} FROM orders WHERE ${where} ${sql.raw(inner)} LIMIT ${limit} OFFSET ${offset})
      SELECT meta.v AS "version", meta.total, o.id, o.description, o.price, o.status, o.created_at AS "createdAt", o.customer_id AS "customerId",
             c.username AS "customerName", o.performer_id AS "performerId", p.username AS "performerName"
      FROM (SELECT (SELECT v FROM data_version) AS v, ${total} AS total) AS meta
      LEFT JOIN (page JOIN orders o ON o.id = page.id JOIN users c ON c.id = o.customer_id LEFT JOIN users p ON p.id = o.performer_id) ON true
      ${sql.raw(outer)}`);
    const all = [...rows];
    return {
      version: Number(all[0].version),
      total: Number(all[0].total ?? 0),
      rows: all.filter((r) => r.id !== null).map(toRow),
    };
  }

  /**
   * Anchor to anchor in one statement: a recursive query whose every step is a seek plus an OFFSET of
   * STEP - 1 on the list's index, so the build steps over the index once and sorts nothing; the same
   * statement reads the data version the anchors are exact for. Concurrent callers share one build.
   */
  private buildAnchors(plan: Seekable): Promise<Built> {
    let pending = this.building.get(plan.key);
    if (!pending) {
      pending = this.build(plan).finally(() => this.building.delete(plan.key));
      this.building.set(plan.key, pending);
    }
    return pending;
  }

  private async build(plan: Seekable): Promise<Built> {
    const col = SEEK_COLUMN[plan.field];
    const c = sql.raw(col);
    const f = sql.raw(FILTER_COLUMN[plan.kind]);
    const ob = sql.raw(orderBy(col, plan.dir));
    const cmp = sql.raw(plan.dir === "asc" ? ">" : "<");
    const past = col === "id" ? sql`id ${cmp} a.id` : sql`(${c}, id) ${cmp} (a.k, a.id)`;
    const rows = await this.db.execute<{ v: string | number; k: string | number | null; id: string | number | null }>(sql`
      WITH RECURSIVE a(n, k, id) AS (
        (SELECT 1, ${c}, id FROM orders WHERE ${f} = ${plan.value} ${ob} OFFSET ${STEP - 1} LIMIT 1)
        UNION ALL
        SELECT a.n + 1, nx.k, nx.id FROM a CROSS JOIN LATERAL
          (SELECT ${c} AS k, id FROM orders WHERE ${f} = ${plan.value} AND ${past} ${ob} OFFSET ${STEP - 1} LIMIT 1) AS nx
      )
      SELECT d.v, a.k, a.id FROM data_version d LEFT JOIN a ON true ORDER BY a.n`);
    const all = [...rows];
    const built: Built = {
      version: Number(all[0].v),
      anchors: all.filter((r) => r.id !== null).map((r): Anchor => [Number(r.k), Number(r.id)]),
    };
    this.anchors.put(plan, built);
    return built;
  }
}

interface SortColumn {
  col: string;
  dir: "asc" | "desc";
}

function toRow(r: Record<string, unknown>): OrderRow {
  return {
    id: Number(r.id),
    description: String(r.description),
    price: Number(r.price),
    status: Number(r.status),
    createdAt: Number(r.createdAt),
    customerId: Number(r.customerId),
    customerName: String(r.customerName),
    performerId: r.performerId === null ? null : Number(r.performerId),
    performerName: r.performerName === null ? null : String(r.performerName),
  };
}

/** `(col, id) > (k, id)` (or `<` descending) against an anchor's values: an index range. */
function pastAnchor(col: string, dir: "asc" | "desc", [k, id]: Anchor): SQL {
  const cmp = sql.raw(dir === "asc" ? ">" : "<");
  return col === "id" ? sql`id ${cmp} ${id}` : sql`(${sql.raw(col)}, id) ${cmp} (${k}, ${id})`;
}
