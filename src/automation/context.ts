// What every automation-server feature receives: one object built at startup (or per test over an
// in-memory database). Features take what they need from it; nothing reaches for globals.
import type { Clock } from "../kernel/clock";
import type { Logger } from "../kernel/logger";
import type { AutomationStorage } from "./db/storage";
import type { OpenedStorage } from "./db/open";
import type { OpsOptions } from "../kernel/metrics";
import type { ConnectionLimits } from "../kernel/connections";
import type { AutomationMetrics } from "./metrics";
import type { BlobStore } from "./blobs/blobs";
import type { ModelsConfig } from "./models/config";
import type { ModelGateway } from "./models/contract";
import type { SmtpConfig } from "./inbound/config";
import type { OidcProviderConfig } from "./sso/config";

export interface AutomationConfig {
  port: number;
  hostname: string;
  dataDir: string; // ":memory:" in HTTP tests (database in memory, blobs in a temp dir)
  /** A `postgres://` URL selects PostgreSQL (`--db`); absent = SQLite in the data dir. */
  db?: string;
  /** PostgreSQL pool size (`--db-pool`, default 10). */
  dbPool?: number;
  /** Seconds an idle PostgreSQL connection stays open (default 60; not a flag: tests set 1). */
  dbIdleTimeout?: number;
  /** SQLite: how long a write waits for another connection's lock (default 5000 ms; not a flag: tests set less). */
  busyTimeoutMs?: number;
  workers: number;
  /** How long a claim holds a run without a heartbeat (queue.ts LEASE_MS when unset). */
  leaseMs?: number;
  demo: boolean;
  /** Serve the web console at `/` (default true; `--no-console` turns it off). */
  console?: boolean;
  /** Hosts `action.http` may call (exact host or `*.suffix`); empty = none. */
  httpAllowHosts: string[];
  /**
   * IP addresses and CIDR ranges tenant-aimed connections (SMTP hosts, action.http) may reach although
   * internal (loopback, private, link-local, metadata; src/automation/http/outbound.ts); absent = none.
   */
  outboundAllow?: string[];
  /** Environment variable names workflows may read as `env.X`. */
  envAllowList: string[];
  /** Public base URL used in signed URLs (upload sessions, artifact downloads). */
  publicUrl: string;
  /** True when no --public-url was given: upload URLs then use the origin the client reached us at. */
  publicUrlFromRequest?: boolean;
  /** Secret for signed URLs/tokens, generated on first start: into the data dir, on PostgreSQL into the database (shared by every instance). */
  signingSecret: string;
  /** How long a request body may stall before 408 and a close (`--body-timeout`); default 30 s. */
  bodyTimeoutMs?: number;
  /** Idle keep-alive timeout and connection bounds (`--idle-timeout`, `--max-connections*`); absent = defaults. */
  connections?: ConnectionLimits;
  /** How long audit entries are kept (`--audit-retention`); absent = forever. */
  auditRetentionMs?: number;
  /** Requests per second per API key (burst the same); absent or 0 = no limit. */
  rateLimit?: number;
  /**
   * Material of the key that seals stored third-party secrets (SMTP passwords, API keys): from
   * --secret-key-file or AUTOMATION_SECRET_KEY, else `<dataDir>/secret-key`, generated on first start
   * (on PostgreSQL: the one the database keeps for every instance; src/automation/key-material.ts).
   */
  secretKey?: string;
  /** Base URL of the Resend API (AUTOMATION_RESEND_URL; default https://api.resend.com). */
  resendUrl?: string;
  /** Where blobs live: a directory or `s3://bucket/prefix` (undefined = `<dataDir>/blobs`). */
  blobs?: string;
  s3Endpoint?: string;
  s3Region?: string;
  /** S3 blobs: downloads answer 302 to a presigned GET instead of streaming through the server. */
  s3Redirect?: boolean;
  /** How long upload session URLs work (default 1 h). */
  uploadTtlMs?: number;
  /** Blob sweeper period (0 or absent = not periodic) and grace period (default 1 h). */
  gcIntervalMs?: number;
  gcGraceMs?: number;
  /** Model providers (`--models FILE` or environment); absent = no model configured. Holds keys in memory only. */
  models?: ModelsConfig;
  /** Metrics (off, on the API port, or on their own port) and the log format; absent = off, text. */
  ops?: OpsOptions;
  /** Domain of the inbound e-mail addresses (`--mail-domain`); absent = automations show no address. */
  mailDomain?: string;
  /** The inbound SMTP receiver (`--smtp-port`); absent = not started. */
  smtp?: SmtpConfig;
  /** OpenID Connect providers people may sign in with (`--oidc-issuer` …); absent = none. */
  oidc?: OidcProviderConfig[];
}

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
