// Per-API-key request rate limit (opt-in, `--rate-limit N`): N requests per second with a burst of N
// (at least 1), as a token bucket would allow. Over it → 429 with `Retry-After` (whole seconds), which
// the SDKs honour. The budget lives in the database (RateLimitStore, GCRA: one row per key), so every
// instance on one database draws from the same budget; each request is one atomic row update.
import type { Clock } from "../../kernel/clock";
import { RateLimited } from "../../kernel/errors";
import type { RateLimitStore } from "./store";

/** Takes one request's token for `keyId`, or throws 429; a no-op when the limit is off. */
export async function takeToken(ctx: { config: { rateLimit?: number }; clock: Clock; storage: { rateLimits: RateLimitStore } }, keyId: string): Promise<void> {
  const perSecond = ctx.config.rateLimit;
  if (!perSecond) return;
  // Microseconds: whole numbers on both backends, and fine enough that rounding the interval is noise.
  const intervalUs = Math.round(1_000_000 / perSecond);
  const burstUs = Math.round(Math.max(1, perSecond) * intervalUs);
  const d = await ctx.storage.rateLimits.take(keyId, ctx.clock.now().getTime() * 1000, intervalUs, burstUs);
  if (d.allowed) return;
  const retryAfter = Math.max(1, Math.ceil(d.retryAfterUs / 1_000_000));
  throw RateLimited(`this API key is limited to ${perSecond} requests per second; retry after ${retryAfter} s`, retryAfter);
}
