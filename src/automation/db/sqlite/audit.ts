// The audit trail on SQLite (db/automation/0420_audit_blocks.sql): blocks of entries, one per chain per
// appended batch (src/automation/db/audit-blocks.ts). An append is one IMMEDIATE transaction: it reads
// each chain's head, inserts the batch's blocks linked to it and moves the head, so appends (from this
// process or another on the same file) are serialized and a chain never forks.
import type { Database, Statement } from "bun:sqlite";
import { GENESIS, type AuditAnchor, type AuditFilter, type AuditInput, type AuditRow, type AuditStore, type ChainPoint } from "../../audit/store";
import { BLOCKS_PER_READ, cutBlocks, findHash, linkBlocks, listFromBlocks, needles, rangeFromBlocks, repack, type Block, type ReadBlocks, type SpanBlock } from "../audit-blocks";

const BLOCK = `tenant_key AS tenantKey, first_seq AS firstSeq, last_seq AS lastSeq, last_at AS lastAt, entries`;

type Bind = string | number;

export class SqliteAuditStore implements AuditStore {
  private readonly headOf: Statement<ChainPoint, [string]>;
  private readonly insert: Statement<unknown, Bind[]>;
  private readonly move: Statement<unknown, [string, number, string]>;

  constructor(readonly sqlite: Database) {
    this.headOf = sqlite.prepare<ChainPoint, [string]>("SELECT seq, hash FROM audit_chains WHERE tenant_key = ?");
    this.insert = sqlite.prepare<unknown, Bind[]>("INSERT INTO audit_blocks (tenant_key, first_seq, last_seq, first_at, last_at, entries) VALUES (?, ?, ?, ?, ?, ?)");
    this.move = sqlite.prepare("INSERT INTO audit_chains (tenant_key, seq, hash) VALUES (?, ?, ?) ON CONFLICT (tenant_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash");
  }

  async append(entries: AuditInput[]): Promise<void> {
    if (entries.length === 0) return;
    this.sqlite.transaction(() => {
      const heads = new Map<string, ChainPoint>();
      for (const b of linkBlocks(entries, (k) => this.headOf.get(k) ?? this.start(k), heads)) this.write(b);
      for (const [key, h] of heads) this.move.run(key, h.seq, h.hash);
    }).immediate();
  }

  private write(b: Block): void {
    this.insert.run(b.tenantKey, b.firstSeq, b.lastSeq, b.firstAt, b.lastAt, b.entries);
  }

  /** Where a chain without a head starts: after its anchor (all pruned), else at the genesis. */
  private start(tenantKey: string): ChainPoint {
    return this.sqlite.query<ChainPoint, [string]>("SELECT seq, hash FROM audit_anchors WHERE tenant_key = ?").get(tenantKey) ?? { seq: 0, hash: GENESIS };
  }

  private readonly read: ReadBlocks = async (f, dir, bound) => {
    const parts = ["tenant_key = ?", dir === "desc" ? "first_seq < ?" : "last_seq > ?"];
    const args: Bind[] = [f.tenantKey, bound];
    for (const n of needles(f)) (parts.push("instr(entries, ?) > 0"), args.push(n));
    if (f.since !== undefined) (parts.push("last_at >= ?"), args.push(f.since));
    if (f.until !== undefined) (parts.push("first_at < ?"), args.push(f.until));
    const order = dir === "desc" ? "first_seq DESC" : "last_seq";
    return this.sqlite.query<SpanBlock, Bind[]>(`SELECT ${BLOCK} FROM audit_blocks WHERE ${parts.join(" AND ")} ORDER BY ${order} LIMIT ${BLOCKS_PER_READ}`).all(...args);
  };

  async list(filter: AuditFilter, limit: number, beforeSeq?: number): Promise<AuditRow[]> {
    return listFromBlocks(this.read, filter, limit, beforeSeq);
  }

  async range(filter: AuditFilter, afterSeq: number, limit: number): Promise<AuditRow[]> {
    return rangeFromBlocks(this.read, filter, afterSeq, limit);
  }

  async byHash(tenantKey: string, hash: string): Promise<AuditRow | undefined> {
    const blocks = this.sqlite.query<SpanBlock, [string, string]>(`SELECT ${BLOCK} FROM audit_blocks WHERE tenant_key = ? AND instr(entries, ?) > 0 ORDER BY first_seq`).all(tenantKey, hash);
    return findHash(blocks, hash);
  }

  async head(tenantKey: string): Promise<ChainPoint | undefined> {
    return this.headOf.get(tenantKey) ?? undefined;
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
    const page = this.sqlite.query<SpanBlock, [string, number]>(`SELECT ${BLOCK} FROM audit_blocks WHERE tenant_key = ? AND last_seq > ? ORDER BY last_seq LIMIT ${BLOCKS_PER_READ}`);
    const drop = this.sqlite.query<unknown, [string, number]>("DELETE FROM audit_blocks WHERE tenant_key = ? AND first_seq = ?");
    let total = 0;
    for (const key of await this.chains()) {
      total += this.sqlite.transaction(() => {
        // From the start only: the oldest entries up to the first one that is young enough.
        let gone = 0;
        let last: AuditRow | undefined;
        for (let after = Number.MIN_SAFE_INTEGER; ; ) {
          const blocks = page.all(key, after);
          const cut = cutBlocks(blocks, before);
          for (const b of blocks.slice(0, cut.whole)) drop.run(key, b.firstSeq);
          if (cut.cut) (drop.run(key, blocks[cut.whole]!.firstSeq), this.write(repack(cut.cut)));
          gone += cut.gone;
          last = cut.last ?? last;
          if (cut.stopped || blocks.length < BLOCKS_PER_READ) break;
          after = blocks.at(-1)!.lastSeq;
        }
        if (!last) return 0;
        this.sqlite
          .query("INSERT INTO audit_anchors (tenant_key, seq, hash, at, pruned_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at, pruned_at = excluded.pruned_at")
          .run(key, last.seq, last.hash, last.at, now);
        return gone;
      }).immediate();
    }
    return total;
  }
}
