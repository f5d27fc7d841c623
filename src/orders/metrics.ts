// The order server's own series, on the kernel's registry: logins by outcome and order state
// transitions. Services report events through `OrderEvents` and know nothing of Prometheus.
import { Counter, Gauge } from "prom-client";
import type { Metrics } from "../kernel/metrics";
import type { OrderStorage } from "./db/storage";

export type LoginOutcome = "success" | "bad_credentials" | "throttled";
/** The state an order moved into: published (WAITING), taken (IN_PROGRESS), passed (READY), completed. */
export type Transition = "published" | "taken" | "passed" | "completed";

export interface OrderEvents {
  login(outcome: LoginOutcome): void;
  transition(to: Transition): void;
}

export const noEvents: OrderEvents = { login() {}, transition() {} };

/** Registers the order series on `metrics` and returns the events that feed them. */
export function orderEvents(metrics: Metrics): OrderEvents {
  const registers = [metrics.registry];
  const logins = new Counter({ name: "orders_logins_total", help: "Password-grant logins, by outcome (success, bad_credentials, throttled)", labelNames: ["outcome"], registers });
  const transitions = new Counter({ name: "orders_transitions_total", help: "Order state transitions, by the state entered (published, taken, passed, completed)", labelNames: ["to"], registers });
  for (const o of ["success", "bad_credentials", "throttled"]) logins.inc({ outcome: o }, 0);
  for (const t of ["published", "taken", "passed", "completed"]) transitions.inc({ to: t }, 0);
  return {
    login: (outcome) => logins.inc({ outcome }),
    transition: (to) => transitions.inc({ to }),
  };
}

type Store = object;

/** A store whose async methods are timed into `db_query_duration_seconds{op="<store>.<method>"}`. */
function timedStore<S extends Store>(metrics: Metrics, name: string, store: S, inFlight: Gauge): S {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      const op = `${name}.${key}`;
      return (...args: unknown[]) => {
        const t0 = performance.now();
        const result: unknown = value.apply(target, args);
        if (!(result instanceof Promise)) {
          metrics.dbDuration.observe({ op }, (performance.now() - t0) / 1000);
          return result;
        }
        inFlight.inc();
        return result.finally(() => {
          inFlight.dec();
          metrics.dbDuration.observe({ op }, (performance.now() - t0) / 1000);
        });
      };
    },
  });
}

/**
 * The storage with every store operation timed (one SQL statement or one transaction each), the
 * operations in flight, and for PostgreSQL the pool's size. Both backends, same series.
 */
export function meteredStorage(metrics: Metrics, storage: OrderStorage, poolMax?: number): OrderStorage {
  const registers = [metrics.registry];
  const inFlight = new Gauge({
    name: "db_operations_in_flight",
    help: "Store operations waiting for or holding a database connection (above db_pool_max_connections they queue for the pool)",
    registers,
  });
  if (storage.backend === "postgres" && poolMax !== undefined) {
    new Gauge({ name: "db_pool_max_connections", help: "Size of the PostgreSQL connection pool", registers }).set(poolMax);
  }
  return {
    backend: storage.backend,
    users: timedStore(metrics, "users", storage.users, inFlight),
    orders: timedStore(metrics, "orders", storage.orders, inFlight),
    tokens: timedStore(metrics, "tokens", storage.tokens, inFlight),
    throttle: timedStore(metrics, "throttle", storage.throttle, inFlight),
    atomically: (fn) => storage.atomically(fn),
    ping: async () => {
      const t0 = performance.now();
      await storage.ping();
      metrics.dbDuration.observe({ op: "ping" }, (performance.now() - t0) / 1000);
    },
    query: (text) => storage.query(text),
    close: () => storage.close(),
  };
}
