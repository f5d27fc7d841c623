// What every automation-server feature receives: one object built at startup (or per test over an
// in-memory database). Features take what they need from it; nothing reaches for globals.
import type { Clock } from "../kernel/clock";
import type { Logger } from "../kernel/logger";
import type { AutomationConfig } from "./config";
import type { AutomationStorage } from "./db/storage";
import type { OpenedStorage } from "./db/open";
import type { AutomationMetrics } from "./metrics";
import type { BlobStore } from "./blobs/blobs";
import type { ModelGateway } from "./models/contract";

export interface AutomationContext {
  config: AutomationConfig;
  /** The database, one async store per feature: what services, routes, the engine and workers use. */
  storage: AutomationStorage;
  /** The opened database: its backend-specific handle (for backup and metrics), a description, close(). */
  db: OpenedStorage;
  clock: Clock;
  log: Logger;
  blobs: BlobStore;
  /** Configured language models (models/); undefined when the operator configured none. */
  models?: ModelGateway;
  /** The Prometheus series; undefined when metrics are off. */
  metrics?: AutomationMetrics;
}
