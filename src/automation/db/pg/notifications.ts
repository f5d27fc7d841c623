// Wake-ups on PostgreSQL: NOTIFY through the pool, LISTEN on Bun SQL's one listening connection per
// client (opened by the first subscribe; Bun reconnects it with backoff and LISTENs every channel again).
// Each channel is LISTENed once, at its first subscribe, and stays so until close(): subscribers come
// and go locally (a wait_for_completion per request), without a LISTEN/UNLISTEN round trip each.
import type { SQL } from "bun";
import { checkNotification, type Channel, type Notifications } from "../../runs/store";

/**
 * Sends a notification on `handle`: the pool, or a transaction (`sql.begin`), in which case PostgreSQL
 * delivers it on commit and drops it on rollback. Checks channel and payload as `publish` does.
 */
export async function pgNotify(handle: Pick<SQL, "notify">, channel: Channel, payload: string): Promise<void> {
  checkNotification(channel, payload);
  await handle.notify(channel, payload);
}

/** When not every channel has been LISTENed again this long after the first did, reconnect callbacks run anyway. */
const RECONNECT_SETTLE_MS = 1000;

export class PgNotifications implements Notifications {
  private readonly subscribers = new Map<Channel, Set<(payload: string) => void>>();
  private readonly listening = new Map<Channel, Promise<SQL.ListenSubscription>>();
  /** Acknowledged LISTENs per channel: a second one means the connection came back. */
  private readonly acks = new Map<Channel, number>();
  private readonly relistened = new Set<Channel>();
  private readonly reconnectCallbacks = new Set<() => void>();
  private settle: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(private readonly pg: SQL) {}

  async publish(channel: Channel, payload: string): Promise<void> {
    this.open();
    await pgNotify(this.pg, channel, payload);
  }

  async subscribe(channel: Channel, onMessage: (payload: string) => void): Promise<() => void> {
    this.open();
    checkNotification(channel, "");
    // A wrapper per call: the same function subscribed twice is two subscriptions.
    const cb = (payload: string) => onMessage(payload);
    let subscribers = this.subscribers.get(channel);
    if (!subscribers) this.subscribers.set(channel, (subscribers = new Set()));
    subscribers.add(cb);
    try {
      await this.listen(channel);
    } catch (err) {
      subscribers.delete(cb);
      throw err;
    }
    return () => void subscribers.delete(cb);
  }

  onReconnect(cb: () => void): () => void {
    const own = () => cb();
    this.reconnectCallbacks.add(own);
    return () => void this.reconnectCallbacks.delete(own);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.settle);
    this.subscribers.clear();
    this.reconnectCallbacks.clear();
    // The last UNLISTEN of the client closes its listening connection.
    const subs = await Promise.allSettled(this.listening.values());
    this.listening.clear();
    await Promise.all(subs.map((s) => (s.status === "fulfilled" ? s.value.unlisten() : undefined)));
  }

  private listen(channel: Channel): Promise<SQL.ListenSubscription> {
    const known = this.listening.get(channel);
    if (known) return known;
    const started = this.pg.listen(channel, (payload) => this.deliver(channel, payload), () => this.acked(channel));
    this.listening.set(channel, started);
    // A LISTEN that failed (the database unreachable) is tried again by the next subscribe.
    started.catch(() => this.listening.get(channel) === started && this.listening.delete(channel));
    return started;
  }

  private deliver(channel: Channel, payload: string): void {
    const subscribers = this.subscribers.get(channel);
    if (!subscribers) return;
    // One microtask each, as on SQLite: a subscriber that throws does not keep the others from it.
    for (const cb of [...subscribers]) queueMicrotask(() => subscribers.has(cb) && cb(payload));
  }

  /** Bun runs `onlisten` at each channel's LISTEN, the first and again after every reconnect. */
  private acked(channel: Channel): void {
    const n = (this.acks.get(channel) ?? 0) + 1;
    this.acks.set(channel, n);
    if (n === 1 || this.closed) return;
    this.relistened.add(channel);
    // The callbacks run once all channels listen again, so a re-read misses nothing; a channel first
    // LISTENed while the connection was down has no second ack coming, hence the time bound.
    if ([...this.acks.keys()].every((c) => this.relistened.has(c))) return this.reconnected();
    this.settle ??= setTimeout(() => this.reconnected(), RECONNECT_SETTLE_MS);
  }

  private reconnected(): void {
    clearTimeout(this.settle);
    this.settle = undefined;
    this.relistened.clear();
    if (this.closed) return;
    for (const cb of [...this.reconnectCallbacks]) queueMicrotask(cb);
  }

  private open(): void {
    if (this.closed) throw new Error("notifications are closed");
  }
}
