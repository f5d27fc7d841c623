// The audit trail on SQLite (db/automation/0040_audit.sql). An append is one IMMEDIATE transaction:
// it reads each chain's head, inserts the entries linked to it and moves the head, so appends (from
// this process or another on the same file) are serialized and a chain never forks.
import type { Database, Statement } from "bun:sqlite";
import { entryHash, GENESIS, type AuditAnchor, type AuditFilter, type AuditInput, type AuditRow, type AuditStore, type ChainPoint } from "../../audit/store";

const ROW = `tenant_key AS tenantKey, seq, id, at, actor_type AS actorType, actor_id AS actorId, actor_name AS actorName, action,
  resource_type AS resourceType, resource_id AS resourceId, request_id AS requestId, address, outcome, status, prev_hash AS prevHash, hash`;

function where(f: AuditFilter): { sql: string; args: (string | number)[] } {
  const parts = ["tenant_key = ?"];
  const args: (string | number)[] = [f.tenantKey];
  if (f.actorId !== undefined) (parts.push("actor_id = ?"), args.push(f.actorId));
  if (f.action !== undefined) (parts.push("action = ?"), args.push(f.action));
  if (f.resourceId !== undefined) (parts.push("resource_id = ?"), args.push(f.resourceId));
  if (f.since !== undefined) (parts.push("at >= ?"), args.push(f.since));
  if (f.until !== undefined) (parts.push("at < ?"), args.push(f.until));
  return { sql: parts.join(" AND "), args };
}

/** Rows per INSERT statement: one statement for a batch's rows costs less than one per row. */
const CHUNK = 32;
const TUPLE = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const insertSql = (rows: number) =>
  `INSERT INTO audit_entries (tenant_key, seq, id, at, actor_type, actor_id, actor_name, action, resource_type, resource_id, request_id, address, outcome, status, prev_hash, hash)
   VALUES ${Array.from({ length: rows }, () => TUPLE).join(", ")}`;

type Bind = string | number | null;

export class SqliteAuditStore implements AuditStore {
  private readonly headOf: Statement<ChainPoint, [string]>;
  private readonly insertChunk: Statement<unknown, Bind[]>;
  private readonly move: Statement<unknown, [string, number, string]>;

  constructor(readonly sqlite: Database) {
    this.headOf = sqlite.prepare<ChainPoint, [string]>("SELECT seq, hash FROM audit_chains WHERE tenant_key = ?");
    this.insertChunk = sqlite.prepare<unknown, Bind[]>(insertSql(CHUNK));
    this.move = sqlite.prepare("INSERT INTO audit_chains (tenant_key, seq, hash) VALUES (?, ?, ?) ON CONFLICT (tenant_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash");
  }

  async append(entries: AuditInput[]): Promise<void> {
    if (entries.length === 0) return;
    this.sqlite.transaction(() => {
      const heads = new Map<string, ChainPoint>();
      const values: Bind[] = [];
      for (const e of entries) {
        const at = heads.get(e.tenantKey) ?? this.headOf.get(e.tenantKey) ?? this.start(e.tenantKey);
        const seq = at.seq + 1;
        const hash = entryHash(e, at.hash);
        values.push(e.tenantKey, seq, e.id, e.at, e.actorType, e.actorId, e.actorName, e.action, e.resourceType, e.resourceId, e.requestId, e.address, e.outcome, e.status, at.hash, hash);
        heads.set(e.tenantKey, { seq, hash });
      }
      const width = 16;
      let i = 0;
      for (; i + CHUNK <= entries.length; i += CHUNK) this.insertChunk.run(...values.slice(i * width, (i + CHUNK) * width));
      if (i < entries.length) this.sqlite.query<unknown, Bind[]>(insertSql(entries.length - i)).run(...values.slice(i * width));
      for (const [key, h] of heads) this.move.run(key, h.seq, h.hash);
    }).immediate();
  }

  /** Where a chain without a head starts: after its anchor (all pruned), else at the genesis. */
  private start(tenantKey: string): ChainPoint {
    return this.sqlite.query<ChainPoint, [string]>("SELECT seq, hash FROM audit_anchors WHERE tenant_key = ?").get(tenantKey) ?? { seq: 0, hash: GENESIS };
  }

  async list(filter: AuditFilter, limit: number, beforeSeq?: number): Promise<AuditRow[]> {
    const w = where(filter);
    if (beforeSeq !== undefined) (w.sql += " AND seq < ?", w.args.push(beforeSeq));
    return this.sqlite.query<AuditRow, (string | number)[]>(`SELECT ${ROW} FROM audit_entries WHERE ${w.sql} ORDER BY seq DESC LIMIT ?`).all(...w.args, limit);
  }

  async range(filter: AuditFilter, afterSeq: number, limit: number): Promise<AuditRow[]> {
    const w = where(filter);
    return this.sqlite.query<AuditRow, (string | number)[]>(`SELECT ${ROW} FROM audit_entries WHERE ${w.sql} AND seq > ? ORDER BY seq LIMIT ?`).all(...w.args, afterSeq, limit);
  }

  async byHash(tenantKey: string, hash: string): Promise<AuditRow | undefined> {
    return this.sqlite.query<AuditRow, [string, string]>(`SELECT ${ROW} FROM audit_entries WHERE tenant_key = ? AND hash = ? ORDER BY seq LIMIT 1`).get(tenantKey, hash) ?? undefined;
  }

  async head(tenantKey: string): Promise<ChainPoint | undefined> {
    return this.sqlite.query<ChainPoint, [string]>("SELECT seq, hash FROM audit_chains WHERE tenant_key = ?").get(tenantKey) ?? undefined;
  }

  async anchor(tenantKey: string): Promise<AuditAnchor | undefined> {
    return (
      this.sqlite.query<AuditAnchor, [string]>("SELECT seq, hash, at, pruned_at AS prunedAt FROM audit_anchors WHERE tenant_key = ?").get(tenantKey) ?? undefined
    );
  }

  async chains(): Promise<string[]> {
    return this.sqlite
      .query<{ k: string }, []>("SELECT tenant_key AS k FROM audit_chains UNION SELECT tenant_key FROM audit_anchors ORDER BY 1")
      .all()
      .map((r) => r.k);
  }

  async prune(before: string, now: string): Promise<number> {
    let total = 0;
    for (const key of await this.chains()) {
      total += this.sqlite.transaction(() => {
        // From the start only: the oldest entries up to the first one that is young enough.
        const stop = this.sqlite.query<{ seq: number }, [string, string]>("SELECT seq FROM audit_entries WHERE tenant_key = ? AND at >= ? ORDER BY seq LIMIT 1").get(key, before);
        const last = this.sqlite
          .query<{ seq: number; hash: string; at: string }, [string, number]>("SELECT seq, hash, at FROM audit_entries WHERE tenant_key = ? AND seq < ? ORDER BY seq DESC LIMIT 1")
          .get(key, stop?.seq ?? Number.MAX_SAFE_INTEGER);
        if (!last) return 0;
        const gone = this.sqlite.query("DELETE FROM audit_entries WHERE tenant_key = ? AND seq <= ?").run(key, last.seq).changes;
        this.sqlite
          .query("INSERT INTO audit_anchors (tenant_key, seq, hash, at, pruned_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at, pruned_at = excluded.pruned_at")
          .run(key, last.seq, last.hash, last.at, now);
        return gone;
      }).immediate();
    }
    return total;
  }
}
