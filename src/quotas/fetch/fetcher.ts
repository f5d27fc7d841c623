// One provider/profile from credentials to result: discovery, the provider's request(s) under a
// timeout, and the mapping to the wire result. Never throws.
import { readCache } from "./cache";
import type { Config } from "../config/config";
import type { Ctx } from "../core/context";
import { discover } from "../discovery/credentials";
import { NetworkError, endpointFor, makeHttp } from "./http";
import type { Outcome } from "../providers/provider";
import type { ResolvedTarget } from "./targets";
import type { ProviderResult } from "../model/types";

/**
 * `backoffUntil`: after a 429 the provider is left alone until then (the cache keeps showing the last
 * good result).
 */
export async function fetchTarget(ctx: Ctx, config: Config, t: ResolvedTarget, backoffUntil?: string): Promise<ProviderResult> {
  const started = ctx.clock.now().toISOString();
  const base: Omit<ProviderResult, "status"> = {
    provider: t.provider,
    profile: t.profile,
    name: t.name,
    plan: null,
    windows: [],
    fetched_at: started,
    cached_at: null,
    auth_source: null,
  };
  const d = discover(ctx, t.def, t.place, config);
  if (d.kind === "missing") {
    return { ...base, status: "auth_required", hint: t.def.hint, message: "no credentials found", console_url: t.def.consoleUrl };
  }
  if (d.kind === "expired") {
    return { ...base, status: "auth_required", hint: t.def.hint, message: "the access token has expired", auth_source: d.source, console_url: t.def.consoleUrl };
  }
  if (backoffUntil && Date.parse(backoffUntil) > ctx.clock.now().getTime()) {
    return { ...base, status: "network_error", message: `rate limited; not asking again before ${backoffUntil}`, auth_source: d.cred.source, console_url: t.def.consoleUrl, retry_at: backoffUntil };
  }
  const outcome = await withTimeout(ctx, config, t, d.cred);
  const done = { ...base, auth_source: d.cred.source, fetched_at: ctx.clock.now().toISOString() };
  switch (outcome.status) {
    case "available":
      return { ...done, status: "available", plan: outcome.plan, windows: outcome.windows, console_url: t.def.consoleUrl, raw: outcome.raw };
    case "unavailable":
      return { ...done, status: "unavailable", message: outcome.message, console_url: t.def.consoleUrl, raw: outcome.raw };
    case "auth_required":
      return { ...done, status: "auth_required", hint: outcome.hint ?? t.def.hint, message: outcome.message, console_url: t.def.consoleUrl, raw: outcome.raw };
    case "network_error": {
      const retry = outcome.retryAfterSeconds ? new Date(ctx.clock.now().getTime() + outcome.retryAfterSeconds * 1000).toISOString() : undefined;
      return { ...done, status: "network_error", message: outcome.message, console_url: t.def.consoleUrl, ...(retry ? { retry_at: retry } : {}) };
    }
  }
}

async function withTimeout(ctx: Ctx, config: Config, t: ResolvedTarget, cred: Parameters<ResolvedTarget["def"]["fetch"]>[0]): Promise<Outcome> {
  const ac = new AbortController();
  const http = makeHttp(endpointFor(t.provider, t.def.baseUrl, ctx.env, config.endpoints), ac.signal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const secs = ctx.timeoutMs >= 1000 ? `${Math.round(ctx.timeoutMs / 100) / 10} s` : `${ctx.timeoutMs} ms`;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => {
      ac.abort();
      resolve({ status: "network_error", message: `timed out after ${secs}` });
    }, ctx.timeoutMs);
  });
  const work = t.def.fetch(cred, http).catch((err): Outcome => {
    if (err instanceof NetworkError) return { status: "network_error", message: err.message };
    return { status: "unavailable", message: `unexpected failure: ${(err as Error).message}` };
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** All targets in parallel, results in target order. */
export function fetchAll(ctx: Ctx, config: Config, targets: ResolvedTarget[]): Promise<ProviderResult[]> {
  const backoff = readCache(ctx).backoff ?? {};
  return Promise.all(targets.map((t) => fetchTarget(ctx, config, t, backoff[t.key])));
}
