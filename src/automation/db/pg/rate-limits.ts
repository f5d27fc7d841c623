// RateLimitStore on PostgreSQL (migration db/automation/pg/0020_shared_state.sql): GCRA, one row per key.
// One statement per request: the conditional upsert takes the token (the row lock orders racing takes
// from every instance), and the same statement reads the key's arrival time for a denied request's
// Retry-After.
import type { RateDecision, RateLimitStore } from "../../tenancy/store";
import type { Pg } from "./rows";

export class PgRateLimitStore implements RateLimitStore {
  constructor(readonly pg: Pg) {}

  async take(key: string, nowUs: number, intervalUs: number, burstUs: number): Promise<RateDecision> {
    const now = String(nowUs);
    const [row] = await this.pg`WITH taken AS (
        INSERT INTO rate_limits (key_id, tat_us) VALUES (${key}, ${now}::bigint + ${intervalUs}::bigint)
        ON CONFLICT (key_id) DO UPDATE SET tat_us = GREATEST(rate_limits.tat_us, ${now}::bigint) + ${intervalUs}::bigint
        WHERE GREATEST(rate_limits.tat_us, ${now}::bigint) + ${intervalUs}::bigint - ${now}::bigint <= ${burstUs}::bigint
        RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS allowed, (SELECT tat_us FROM rate_limits WHERE key_id = ${key}) AS tat`;
    if (row.allowed) return { allowed: true };
    // The read sees the statement's snapshot: a row a racing instance inserted meanwhile reads as absent.
    const tat = row.tat === null ? nowUs : Number(row.tat);
    const wait = Math.max(tat, nowUs) + intervalUs - nowUs - burstUs;
    return { allowed: false, retryAfterUs: wait > 0 ? wait : intervalUs };
  }
}
