// The audit trail on PostgreSQL (db/automation/pg/0420_audit_blocks.sql): blocks of entries, one per
// chain per appended batch (src/automation/db/audit-blocks.ts). An append is one transaction that locks
// the head row of every chain it extends (taken in key order, so two batches never deadlock), inserts
// the linked blocks and moves the heads: two instances appending to one chain wait for each other
// instead of forking it.
//
// Usually that transaction is one statement: the store remembers the heads it last wrote, links the
// batch onto them, and the statement locks the heads, checks they are still those, and only then
// inserts and moves them (else it writes nothing). When a head is not known here or another instance
// moved it, the batch goes the long way: a transaction that first locks (or creates) the heads and
// reads them, then links the entries onto what it read.
import { GENESIS, type AuditAnchor, type AuditFilter, type AuditInput, type AuditRow, type AuditStore, type ChainPoint } from "../../audit/store";
import { BLOCKS_PER_READ, cutBlocks, findHash, linkBlocks, listFromBlocks, needles, rangeFromBlocks, repack, type Block, type ReadBlocks, type SpanBlock } from "../audit-blocks";
import { int, type Pg, plain } from "./rows";

const BLOCK = `tenant_key AS "tenantKey", first_seq AS "firstSeq", last_seq AS "lastSeq", to_char(last_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastAt", entries`;

const spans = (rs: Record<string, unknown>[]): SpanBlock[] =>
  rs.map((r) => ({ tenantKey: String(r.tenantKey), firstSeq: int(r.firstSeq), lastSeq: int(r.lastSeq), lastAt: String(r.lastAt), entries: String(r.entries) }));

/** `VALUES` of `n` blocks, their parameters numbered from `$from`. */
const blockValues = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => {
    const p = from + i * 6;
    return `($${p}::text, $${p + 1}::bigint, $${p + 2}::bigint, $${p + 3}::timestamptz, $${p + 4}::timestamptz, $${p + 5}::text)`;
  }).join(", ");
const blockArgs = (blocks: Block[]) => blocks.flatMap((b) => [b.tenantKey, b.firstSeq, b.lastSeq, b.firstAt, b.lastAt, b.entries]);

/** The heads a batch moved, as its statement reads them. */
const movedJson = (before: Map<string, ChainPoint> | undefined, heads: Map<string, ChainPoint>) =>
  JSON.stringify([...heads].map(([k, h]) => ({ k, s: before?.get(k)?.seq ?? null, h: before?.get(k)?.hash ?? null, ns: h.seq, nh: h.hash })));

/** The one-statement append of `n` blocks (parameters: the moved heads, then the blocks), by block count. */
const onKnown = new Map<number, string>();
const onKnownSql = (n: number) => {
  let sql = onKnown.get(n);
  if (!sql) {
    sql = `WITH x AS MATERIALIZED (SELECT * FROM json_to_recordset(CAST($1 AS text)::json) AS x(k text, s bigint, h text, ns bigint, nh text)),
       locked AS MATERIALIZED (SELECT tenant_key, seq, hash FROM audit_chains WHERE tenant_key IN (SELECT k FROM x) ORDER BY tenant_key FOR UPDATE),
       ok AS MATERIALIZED (SELECT count(*) = (SELECT count(*) FROM x) AS ok FROM locked JOIN x ON x.k = locked.tenant_key AND x.s = locked.seq AND x.h = locked.hash),
       added AS (INSERT INTO audit_blocks (tenant_key, first_seq, last_seq, first_at, last_at, entries)
         SELECT * FROM (VALUES ${blockValues(n, 2)}) AS v WHERE (SELECT ok FROM ok) RETURNING 1)
       UPDATE audit_chains c SET seq = x.ns, hash = x.nh FROM x
       WHERE c.tenant_key = x.k AND (SELECT ok FROM ok) AND (SELECT count(*) FROM added) >= 0 RETURNING c.tenant_key`;
    onKnown.set(n, sql);
  }
  return sql;
};

export class PgAuditStore implements AuditStore {
  /** The heads this store last wrote (or read under their lock): the one-statement append hashes onto them. */
  private readonly known = new Map<string, ChainPoint>();

  constructor(readonly pg: Pg) {}

  async append(entries: AuditInput[]): Promise<void> {
    if (entries.length === 0) return;
    const keys = [...new Set(entries.map((e) => e.tenantKey))].sort();
    try {
      if (keys.every((k) => this.known.has(k)) && (await this.appendOnKnown(entries, keys))) return;
      await this.appendLocked(entries, keys);
    } catch (err) {
      for (const k of keys) this.known.delete(k);
      throw err;
    }
  }

  /**
   * One statement (one transaction): locks the heads in key order, and when each is still the one this
   * store knows, inserts the batch's blocks linked onto them and moves them. False when a head had moved
   * (another instance appended): nothing was written.
   */
  private async appendOnKnown(entries: AuditInput[], keys: string[]): Promise<boolean> {
    const before = new Map(keys.map((k) => [k, this.known.get(k)!]));
    const heads = new Map(before);
    const blocks = linkBlocks(entries, (k) => before.get(k)!, heads);
    const moved = await this.pg.unsafe(onKnownSql(blocks.length), [movedJson(before, heads), ...blockArgs(blocks)]);
    if (moved.length !== keys.length) return false;
    for (const [k, h] of heads) this.known.set(k, h);
    return true;
  }

  /** The long way: a transaction that locks (creating where needed) and reads the heads, then appends onto them. */
  private async appendLocked(entries: AuditInput[], keys: string[]): Promise<void> {
    const heads = new Map<string, ChainPoint>();
    await this.pg.begin(async (tx) => {
      // Creates each head at its chain's start (its anchor, else the genesis) or locks the existing one,
      // in key order.
      const locked = await tx.unsafe(
        `INSERT INTO audit_chains (tenant_key, seq, hash)
           SELECT k.value, coalesce(a.seq, 0), coalesce(a.hash, $2)
           FROM json_array_elements_text(CAST($1 AS text)::json) WITH ORDINALITY AS k(value, n) LEFT JOIN audit_anchors a ON a.tenant_key = k.value
           ORDER BY k.n
         ON CONFLICT (tenant_key) DO UPDATE SET seq = audit_chains.seq RETURNING tenant_key, seq, hash`,
        [JSON.stringify(keys), GENESIS],
      );
      const lockedHeads = new Map<string, ChainPoint>();
      for (const r of locked as { tenant_key: string; seq: unknown; hash: string }[]) lockedHeads.set(r.tenant_key, { seq: int(r.seq), hash: String(r.hash) });
      const blocks = linkBlocks(entries, (k) => lockedHeads.get(k)!, heads);
      await this.insertBlocks(tx, blocks);
      await tx.unsafe(
        `UPDATE audit_chains c SET seq = x.ns, hash = x.nh FROM json_to_recordset(CAST($1 AS text)::json) AS x(k text, s bigint, h text, ns bigint, nh text) WHERE c.tenant_key = x.k`,
        [movedJson(undefined, heads)],
      );
    });
    for (const [k, h] of heads) this.known.set(k, h);
  }

  private async insertBlocks(tx: Pg, blocks: Block[]): Promise<void> {
    await tx.unsafe(`INSERT INTO audit_blocks (tenant_key, first_seq, last_seq, first_at, last_at, entries) VALUES ${blockValues(blocks.length, 1)}`, blockArgs(blocks));
  }

  private readonly read: ReadBlocks = async (f, dir, bound) => {
    const args: unknown[] = [f.tenantKey, bound];
    const parts = ["tenant_key = $1", dir === "desc" ? "first_seq < $2" : "last_seq > $2"];
    const add = (sql: string, v: unknown) => (args.push(v), parts.push(sql.replace("?", `$${args.length}`)));
    for (const n of needles(f)) add("strpos(entries, ?) > 0", n);
    if (f.since !== undefined) add("last_at >= ?", f.since);
    if (f.until !== undefined) add("first_at < ?", f.until);
    const order = dir === "desc" ? "first_seq DESC" : "last_seq";
    return spans(await this.pg.unsafe(`SELECT ${BLOCK} FROM audit_blocks WHERE ${parts.join(" AND ")} ORDER BY ${order} LIMIT ${BLOCKS_PER_READ}`, args));
  };

  async list(filter: AuditFilter, limit: number, beforeSeq?: number): Promise<AuditRow[]> {
    return listFromBlocks(this.read, filter, limit, beforeSeq);
  }

  async range(filter: AuditFilter, afterSeq: number, limit: number): Promise<AuditRow[]> {
    return rangeFromBlocks(this.read, filter, afterSeq, limit);
  }

  async byHash(tenantKey: string, hash: string): Promise<AuditRow | undefined> {
    return findHash(spans(await this.pg.unsafe(`SELECT ${BLOCK} FROM audit_blocks WHERE tenant_key = $1 AND strpos(entries, $2) > 0 ORDER BY first_seq`, [tenantKey, hash])), hash);
  }

  async head(tenantKey: string): Promise<ChainPoint | undefined> {
    const [r] = await this.pg`SELECT seq, hash FROM audit_chains WHERE tenant_key = ${tenantKey}`;
    return r ? { seq: int(r.seq), hash: String(r.hash) } : undefined;
  }

  async anchor(tenantKey: string): Promise<AuditAnchor | undefined> {
    const [r] = await this.pg.unsafe(`SELECT seq, hash, at, pruned_at AS "prunedAt" FROM audit_anchors WHERE tenant_key = $1`, [tenantKey]);
    if (!r) return undefined;
    const a = plain<AuditAnchor>(r);
    return { ...a, seq: int(a.seq) };
  }

  async chains(): Promise<string[]> {
    const rs = await this.pg`SELECT tenant_key AS k FROM audit_chains UNION SELECT tenant_key FROM audit_anchors ORDER BY 1`;
    return (rs as { k: string }[]).map((r) => r.k);
  }

  async prune(before: string, now: string): Promise<number> {
    let total = 0;
    for (const key of await this.chains()) {
      total += await this.pg.begin(async (tx) => {
        // The head's lock keeps appends out while the chain's start moves.
        await tx`SELECT 1 FROM audit_chains WHERE tenant_key = ${key} FOR UPDATE`;
        // From the start only: the oldest entries up to the first one that is young enough.
        let gone = 0;
        let last: AuditRow | undefined;
        for (let after = Number.MIN_SAFE_INTEGER; ; ) {
          const blocks = spans(await tx.unsafe(`SELECT ${BLOCK} FROM audit_blocks WHERE tenant_key = $1 AND last_seq > $2 ORDER BY last_seq LIMIT ${BLOCKS_PER_READ}`, [key, after]));
          const cut = cutBlocks(blocks, before);
          const drop = blocks.slice(0, cut.cut ? cut.whole + 1 : cut.whole).map((b) => b.firstSeq);
          if (drop.length) await tx.unsafe(`DELETE FROM audit_blocks WHERE tenant_key = $1 AND first_seq IN (SELECT json_array_elements_text(CAST($2 AS text)::json)::bigint)`, [key, JSON.stringify(drop)]);
          if (cut.cut) await this.insertBlocks(tx, [repack(cut.cut)]);
          gone += cut.gone;
          last = cut.last ?? last;
          if (cut.stopped || blocks.length < BLOCKS_PER_READ) break;
          after = blocks.at(-1)!.lastSeq;
        }
        if (!last) return 0;
        await tx`INSERT INTO audit_anchors (tenant_key, seq, hash, at, pruned_at) VALUES (${key}, ${last.seq}, ${last.hash}, ${last.at}, ${now})
          ON CONFLICT (tenant_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at, pruned_at = excluded.pruned_at`;
        return gone;
      });
    }
    return total;
  }
}
