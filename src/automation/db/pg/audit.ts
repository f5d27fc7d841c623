// The audit trail on PostgreSQL (db/automation/pg/0040_audit.sql). An append is one transaction that
// first locks the head row of every chain it extends (an upsert that returns the head, taken in key
// order so two batches never deadlock), then inserts the linked entries and moves the heads (one statement,
// the batch as one JSON parameter): two
// instances appending to one chain wait for each other instead of forking it.
import { entryHash, GENESIS, type AuditAnchor, type AuditFilter, type AuditInput, type AuditRow, type AuditStore, type ChainPoint } from "../../audit/store";
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

export class PgAuditStore implements AuditStore {
  constructor(readonly pg: Pg) {}

  async append(entries: AuditInput[]): Promise<void> {
    if (entries.length === 0) return;
    const keys = [...new Set(entries.map((e) => e.tenantKey))].sort();
    await this.pg.begin(async (tx) => {
      // Creates each head at its chain's start (its anchor, else the genesis) or locks the existing one,
      // in key order. The whole batch then travels as one JSON parameter: binding 16 parameters an entry
      // cost more CPU than the statement itself.
      const locked = await tx.unsafe(
        `INSERT INTO audit_chains (tenant_key, seq, hash)
           SELECT k.value, coalesce(a.seq, 0), coalesce(a.hash, $2)
           FROM json_array_elements_text(CAST($1 AS text)::json) WITH ORDINALITY AS k(value, n) LEFT JOIN audit_anchors a ON a.tenant_key = k.value
           ORDER BY k.n
         ON CONFLICT (tenant_key) DO UPDATE SET seq = audit_chains.seq RETURNING tenant_key, seq, hash`,
        [JSON.stringify(keys), GENESIS],
      );
      const heads = new Map<string, ChainPoint>();
      for (const r of locked as { tenant_key: string; seq: unknown; hash: string }[]) heads.set(r.tenant_key, { seq: int(r.seq), hash: String(r.hash) });
      // Each row an array in the table's column order (half the bytes of objects to write and to parse),
      // read as jsonb: with json each of the 16 ->> scans the row's text again (2x the server's time a row).
      const rows: unknown[][] = [];
      for (const e of entries) {
        const at = heads.get(e.tenantKey)!;
        const seq = at.seq + 1;
        const hash = entryHash(e, at.hash);
        rows.push([e.tenantKey, seq, e.id, e.at, e.actorType, e.actorId, e.actorName, e.action, e.resourceType, e.resourceId, e.requestId, e.address, e.outcome, e.status, at.hash, hash]);
        heads.set(e.tenantKey, { seq, hash });
      }
      const moved = [...heads].map(([tenant_key, h]) => ({ tenant_key, seq: h.seq, hash: h.hash }));
      await tx.unsafe(
        `WITH added AS (INSERT INTO audit_entries (tenant_key, seq, id, at, actor_type, actor_id, actor_name, action, resource_type, resource_id, request_id, address, outcome, status, prev_hash, hash)
           SELECT r->>0, (r->>1)::bigint, r->>2, (r->>3)::timestamptz, r->>4, r->>5, r->>6, r->>7, r->>8, r->>9, r->>10, r->>11, r->>12, (r->>13)::int, r->>14, r->>15
           FROM jsonb_array_elements(CAST($1 AS text)::jsonb) AS r RETURNING 1)
         UPDATE audit_chains c SET seq = h.seq, hash = h.hash FROM json_to_recordset(CAST($2 AS text)::json) AS h(tenant_key text, seq bigint, hash text)
         WHERE c.tenant_key = h.tenant_key AND (SELECT count(*) FROM added) >= 0`,
        [JSON.stringify(rows), JSON.stringify(moved)],
      );
    });
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
