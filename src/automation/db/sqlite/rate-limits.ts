// RateLimitStore over bun:sqlite (migration db/automation/0020_shared_state.sql): GCRA, one row per key.
import type { Database } from "bun:sqlite";
import type { RateDecision, RateLimitStore } from "../../tenancy/store";

export function sqliteRateLimitStore(sqlite: Database): RateLimitStore {
  // The token is taken by the upsert alone: a denied request writes nothing and returns no row.
  const take = sqlite.query<{ tat: number }, [string, number, number, number]>(
    `INSERT INTO rate_limits (key_id, tat_us) VALUES (?1, ?2 + ?3)
     ON CONFLICT (key_id) DO UPDATE SET tat_us = max(rate_limits.tat_us, ?2) + ?3
     WHERE max(rate_limits.tat_us, ?2) + ?3 - ?2 <= ?4
     RETURNING tat_us AS tat`,
  );
  const tatOf = sqlite.query<{ tat: number }, [string]>("SELECT tat_us AS tat FROM rate_limits WHERE key_id = ?");
  return {
    async take(key, nowUs, intervalUs, burstUs): Promise<RateDecision> {
      if (take.get(key, nowUs, intervalUs, burstUs)) return { allowed: true };
      const tat = tatOf.get(key)?.tat ?? nowUs;
      const wait = Math.max(tat, nowUs) + intervalUs - nowUs - burstUs;
      return { allowed: false, retryAfterUs: wait > 0 ? wait : intervalUs };
    },
  };
}
