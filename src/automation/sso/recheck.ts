// The role re-checked within a session's life (--oidc-recheck): every instance looks, every little while,
// for SSO sessions whose last check is older than the provider's period, takes each with one conditional
// update (so two instances never both spend a refresh token, which a provider may rotate), and re-checks it
// with the provider (service.ts recheckSession): the groups decide the role again, and a person removed at
// the provider loses their session.
import { newId } from "../../kernel/ids";
import { auditOf } from "../audit/service";
import type { AutomationContext } from "../context";
import type { PeopleDeps } from "../people/service";
import type { OidcProviderConfig } from "../config/oidc";
import { OidcClient } from "./oidc";
import { configOf } from "./tenant-providers";
import { recheckSession } from "./service";

const BATCH = 50;

/** One round: every due session of every provider with a re-check period. How many were re-checked. */
export async function recheckDue(ctx: AutomationContext, clients: Map<string, OidcClient>): Promise<number> {
  // The server's providers and the tenants' own, each with its period; a tenant's is read each round.
  const own: OidcProviderConfig[] = [];
  for (const r of await ctx.storage.people.tenantProviders()) {
    if (!r.recheckMs) continue;
    try {
      own.push(configOf(r, ctx.config.secretKey ?? "", ctx.config.outboundAllow ?? []));
    } catch {
      // Its secret no longer opens (the server's key changed): its sessions wait, as for a provider that is down.
    }
  }
  const providers = [...(ctx.config.oidc ?? []).filter((p) => p.recheckMs), ...own];
  if (!providers.length) return 0;
  const roundClients = new Map<string, OidcClient>();
  const d: PeopleDeps = { people: ctx.storage.people, tenancy: ctx.storage.tenancy, clock: ctx.clock, secretKey: ctx.config.secretKey };
  const shortest = Math.min(...providers.map((p) => p.recheckMs!));
  let done = 0;
  const now = ctx.clock.now();
  for (const row of await ctx.storage.people.dueSsoSessions(now.toISOString(), new Date(now.getTime() - shortest).toISOString(), BATCH)) {
    const p = providers.find((x) => x.id === row.provider);
    if (!p || Date.parse(row.checkedAt) > now.getTime() - p.recheckMs!) continue;
    if (!(await ctx.storage.people.claimSsoCheck(row.sessionId, row.checkedAt, now.toISOString()))) continue;
    // A tenant's provider may have changed since the last round: its client is made for this round.
    const cache = own.includes(p) ? roundClients : clients;
    const client = cache.get(p.id) ?? new OidcClient(p);
    cache.set(p.id, client);
    const outcome = await recheckSession(d, p, client, row);
    ctx.log.info("sso session re-checked", { provider: p.id, session: row.sessionId, outcome });
    // In the audit trail as the person's: the session kept (its role as the groups say now), or ended.
    if (outcome !== "unreachable") {
      auditOf(ctx).push({
        id: newId("aud"),
        at: ctx.clock.now().toISOString(),
        tenantKey: row.tenantId,
        actorType: "user",
        actorId: row.userId,
        actorName: row.email,
        action: "auth.oidc.recheck",
        resourceType: "sessions",
        resourceId: row.sessionId,
        requestId: null,
        address: null,
        outcome: outcome === "kept" ? "success" : "failure",
        status: outcome === "kept" ? 200 : 401,
      });
    }
    done++;
  }
  return done;
}

/** The periodic re-check, when a provider asks for one; `stop` waits for a round in flight. */
export function startRecheck(ctx: AutomationContext): { stop(): Promise<void> } {
  // Always on: a tenant's owner may add a provider with a re-check period at any time (a round without
  // due sessions is one indexed query).
  const periods = [60_000, ...(ctx.config.oidc ?? []).map((p) => p.recheckMs).filter((ms): ms is number => !!ms)];
  const clients = new Map<string, OidcClient>();
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = recheckDue(ctx, clients)
      .catch((err) => ctx.log.error("sso re-check failed", { error: (err as Error)?.stack ?? String(err) }))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, Math.max(500, Math.min(60_000, Math.min(...periods) / 2)));
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
