// The hash chain of the audit trail. An entry's hash is sha256 over a canonical serialization of its
// own fields and its predecessor's hash, so changing any field, removing an entry or moving one
// breaks the links after it. Its position (`seq`) is deliberately not hashed: a moved entry still
// hashes to its own value, which is how verify tells "reordered" from "changed".
import type { AuditInput } from "./store";

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
  return Bun.SHA256.hash(canonical(e, prevHash), "hex");
}
