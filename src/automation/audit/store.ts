// What the audit trail needs from storage: append-only hash chains, one per tenant (and one for
// requests no tenant is known for), their heads and the anchors retention leaves. db/sqlite/audit.ts
// and db/pg/audit.ts implement it; this module imports no implementation.

/** The chain of entries that have no tenant (a sign-in for an unknown e-mail, a request without a valid key). */
export const NO_TENANT = "";

export type ActorType = "user" | "key" | "anonymous";
export type Outcome = "success" | "failure" | "denied" | "throttled";

/** An entry before it joins its chain: what happened, as the request hook saw it. */
export interface AuditInput {
  /** `aud_` id (time-sortable). */
  id: string;
  at: string;
  /** The tenant's id, or NO_TENANT. */
  tenantKey: string;
  actorType: ActorType;
  actorId: string | null;
  actorName: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  requestId: string | null;
  address: string | null;
  outcome: Outcome;
  status: number;
}

/** An entry in its chain: `seq` is its position (1, 2, ...), `hash` covers its fields and `prevHash`. */
export interface AuditRow extends AuditInput {
  seq: number;
  prevHash: string;
  hash: string;
}

/** A chain's end: its last position and that entry's hash. */
export interface ChainPoint {
  seq: number;
  hash: string;
}

/** What retention left of a chain's pruned start: the last pruned entry's position, hash and time. */
export interface AuditAnchor extends ChainPoint {
  at: string;
  prunedAt: string;
}

export interface AuditFilter {
  tenantKey: string;
  actorId?: string;
  action?: string;
  resourceId?: string;
  /** Inclusive lower bound on `at`. */
  since?: string;
  /** Exclusive upper bound on `at`. */
  until?: string;
}

export interface AuditStore {
  /**
   * Appends `entries` in order, each at the end of its tenant's chain (prev_hash = the head's hash,
   * hash computed by chain.ts), and advances the heads, all in one transaction. Appends to one chain
   * are serialized in the database (SQLite: the write transaction; PostgreSQL: a lock on the chain's
   * head row), so no two processes ever fork a chain.
   */
  append(entries: AuditInput[]): Promise<void>;
  /** Newest first (by position), entries matching `filter` before position `beforeSeq` (when given), at most `limit`. */
  list(filter: AuditFilter, limit: number, beforeSeq?: number): Promise<AuditRow[]>;
  /** Oldest first, entries of the chain after position `afterSeq` matching `filter`, at most `limit` (verify and export page through it). */
  range(filter: AuditFilter, afterSeq: number, limit: number): Promise<AuditRow[]>;
  /** The entry of the chain whose hash this is (verify's question "where did this predecessor go"). */
  byHash(tenantKey: string, hash: string): Promise<AuditRow | undefined>;
  /** The chain's head; undefined before its first entry. */
  head(tenantKey: string): Promise<ChainPoint | undefined>;
  /** What retention left at the chain's start; undefined when nothing was ever pruned. */
  anchor(tenantKey: string): Promise<AuditAnchor | undefined>;
  /** Every chain (with a head or an anchor). */
  chains(): Promise<string[]>;
  /**
   * Deletes each chain's oldest entries with `at` before `before`, from the start only (stopping at the
   * first younger entry), and moves the chain's anchor to the last one deleted, in one transaction per
   * chain. How many entries went.
   */
  prune(before: string, now: string): Promise<number>;
}

// The hash chain. An entry's hash is sha256 over a canonical serialization of its own fields and its
// predecessor's hash, so changing any field, removing an entry or moving one breaks the links after it.
// Its position (`seq`) is deliberately not hashed: a moved entry still hashes to its own value, which is
// how verify tells "reordered" from "changed".

/** The predecessor of a chain's first entry (and what an anchor-less chain starts from). */
export const GENESIS = "0".repeat(64);

/**
 * The canonical serialization: a JSON array of the fields in a fixed order (strings, numbers, nulls:
 * JSON.stringify of an array is deterministic), version 1. Any change to it is a new version.
 */
export function canonical(e: AuditInput, prevHash: string): string {
  return JSON.stringify([
    1,
    e.tenantKey,
    e.id,
    e.at,
    e.actorType,
    e.actorId,
    e.actorName,
    e.action,
    e.resourceType,
    e.resourceId,
    e.requestId,
    e.address,
    e.outcome,
    e.status,
    prevHash,
  ]);
}

export function entryHash(e: AuditInput, prevHash: string): string {
  return hashOf(canonical(e, prevHash));
}

/** The hash of a canonical serialization (a store that needs the serialization too computes it once). */
export function hashOf(serialized: string): string {
  return Bun.SHA256.hash(serialized, "hex");
}
