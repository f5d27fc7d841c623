// The audit trail on PostgreSQL (db/automation/pg/0040_audit.sql). An append is one transaction that
// locks the head row of every chain it extends (taken in key order, so two batches never deadlock),
// inserts the linked entries and moves the heads: two instances appending to one chain wait for each
// other instead of forking it.
//
// Usually that transaction is one statement: the store remembers the heads it last wrote, hashes the
// batch onto them, and the statement locks the heads, checks they are still those, and only then
// inserts and moves them (else it writes nothing). When a head is not known here or another instance
// moved it, the batch goes the long way: a transaction that first locks (or creates) the heads and
// reads them, then hashes the entries onto what it read.
import { canonical, GENESIS, hashOf, type AuditAnchor, type AuditFilter, type AuditInput, type AuditRow, type AuditStore, type ChainPoint } from "../../audit/store";
import { int, type Pg, plain, plainRows } from "./rows";

const ROW = `tenant_key AS "tenantKey", seq, id, at, actor_type AS "actorType", actor_id AS "actorId", actor_name AS "actorName", action,
  resource_type AS "resourceType", resource_id AS "resourceId", request_id AS "requestId", address, outcome, status, prev_hash AS "prevHash", hash`;

function where(f: AuditFilter): { sql: string; args: unknown[] } {
  const args: unknown[] = [f.tenantKey];
  const parts = ["tenant_key = $1"];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    parts.push(sql.replace("?", `$${args.length}`));
  };
  if (f.actorId !== undefined) add("actor_id = ?", f.actorId);
  if (f.action !== undefined) add("action = ?", f.action);
  if (f.resourceId !== undefined) add("resource_id = ?", f.resourceId);
  if (f.since !== undefined) add("at >= ?", f.since);
  if (f.until !== undefined) add("at < ?", f.until);
  return { sql: parts.join(" AND "), args };
}

const rows = (rs: Record<string, unknown>[]): AuditRow[] => plainRows<AuditRow>(rs).map((r) => ({ ...r, seq: int(r.seq), status: int(r.status) }));

// A batch travels as one text parameter: its rows separated by RS, a row's 16 fields (the table's
// column order) by US, a null field written as GS. PostgreSQL splits that (string_to_array) for a
// fraction of what reading the same batch as jsonb costs (~2 against ~9 us a row, measured). A batch
// where a value holds one of these three characters travels as a jsonb array of arrays instead.
const RS = "\x1e";
const US = "\x1f";
const GS = "\x1d";
const COLUMNS = "tenant_key, seq, id, at, actor_type, actor_id, actor_name, action, resource_type, resource_id, request_id, address, outcome, status, prev_hash, hash";
const FROM_TEXT = `SELECT f[1], f[2]::bigint, f[3], f[4]::timestamptz, f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14]::int, f[15], f[16]
  FROM unnest(string_to_array(CAST($1 AS text), E'\\x1e')) AS r, LATERAL string_to_array(r, E'\\x1f', E'\\x1d') AS f`;
const FROM_JSON = `SELECT r->>0, (r->>1)::bigint, r->>2, (r->>3)::timestamptz, r->>4, r->>5, r->>6, r->>7, r->>8, r->>9, r->>10, r->>11, r->>12, (r->>13)::int, r->>14, r->>15
  FROM jsonb_array_elements(CAST($1 AS text)::jsonb) AS r`;

/**
 * Whether an entry's fields hold a separator: its canonical serialization (computed for its hash
 * anyway) is JSON, where those characters appear escaped as \u001d-\u001f (a value's own backslash
 * doubled: `\\u001e` typed in a value is a false alarm, and the batch goes as JSON, which is correct).
 */
const SEPARATOR_ESCAPED = /\\u001[def]/;

/** The batch hashed onto `heads` (which it moves to the batch's last entries): the parameter and its form. */
function linked(entries: AuditInput[], heads: Map<string, ChainPoint>): { batch: string; text: boolean } {
  const lines: string[] = [];
  const links: { seq: number; prev: string; hash: string }[] = [];
  let text = true;
  for (const e of entries) {
    const at = heads.get(e.tenantKey)!;
    const seq = at.seq + 1;
    const serialized = canonical(e, at.hash);
    const hash = hashOf(serialized);
    heads.set(e.tenantKey, { seq, hash });
    links.push({ seq, prev: at.hash, hash });
    if (text && serialized.includes("\\u001") && SEPARATOR_ESCAPED.test(serialized)) text = false;
    if (text) {
      lines.push(
        `${e.tenantKey}${US}${seq}${US}${e.id}${US}${e.at}${US}${e.actorType}${US}${e.actorId ?? GS}${US}${e.actorName ?? GS}${US}${e.action}${US}${e.resourceType ?? GS}${US}` +
          `${e.resourceId ?? GS}${US}${e.requestId ?? GS}${US}${e.address ?? GS}${US}${e.outcome}${US}${e.status}${US}${at.hash}${US}${hash}`,
      );
    }
  }
  if (text) return { batch: lines.join(RS), text };
  const rows = entries.map((e, i) => {
    const l = links[i]!;
    return [e.tenantKey, l.seq, e.id, e.at, e.actorType, e.actorId, e.actorName, e.action, e.resourceType, e.resourceId, e.requestId, e.address, e.outcome, e.status, l.prev, l.hash];
  });
  return { batch: JSON.stringify(rows), text };
}

/** The heads a batch moved, as its statement reads them. */
const movedJson = (before: Map<string, ChainPoint> | undefined, heads: Map<string, ChainPoint>) =>
  JSON.stringify([...heads].map(([k, h]) => ({ k, s: before?.get(k)?.seq ?? null, h: before?.get(k)?.hash ?? null, ns: h.seq, nh: h.hash })));

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
   * store knows, inserts the batch hashed onto them and moves them. False when a head had moved (another
   * instance appended): nothing was written.
   */
  private async appendOnKnown(entries: AuditInput[], keys: string[]): Promise<boolean> {
    const before = new Map(keys.map((k) => [k, this.known.get(k)!]));
    const heads = new Map(before);
    const { batch, text } = linked(entries, heads);
    const moved = await this.pg.unsafe(
      `WITH x AS MATERIALIZED (SELECT * FROM json_to_recordset(CAST($2 AS text)::json) AS x(k text, s bigint, h text, ns bigint, nh text)),
       locked AS MATERIALIZED (SELECT tenant_key, seq, hash FROM audit_chains WHERE tenant_key IN (SELECT k FROM x) ORDER BY tenant_key FOR UPDATE),
       ok AS MATERIALIZED (SELECT count(*) = (SELECT count(*) FROM x) AS ok FROM locked JOIN x ON x.k = locked.tenant_key AND x.s = locked.seq AND x.h = locked.hash),
       added AS (INSERT INTO audit_entries (${COLUMNS}) ${text ? FROM_TEXT : FROM_JSON} WHERE (SELECT ok FROM ok) RETURNING 1)
       UPDATE audit_chains c SET seq = x.ns, hash = x.nh FROM x
       WHERE c.tenant_key = x.k AND (SELECT ok FROM ok) AND (SELECT count(*) FROM added) >= 0 RETURNING c.tenant_key`,
      [batch, movedJson(before, heads)],
    );
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
      for (const r of locked as { tenant_key: string; seq: unknown; hash: string }[]) heads.set(r.tenant_key, { seq: int(r.seq), hash: String(r.hash) });
      const { batch, text } = linked(entries, heads);
      await tx.unsafe(
        `WITH added AS (INSERT INTO audit_entries (${COLUMNS}) ${text ? FROM_TEXT : FROM_JSON} RETURNING 1)
         UPDATE audit_chains c SET seq = x.ns, hash = x.nh FROM json_to_recordset(CAST($2 AS text)::json) AS x(k text, s bigint, h text, ns bigint, nh text)
         WHERE c.tenant_key = x.k AND (SELECT count(*) FROM added) >= 0`,
        [batch, movedJson(undefined, heads)],
      );
    });
    for (const [k, h] of heads) this.known.set(k, h);
  }

  async list(filter: AuditFilter, limit: number, beforeSeq?: number): Promise<AuditRow[]> {
    const w = where(filter);
    if (beforeSeq !== undefined) (w.args.push(beforeSeq), (w.sql += ` AND seq < $${w.args.length}`));
    w.args.push(limit);
    return rows(await this.pg.unsafe(`SELECT ${ROW} FROM audit_entries WHERE ${w.sql} ORDER BY seq DESC LIMIT $${w.args.length}`, w.args));
  }

  async range(filter: AuditFilter, afterSeq: number, limit: number): Promise<AuditRow[]> {
    const w = where(filter);
    w.args.push(afterSeq, limit);
    return rows(await this.pg.unsafe(`SELECT ${ROW} FROM audit_entries WHERE ${w.sql} AND seq > $${w.args.length - 1} ORDER BY seq LIMIT $${w.args.length}`, w.args));
  }

  async byHash(tenantKey: string, hash: string): Promise<AuditRow | undefined> {
    return rows(await this.pg.unsafe(`SELECT ${ROW} FROM audit_entries WHERE tenant_key = $1 AND hash = $2 ORDER BY seq LIMIT 1`, [tenantKey, hash]))[0];
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
        const [stop] = await tx`SELECT seq FROM audit_entries WHERE tenant_key = ${key} AND at >= ${before} ORDER BY seq LIMIT 1`;
        const limit = stop ? int(stop.seq) : Number.MAX_SAFE_INTEGER;
        const [last] = await tx`SELECT seq, hash, at FROM audit_entries WHERE tenant_key = ${key} AND seq < ${limit} ORDER BY seq DESC LIMIT 1`;
        if (!last) return 0;
        const l = plain<{ seq: unknown; hash: string; at: string }>(last);
        const gone = await tx`DELETE FROM audit_entries WHERE tenant_key = ${key} AND seq <= ${int(l.seq)} RETURNING 1`;
        await tx`INSERT INTO audit_anchors (tenant_key, seq, hash, at, pruned_at) VALUES (${key}, ${int(l.seq)}, ${l.hash}, ${l.at}, ${now})
          ON CONFLICT (tenant_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at, pruned_at = excluded.pruned_at`;
        return gone.length;
      });
    }
    return total;
  }
}
