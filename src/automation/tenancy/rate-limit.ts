// Per-API-key request rate limit (opt-in, `--rate-limit N`): a token bucket of N requests per second
// with a burst of N (at least 1). Over it → 429 with `Retry-After` (whole seconds), which the SDKs honour.
import type { Clock } from "../../kernel/clock";
import { RateLimited } from "../../kernel/errors";

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly burst: number;

  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock,
  ) {
    this.burst = Math.max(1, perSecond);
  }

  /** Takes one request's token for `keyId`, or throws 429. */
  take(keyId: string): void {
    const now = this.clock.now().getTime();
    const b = this.buckets.get(keyId) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    this.buckets.set(keyId, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
    throw RateLimited(`this API key is limited to ${this.perSecond} requests per second; retry after ${retryAfter} s`, retryAfter);
  }
}

const limiters = new WeakMap<object, RateLimiter | null>();

/** The limiter of a context (one per server), or null when the limit is off. */
export function limiterOf(ctx: { config: { rateLimit?: number }; clock: Clock }): RateLimiter | null {
  let l = limiters.get(ctx);
  if (l === undefined) {
    l = ctx.config.rateLimit ? new RateLimiter(ctx.config.rateLimit, ctx.clock) : null;
    limiters.set(ctx, l);
  }
  return l;
}
