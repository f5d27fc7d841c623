import type { Clock } from "../../kernel/clock";
import type { ThrottleStore } from "./store";

/**
 * Failed logins per username in a sliding window. After `maxFailures` inside `windowMs` the username is
 * refused until the oldest failure leaves the window; a correct login clears it. The failures live in
 * the database (ThrottleStore), so instances behind one load balancer share the count.
 */
export class LoginThrottle {
  private begun = 0;

  constructor(
    private readonly store: ThrottleStore,
    private readonly clock: Clock,
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  /**
   * Starts a login attempt for `key`: the seconds to wait if it is refused, else 0. An admitted attempt
   * counts as a failure from the start and only a correct password (`reset`) takes it back, so a burst
   * of parallel guesses, all in flight before any has failed, still gets only `maxFailures` tries.
   */
  async begin(key: string): Promise<number> {
    const now = this.clock.now().getTime();
    // Now and then, drop failures that no longer count, so the table stays small.
    if (++this.begun % 1000 === 0) await this.store.sweep(now - this.windowMs);
    const waitMs = await this.store.begin(key, now, this.maxFailures, this.windowMs);
    return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0;
  }

  reset(key: string): Promise<void> {
    return this.store.reset(key);
  }
}
