// How both stores keep the audit trail: one row per chain per appended batch (a block), the batch's
// entries in it as one JSON text, instead of one row per entry. A row costs the database its tuple,
// its index entries and its WAL record whatever it holds; an entry costs ~300 bytes of a text it
// copies. So an append is one insert per chain it extends, and the list, export, verify and retention
// read blocks and look inside them here.
//
// A block: `tenant_key`, `first_seq` and `last_seq` (the positions of its first and last entries),
// `first_at` and `last_at` (the earliest and the latest `at` in it: what a time filter skips blocks
// by), `entries`: a JSON array of packed entries, oldest first, each
// `[seq, id, at, actorType, actorId, actorName, action, resourceType, resourceId, requestId, address, outcome, status, prevHash, hash]`.
// Nothing here trusts a block's columns for what verify checks: an entry's position, links and hash
// are its own.
import { canonical, hashOf, type AuditFilter, type AuditInput, type AuditRow, type ChainPoint } from "../audit/store";

type Packed = [number, string, string, AuditRow["actorType"], string | null, string | null, string, string | null, string | null, string | null, string | null, AuditRow["outcome"], number, string, string];

/** An entry as a block holds it. */
const pack = (e: AuditInput, seq: number, prevHash: string, hash: string): Packed => [
  seq, e.id, e.at, e.actorType, e.actorId, e.actorName, e.action, e.resourceType, e.resourceId, e.requestId, e.address, e.outcome, e.status, prevHash, hash,
];

/** A block as the stores write and read it. */
export interface Block {
  tenantKey: string;
  firstSeq: number;
  lastSeq: number;
  firstAt: string;
  lastAt: string;
  entries: string;
}

/** What a store reads of a block to look inside it. */
export type StoredBlock = Pick<Block, "tenantKey" | "entries">;

/**
 * Links `entries` (in order) onto their chains' heads: `headOf` gives a chain's head the first time
 * the batch meets it; `heads` ends holding every chain's new head. One block per chain, in the order
 * the chains first appear.
 */
export function linkBlocks(entries: AuditInput[], headOf: (tenantKey: string) => ChainPoint, heads = new Map<string, ChainPoint>()): Block[] {
  const packed = new Map<string, { block: Block; rows: Packed[] }>();
  for (const e of entries) {
    const at = heads.get(e.tenantKey) ?? headOf(e.tenantKey);
    const seq = at.seq + 1;
    const hash = hashOf(canonical(e, at.hash));
    heads.set(e.tenantKey, { seq, hash });
    const row = pack(e, seq, at.hash, hash);
    const b = packed.get(e.tenantKey);
    if (!b) {
      packed.set(e.tenantKey, { block: { tenantKey: e.tenantKey, firstSeq: seq, lastSeq: seq, firstAt: e.at, lastAt: e.at, entries: "" }, rows: [row] });
      continue;
    }
    b.rows.push(row);
    b.block.lastSeq = seq;
    if (e.at < b.block.firstAt) b.block.firstAt = e.at;
    if (e.at > b.block.lastAt) b.block.lastAt = e.at;
  }
  return [...packed.values()].map(({ block, rows }) => ({ ...block, entries: JSON.stringify(rows) }));
}

/** A block's entries, ordered by their own positions. */
export function unpack(b: StoredBlock): AuditRow[] {
  const rows = (JSON.parse(b.entries) as Packed[]).map(
    ([seq, id, at, actorType, actorId, actorName, action, resourceType, resourceId, requestId, address, outcome, status, prevHash, hash]): AuditRow => ({
      tenantKey: b.tenantKey,
      seq,
      id,
      at,
      actorType,
      actorId,
      actorName,
      action,
      resourceType,
      resourceId,
      requestId,
      address,
      outcome,
      status,
      prevHash,
      hash,
    }),
  );
  return rows.sort((a, b) => a.seq - b.seq);
}

/** Packs rows back into a block (retention rewrites the block it cuts). */
export function repack(rows: AuditRow[]): Block {
  const at = rows.map((r) => r.at).sort();
  return {
    tenantKey: rows[0]!.tenantKey,
    firstSeq: rows[0]!.seq,
    lastSeq: rows.at(-1)!.seq,
    firstAt: at[0]!,
    lastAt: at.at(-1)!,
    entries: JSON.stringify(rows.map((r) => pack(r, r.seq, r.prevHash, r.hash))),
  };
}

const matches = (r: AuditRow, f: AuditFilter) =>
  (f.actorId === undefined || r.actorId === f.actorId) &&
  (f.action === undefined || r.action === f.action) &&
  (f.resourceId === undefined || r.resourceId === f.resourceId) &&
  (f.since === undefined || r.at >= f.since) &&
  (f.until === undefined || r.at < f.until);

/**
 * Texts a block must contain to hold a match for `filter` (each value as JSON writes it, quotes
 * included): the stores skip other blocks in the database, and `matches` decides on the entries.
 */
export const needles = (f: AuditFilter): string[] => [f.actorId, f.action, f.resourceId].filter((v) => v !== undefined).map((v) => JSON.stringify(v));

/** Blocks read per query while paging. */
export const BLOCKS_PER_READ = 16;

/**
 * Reads blocks from the database, `BLOCKS_PER_READ` at a time, that may hold a match for the filter:
 * newest first (`dir` "desc": blocks starting before `bound`), or oldest first ("asc": blocks ending
 * after `bound`). Ordered by position.
 */
export type ReadBlocks = (filter: AuditFilter, dir: "asc" | "desc", bound: number) => Promise<(StoredBlock & { firstSeq: number; lastSeq: number })[]>;

/** Newest first: entries matching `filter` before position `beforeSeq`, at most `limit`. */
export async function listFromBlocks(read: ReadBlocks, filter: AuditFilter, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): Promise<AuditRow[]> {
  const out: AuditRow[] = [];
  for (let bound = beforeSeq; out.length < limit; ) {
    const blocks = await read(filter, "desc", bound);
    for (const b of blocks) {
      const rows = unpack(b);
      for (let i = rows.length - 1; i >= 0 && out.length < limit; i--) if (rows[i]!.seq < beforeSeq && matches(rows[i]!, filter)) out.push(rows[i]!);
    }
    if (blocks.length < BLOCKS_PER_READ) break;
    bound = blocks.at(-1)!.firstSeq;
  }
  return out;
}

/** Oldest first: entries matching `filter` after position `afterSeq`, at most `limit`. */
export async function rangeFromBlocks(read: ReadBlocks, filter: AuditFilter, afterSeq: number, limit: number): Promise<AuditRow[]> {
  const out: AuditRow[] = [];
  for (let bound = afterSeq; out.length < limit; ) {
    const blocks = await read(filter, "asc", bound);
    // In position order across the read's blocks too, not only inside each: an entry whose position
    // was edited into another block's span is met where verify can name it (reordered, not removed).
    const rows = blocks.length === 1 ? unpack(blocks[0]!) : blocks.flatMap(unpack).sort((a, b) => a.seq - b.seq);
    for (const r of rows) if (out.length < limit && r.seq > afterSeq && matches(r, filter)) out.push(r);
    if (blocks.length < BLOCKS_PER_READ) break;
    bound = blocks.at(-1)!.lastSeq;
  }
  return out;
}

/** The entry whose hash is `hash` among blocks that contain that text. */
export function findHash(blocks: StoredBlock[], hash: string): AuditRow | undefined {
  for (const b of blocks) {
    const hit = unpack(b).find((r) => r.hash === hash);
    if (hit) return hit;
  }
  return undefined;
}

/** A block as retention reads it: its span and times decide whether it must be opened. */
export type SpanBlock = StoredBlock & Pick<Block, "firstSeq" | "lastSeq" | "lastAt">;

/**
 * Where retention cuts a chain, given a page of its oldest blocks in order: the first entry with `at`
 * at or after `before` stops it. The first `whole` blocks go entirely, `cut` (when the stop is inside a
 * block) is what stays of that block, `last` the last entry that goes (the new anchor), `gone` how many
 * went; `stopped` false when the whole page goes and the next page must be read. A block whose latest
 * entry is older than `before` is not opened unless it is the page's last to go.
 */
export function cutBlocks(blocks: SpanBlock[], before: string): { whole: number; cut?: AuditRow[]; last?: AuditRow; gone: number; stopped: boolean } {
  let gone = 0;
  let lastWhole: SpanBlock | undefined;
  const lastOf = () => (lastWhole ? unpack(lastWhole).at(-1) : undefined);
  for (const [i, b] of blocks.entries()) {
    if (b.lastAt < before) {
      gone += b.lastSeq - b.firstSeq + 1;
      lastWhole = b;
      continue;
    }
    const rows = unpack(b);
    const stop = rows.findIndex((r) => r.at >= before);
    if (stop < 0) {
      gone += rows.length;
      lastWhole = b;
      continue;
    }
    if (stop === 0) return { whole: i, last: lastOf(), gone, stopped: true };
    return { whole: i, cut: rows.slice(stop), last: rows[stop - 1], gone: gone + stop, stopped: true };
  }
  return { whole: blocks.length, last: lastOf(), gone, stopped: false };
}
