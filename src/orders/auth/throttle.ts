import type { Clock } from "../../kernel/clock";

/**
 * Failed logins per username in a sliding window. After `maxFailures` inside `windowMs` the username is
 * refused until the oldest failure leaves the window; a correct login clears it. In memory: a restart
 * forgets, which only ever helps the legitimate user.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  /**
   * Starts a login attempt for `key`: the seconds to wait if it is refused, else 0. An admitted attempt
   * counts as a failure from the start and only a correct password (`reset`) takes it back, so a burst
   * of parallel guesses, all in flight before any has failed, still gets only `maxFailures` tries.
   */
  begin(key: string): number {
    const list = this.recent(key);
    if (list.length >= this.maxFailures) {
      const until = list[list.length - this.maxFailures] + this.windowMs;
      return Math.max(1, Math.ceil((until - this.clock.now().getTime()) / 1000));
    }
    list.push(this.clock.now().getTime());
    this.failures.set(key, list);
    if (this.failures.size > 10_000) this.sweep();
    return 0;
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string): number[] {
    const since = this.clock.now().getTime() - this.windowMs;
    return (this.failures.get(key) ?? []).filter((t) => t > since);
  }

  private sweep(): void {
    for (const key of [...this.failures.keys()]) {
      if (this.recent(key).length === 0) this.failures.delete(key);
    }
  }
}
