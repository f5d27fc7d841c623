// Wake-ups on SQLite: one process owns the database, so a notification never leaves it. Every storage
// over one connection shares one bus; delivery waits for a microtask, as a NOTIFY arrives after the
// publisher moved on.
import type { Database } from "bun:sqlite";
import { checkNotification, type Channel, type Notifications } from "../../runs/store";

type Bus = Map<Channel, Set<(payload: string) => void>>;
const buses = new WeakMap<Database, Bus>();

export class SqliteNotifications implements Notifications {
  private readonly bus: Bus;
  /** This storage's subscriptions, ended by close() (other storages on the connection keep theirs). */
  private readonly mine = new Set<() => void>();
  private closed = false;

  constructor(sqlite: Database) {
    let bus = buses.get(sqlite);
    if (!bus) buses.set(sqlite, (bus = new Map()));
    this.bus = bus;
  }

  async publish(channel: Channel, payload: string): Promise<void> {
    this.open();
    checkNotification(channel, payload);
    const subscribers = this.bus.get(channel);
    if (!subscribers?.size) return;
    // The subscribers at publish time, each skipped if it unsubscribed before delivery.
    for (const cb of [...subscribers]) queueMicrotask(() => subscribers.has(cb) && cb(payload));
  }

  async subscribe(channel: Channel, onMessage: (payload: string) => void): Promise<() => void> {
    this.open();
    checkNotification(channel, "");
    // A wrapper per call: the same function subscribed twice is two subscriptions.
    const cb = (payload: string) => onMessage(payload);
    let subscribers = this.bus.get(channel);
    if (!subscribers) this.bus.set(channel, (subscribers = new Set()));
    subscribers.add(cb);
    const stop = () => {
      subscribers.delete(cb);
      this.mine.delete(stop);
    };
    this.mine.add(stop);
    return stop;
  }

  /** The connection is the process's own: it never drops, so `cb` never runs. */
  onReconnect(_cb: () => void): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of [...this.mine]) stop();
  }

  private open(): void {
    if (this.closed) throw new Error("notifications are closed");
  }
}
