// InboundStore over bun:sqlite (migration db/automation/0410_inbound_email.sql).
import type { Database } from "bun:sqlite";
import type { InboundAddress, InboundStore } from "../../inbound/store";

export function sqliteInboundStore(sqlite: Database): InboundStore {
  const insertToken = sqlite.query<never, [string, string, string, string]>(
    "INSERT INTO inbound_addresses (automation_id, tenant_id, token, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (automation_id) DO NOTHING",
  );
  const tokenOf = sqlite.query<{ token: string }, [string]>("SELECT token FROM inbound_addresses WHERE automation_id = ?");
  const byToken = sqlite.query<InboundAddress, [string]>(
    "SELECT tenant_id AS tenantId, automation_id AS automationId, token FROM inbound_addresses WHERE token = ?",
  );
  const count = sqlite.query<{ count: number }, [string, number]>(
    "INSERT INTO inbound_sender_minutes (sender, minute, count) VALUES (?, ?, 1) ON CONFLICT (sender, minute) DO UPDATE SET count = count + 1 RETURNING count",
  );
  const prune = sqlite.query<never, [number]>("DELETE FROM inbound_sender_minutes WHERE minute < ?");
  const runOf = sqlite.query<{ id: string }, [string]>("SELECT id FROM runs WHERE dedupe_key = ?");
  let pruned = 0;
  return {
    async token(tenantId, automationId, mint, at) {
      const have = tokenOf.get(automationId);
      if (have) return have.token;
      insertToken.run(automationId, tenantId, mint(), at);
      return tokenOf.get(automationId)!.token;
    },
    async byToken(token) {
      return byToken.get(token) ?? undefined;
    },
    async countSender(sender, minute) {
      if (minute > pruned) {
        prune.run(minute - 1);
        pruned = minute;
      }
      return count.get(sender, minute)!.count;
    },
    async runOf(dedupeKey) {
      return runOf.get(dedupeKey)?.id;
    },
  };
}
