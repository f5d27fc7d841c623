import type { Clock } from "../kernel/clock";
import { systemClock } from "../kernel/clock";
import { UsageError } from "../kernel/errors";
import type { Logger } from "../kernel/logger";
import { silentLogger } from "../kernel/logger";
import type { Metrics } from "../kernel/metrics";
import { noEvents, type OrderEvents } from "./metrics";

export type Profile = "demo" | "production";

export interface OAuthClient {
  id: string;
  secret: string;
}

/** Everything the order app needs besides its database. Tests build one with `orderConfig({...})`. */
export interface OrderConfig {
  profile: Profile;
  clients: OAuthClient[];
  clock: Clock;
  logger: Logger;
  /** Logins and order transitions, for the metrics (no-op unless metrics are on). */
  events: OrderEvents;
  /** The Prometheus registry; absent = no HTTP/database series. */
  metrics?: Metrics;
  /** Answer GET /metrics on the API port. */
  serveMetrics?: boolean;
  /** Access token lifetime. */
  tokenTtlMs: number;
  /** Argon2id cost for new password hashes (tests use a cheap one). */
  password: { memoryCost: number; timeCost: number };
  /** Failed logins per username allowed inside `windowMs` before 429. */
  throttle: { maxFailures: number; windowMs: number };
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
}

/** The original web client's credentials, registered by the demo profile. */
export const DEMO_CLIENT: OAuthClient = { id: "iDXnf8809V1Tjo6zgsXc", secret: "R85vuXvGCarh5jQOPMgN" };

export function orderConfig(over: Partial<OrderConfig> = {}): OrderConfig {
  return {
    profile: "production",
    clients: [],
    clock: systemClock,
    logger: silentLogger,
    events: noEvents,
    tokenTtlMs: 24 * 60 * 60 * 1000,
    // OWASP's argon2id recommendation (19 MiB, 2 passes): ~25 ms per login on one core.
    password: { memoryCost: 19_456, timeCost: 2 },
    throttle: { maxFailures: 10, windowMs: 60_000 },
    bodyLimit: 1024 * 1024,
    ...over,
  };
}

/** `ORDER_OAUTH_CLIENTS="id:secret[,id:secret...]"`. */
export function parseClients(text: string | undefined): OAuthClient[] {
  if (!text || !text.trim()) return [];
  return text.split(",").map((pair) => {
    const at = pair.indexOf(":");
    const id = pair.slice(0, at).trim();
    const secret = pair.slice(at + 1).trim();
    if (at <= 0 || !id || !secret) {
      throw new UsageError(`ORDER_OAUTH_CLIENTS must be "id:secret[,id:secret...]" (bad entry "${pair.trim()}")`);
    }
    return { id, secret };
  });
}

export function parseProfile(text: string): Profile {
  if (text === "demo" || text === "production") return text;
  throw new UsageError(`--profile must be demo or production (got "${text}")`);
}
