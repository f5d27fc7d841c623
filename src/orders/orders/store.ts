// What the order service needs from storage, nothing more. One implementation per backend
// (store.sqlite.ts, store.pg.ts); the service never knows which one runs. Every method that changes
// data is atomic on its own (one transaction), so no transaction spans an await in the service.
import type { OrderRow, SortKey } from "./model";

/** Which orders a list shows. */
export type OrderFilter = { status: number } | { customerId: number } | { performerId: number };

export type LedgerKind = "opening" | "payment" | "commission" | "earning";

/** The result of paying for an order: done, the order was not READY for this customer, or the balance fell short. */
export type Settlement = { ok: true } | { ok: false; reason: "state" } | { ok: false; reason: "funds"; balance: number };

export interface OrderStore {
  find(id: number): Promise<OrderRow | undefined>;
  /** Inserts a WAITING order if the customer's balance covers `need` right now; else returns the balance. */
  create(o: { description: string; price: number; customerId: number; at: number; need: number }): Promise<{ id: number } | { balance: number }>;
  /** WAITING → IN_PROGRESS only if still WAITING; false when someone else got there first. */
  take(id: number, performerId: number): Promise<boolean>;
  /** IN_PROGRESS → READY only if still IN_PROGRESS and taken by `performerId`. */
  pass(id: number, performerId: number): Promise<boolean>;
  /**
   * READY → COMPLETED and the money moves, in one transaction or not at all: the customer pays price +
   * commission (only if the balance covers it), the performer earns the price, the platform account the
   * commission, four ledger rows.
   */
  settle(s: { id: number; customerId: number; performerId: number; price: number; commission: number; at: number }): Promise<Settlement>;
  /** One page of a list and its total, read in one snapshot so they agree. */
  page(filter: OrderFilter, sort: SortKey[], limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }>;
  /** Changes whenever orders may have changed, here or in another instance; list caches key on it. */
  dataVersion(): number | Promise<number>;
}

export function filterOf(f: OrderFilter): ["status" | "customer" | "performer", number] {
  if ("status" in f) return ["status", f.status];
  if ("customerId" in f) return ["customer", f.customerId];
  return ["performer", f.performerId];
}
