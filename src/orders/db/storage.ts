// The order server's storage: SQLite (the embedded default) or PostgreSQL (scale-out: N instances on one
// database), chosen by the --db value (open.ts). Services only ever see these interfaces; this module
// imports no implementation.
import type { ThrottleStore, TokenStore } from "../auth/store";
import type { OrderStore } from "../orders/store";
import type { UserStore } from "../users/store";

/** The stores `OrderStorage.atomically` binds to one transaction. */
export type AtomicStores = Pick<OrderStorage, "users" | "orders">;

export interface OrderStorage {
  backend: "sqlite" | "postgres";
  users: UserStore;
  orders: OrderStore;
  tokens: TokenStore;
  throttle: ThrottleStore;
  /**
   * Runs `fn` with user and order stores bound to one transaction: committed when `fn` resolves, rolled
   * back when it throws. Each store call inside is a savepoint of it. For start-up work (the demo seed);
   * on SQLite nothing else may use the connection meanwhile (see sqlite.ts).
   */
  atomically<T>(fn: (s: AtomicStores) => Promise<T>): Promise<T>;
  /** Throws unless the database answers a query (the health check). */
  ping(): Promise<void> | void;
  /** One statement in the backend's SQL, for operators' checks and tests (never the services). */
  query<T>(text: string): Promise<T[]>;
  close(): Promise<void>;
}
