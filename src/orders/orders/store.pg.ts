import { and, eq, gte, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { PgOrdersDb } from "../db/handle.pg";
import type { PgDataVersion } from "../db/version.pg";
import { ledger, orders, users } from "../db/schema.pg";
import { type Built, changeOf, DEEP, FILTER_COLUMN, inOrder, type LogRow, type Plan, planOf, Positions, RETAIN, SORT_COLUMN } from "./positions";
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
  private readonly positions = new Positions<OrderRow>();
  private catching: Promise<void> | undefined;
  private readonly building = new Map<string, ReturnType<PgOrderStore["build"]>>();

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
   * A page of a kept list (see positions.ts): its ids are sliced here; its rows come from memory when
   * kept and nothing was written since this turn's version, else from one statement that also reads
   * the data version. Only if that is the version the list is exact at is the page used; else the same
   * statement brought the change log since, the list catches up and the page is read again. Shallow
   * pages and sorts no kept list serves: total and page in one statement (OFFSET).
   */
  async page(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }> {
    const plan = planOf(filter, sort);
    for (let attempt = 0; plan && attempt < 3; attempt++) {
      let list = this.positions.get(plan) ?? (offset >= DEEP ? await this.build(plan) : undefined);
      if (!list) break;
      // The version as read once this turn (shared with the reply cache): behind it, the lists catch up
      // first, in one read of the log shared by every request that found them behind. After that they
      // are at least as new as that version, so it is not read again.
      if (attempt === 0 && (await this.version.current()) > list.at) {
        await this.catchUp();
        list = this.positions.get(plan);
        if (!list) continue;
      }
      const at = list.at;
      const ids = list.page(plan.dir, limit, offset);
      const total = list.n;
      const kept = this.positions.rowsOf(ids, at);
      if (kept) return { rows: kept, total };
      const since = this.positions.oldest();
      const r = await this.rowsAt(ids, at, since);
      if (r.version === at) {
        const rows = inOrder(ids, r.rows);
        if (rows) {
          this.positions.remember(r.rows, at);
          return { rows, total };
        }
        this.positions.forget();
        break;
      }
      if (r.log) this.positions.apply(since, r.version, r.log.map(changeOf), since >= r.version - RETAIN);
    }
    const [kind, v] = filterOf(filter);
    const keys: SortColumn[] = sort.map((s) => ({ col: SEEK_COLUMN[s.field], dir: s.dir }));
    // A total order, so pages never overlap or skip rows that tie on the sort fields.
    if (!sort.some((s) => s.field === "id")) keys.push({ col: "id", dir: sort[sort.length - 1].dir });
    return this.pageStatement(filter, sql`${sql.raw(FILTER_COLUMN[kind])} = ${v}`, keys, limit, offset);
  }

  /** Reads the log since the oldest kept position and applies it; concurrent callers share one read. */
  private catchUp(): Promise<void> {
    this.catching ??= (async () => {
      try {
        const since = this.positions.oldest();
        const r = await this.rowsAt([], -1, since);
        this.positions.apply(since, r.version, (r.log ?? []).map(changeOf), since >= r.version - RETAIN);
      } finally {
        this.catching = undefined;
      }
    })();
    return this.catching;
  }

  /**
   * The data version, the rows of `ids`, and (only when the version is not `at`) the change log after
   * `since` as JSON, in one statement and so one snapshot. Bigints are cast so they arrive as numbers.
   */
  private async rowsAt(ids: number[], at: number, since: number): Promise<{ version: number; rows: OrderRow[]; log?: LogRow[] }> {
    const res = await this.db.execute<Record<string, unknown>>(sql`
      SELECT meta.v AS "version", meta.log, o.id, o.description, o.price::float8 AS price, o.status, o.created_at::float8 AS "createdAt",
             o.customer_id AS "customerId", c.username AS "customerName", o.performer_id AS "performerId", p.username AS "performerName"
      FROM (SELECT d.v::float8 AS v, CASE WHEN d.v = ${at} THEN NULL ELSE (
              SELECT json_agg(json_build_object('seq', l.v, 'order_id', l.order_id, 'old_status', l.old_status, 'old_customer', l.old_customer,
                'old_performer', l.old_performer, 'old_created', l.old_created, 'old_price', l.old_price, 'new_status', l.new_status,
                'new_customer', l.new_customer, 'new_performer', l.new_performer, 'new_created', l.new_created, 'new_price', l.new_price)
                ORDER BY l.v, l.order_id)
              FROM order_changes l WHERE l.v > ${since}) END AS log
            FROM data_version d WHERE d.id = 1) AS meta
      LEFT JOIN (orders o JOIN users c ON c.id = o.customer_id LEFT JOIN users p ON p.id = o.performer_id)
        ON o.id = ANY(string_to_array(${ids.join(",")}, ',')::int[])`);
    const all = [...res];
    const log = all[0].log;
    return {
      version: Number(all[0].version),
      rows: all.filter((r) => r.id !== null).map(toRow),
      log: log === null ? undefined : ((typeof log === "string" ? JSON.parse(log) : log) as LogRow[] | null) ?? [],
    };
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
      SELECT meta.total, o.id, o.description, o.price, o.status, o.created_at AS "createdAt", o.customer_id AS "customerId",
             c.username AS "customerName", o.performer_id AS "performerId", p.username AS "performerName"
      FROM (SELECT ${total} AS total) AS meta
      LEFT JOIN (page JOIN orders o ON o.id = page.id JOIN users c ON c.id = o.customer_id LEFT JOIN users p ON p.id = o.performer_id) ON true
      ${sql.raw(outer)}`);
    const all = [...rows];
    return { total: Number(all[0].total ?? 0), rows: all.filter((r) => r.id !== null).map(toRow) };
  }

  /**
   * A list's order in one statement, with the data version it is exact for, kept for the next pages.
   * Concurrent callers share one build.
   */
  private build(plan: Plan): Promise<ReturnType<Positions<OrderRow>["put"]>> {
    let pending = this.building.get(plan.key);
    if (!pending) {
      pending = this.read(plan)
        .then((built) => this.positions.put(plan, built))
        .finally(() => this.building.delete(plan.key));
      this.building.set(plan.key, pending);
    }
    return pending;
  }

  private async read(plan: Plan): Promise<Built> {
    const col = SORT_COLUMN[plan.field];
    const by = col === "id" ? "id" : `${col}, id`;
    // An empty list has no row to carry the version: it takes one read before. An older position is
    // safe, only slower: catching up replays changes the list already has, and replay is idempotent.
    const before = await this.version.current();
    const rows: [number, number, number][] = await this.db.$client
      .unsafe(`SELECT (SELECT v FROM data_version WHERE id = 1)::float8 AS v, ${col}::float8 AS k, id FROM orders WHERE ${FILTER_COLUMN[plan.kind]} = $1 ORDER BY ${by}`, [plan.value])
      .values();
    return { at: rows.length ? rows[0][0] : before, keys: rows.map((r) => r[1]), ids: rows.map((r) => r[2]) };
  }

}

/** SQL column of each sort field (fixed names, never input). */
const SEEK_COLUMN = { ...SORT_COLUMN, description: "description" } as const;

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
