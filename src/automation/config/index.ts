// Flags and environment of `automation-server serve` and the shared flags of admin subcommands, and
// AutomationConfig, what they come to. The settings of parts the context holds live here too when
// their own folder reads the context (smtp.ts for inbound/, oidc.ts for sso/); the blob store's and
// the models' sit beside their code (blobs/, models/), which is below the context.
import { mkdirSync, readFileSync } from "node:fs";
import type { FlagSpec, FlagValues } from "../../kernel/config";
import { FatalError, UsageError } from "../../kernel/errors";
import { isPostgresUrl } from "../../kernel/pg";
import { opsFlags, opsOptions, type OpsOptions } from "../../kernel/metrics";
import { bodyTimeoutFlag, bodyTimeoutMs, readyFileFlag } from "../../kernel/server";
import { connectionFlags, connectionLimits, type ConnectionLimits } from "../../kernel/connections";
import { loadModelsFile, modelsFromEnv, type ModelsConfig } from "../models/config";
import { blobConfig, blobFlags } from "../blobs/blob-config";
import { smtpConfig, smtpFlags, type SmtpConfig } from "./smtp";
import { parseOutboundAllow } from "../http/outbound";
import { oidcConfig, oidcFlags, type OidcProviderConfig } from "./oidc";


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

/** `90s`, `15m`, `1h`, `2d`, or a bare number of seconds → milliseconds. */
export function parseDuration(raw: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
  if (!m) throw new UsageError(`--${flag} must be a duration such as 90s, 15m, 1h (got ${raw})`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "s"]!;
  return Math.round(Number(m[1]) * unit);
}

export const dataDirFlag = {
  "data-dir": {
    type: "string",
    env: "AUTOMATION_DATA_DIR",
    default: "./data/automation",
    value: "DIR",
    help: "SQLite database, blob storage and signing secret",
  },
} satisfies Record<string, FlagSpec>;

/** Where the data is: the data dir, and the PostgreSQL database when one is named (serve and admin commands). */
export const storageFlags = {
  ...dataDirFlag,
  db: {
    type: "string",
    env: "AUTOMATION_DB",
    value: "URL",
    help: "postgres://user:pass@host:5432/db selects PostgreSQL (blobs and secrets stay under --data-dir); default: SQLite in --data-dir",
  },
} satisfies Record<string, FlagSpec>;

/** `--db`, checked: a PostgreSQL URL or nothing. */
export function dbUrl(raw: string | undefined): string | undefined {
  if (raw !== undefined && !isPostgresUrl(raw)) throw new UsageError(`--db must be a postgres:// URL (got "${raw}"); the SQLite database lives in --data-dir`);
  return raw;
}

/**
 * Runs a process executes at once when --workers is not given. A run's slot is mostly waiting: on
 * HTTP, models, the database (each step is journaled; on PostgreSQL every commit is a round trip, and
 * the journal's group commit needs runs in flight to share one). CPU-heavy work has bounded pools of
 * its own (script sandbox, off-thread parsing and rendering), so slots bound runs in flight, not CPU.
 */
export const DEFAULT_WORKERS = 32;

export const serveFlags = {
  port: { type: "number", env: "PORT", default: 8081, value: "PORT", help: "HTTP port (0: a free one, reported on the first stdout line)" },
  ...readyFileFlag,
  ...bodyTimeoutFlag,
  ...connectionFlags,
  host: { type: "string", env: "HOST", default: "0.0.0.0", value: "HOST", help: "interface to listen on" },
  ...storageFlags,
  "db-pool": { type: "number", env: "AUTOMATION_DB_POOL", default: 10, value: "N", help: "PostgreSQL connections per process" },
  workers: { type: "number", env: "AUTOMATION_WORKERS", value: "N", help: `runs this process executes at once (default ${DEFAULT_WORKERS}; 0 = API only, with --db postgres:// and \`worker\` processes)` },
  "lease-seconds": { type: "number", env: "AUTOMATION_LEASE_SECONDS", default: 30, value: "N", help: "how long a claimed run stays with its process without a heartbeat (renewed every N/3 s); a process gone longer loses its runs to others" },
  demo: { type: "boolean", help: "create a demo tenant with a known API key and example workflows" },
  console: { type: "boolean", env: "AUTOMATION_CONSOLE", default: true, help: "serve the web console at / (--no-console turns it off)" },
  "public-url": {
    type: "string",
    env: "AUTOMATION_PUBLIC_URL",
    value: "URL",
    help: "base URL clients reach this server at, for signed URLs (default: the origin each request came to)",
  },
  "http-allow-hosts": {
    type: "string",
    env: "AUTOMATION_HTTP_ALLOW_HOSTS",
    value: "LIST",
    help: "comma list of hosts action.http may call (exact or *.suffix); names must also resolve to public addresses, see --outbound-allow",
  },
  "outbound-allow": {
    type: "string",
    env: "AUTOMATION_OUTBOUND_ALLOW",
    value: "LIST",
    help: "comma list of IP addresses and CIDR ranges (127.0.0.1, 10.0.0.0/8, fd00::/8) that tenant-aimed connections (SMTP hosts of e-mail servers, action.http) may reach although loopback, private, link-local or metadata; default: none, such targets are refused",
  },
  "env-allow": {
    type: "string",
    env: "AUTOMATION_ENV_ALLOW",
    value: "LIST",
    help: "comma list of environment variables workflows may read as env.X",
  },
  "rate-limit": {
    type: "number",
    env: "AUTOMATION_RATE_LIMIT",
    default: 0,
    value: "N",
    help: "requests per second per API key, over it 429 with Retry-After (0 = no limit)",
  },
  "audit-retention": {
    type: "string",
    env: "AUTOMATION_AUDIT_RETENTION",
    value: "DURATION",
    help: "prune audit entries older than this (e.g. 365d), from each chain's oldest end, at start and hourly; default: keep forever",
  },
  models: {
    type: "string",
    env: "AUTOMATION_MODELS",
    value: "FILE",
    help: "model providers (TOML, see docs/automation/models.md); without it AUTOMATION_DEFAULT_MODEL=provider/model configures one from env",
  },
  "secret-key-file": {
    type: "string",
    env: "AUTOMATION_SECRET_KEY_FILE",
    value: "FILE",
    help: "key sealing stored SMTP passwords and API keys (AES-256-GCM); else AUTOMATION_SECRET_KEY, else <data-dir>/secret-key (generated; with --db postgres:// the database keeps one for every instance)",
  },
  "resend-url": {
    type: "string",
    env: "AUTOMATION_RESEND_URL",
    default: "https://api.resend.com",
    value: "URL",
    help: "base URL of the Resend API (e-mail servers with transport resend)",
  },
  ...blobFlags,
  "s3-redirect": {
    type: "boolean",
    env: "AUTOMATION_S3_REDIRECT",
    help: "S3 blobs: answer downloads with 302 to a short-lived presigned GET instead of streaming them",
  },
  "upload-ttl": {
    type: "string",
    env: "AUTOMATION_UPLOAD_TTL",
    default: "1h",
    value: "DURATION",
    help: "how long upload session URLs (signed or presigned) work",
  },
  "gc-interval": {
    type: "string",
    env: "AUTOMATION_GC_INTERVAL",
    default: "1h",
    value: "DURATION",
    help: "how often the blob sweeper deletes bytes nothing references (0 = never; `blobs gc` runs it once)",
  },
  "gc-grace": {
    type: "string",
    env: "AUTOMATION_GC_GRACE",
    default: "1h",
    value: "DURATION",
    help: "the sweeper leaves blobs, temp objects and abandoned uploads younger than this",
  },
  ...smtpFlags,
  ...oidcFlags,
  ...opsFlags,
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

/** Key material is at least this long (a generated key is 52 characters). */
const SECRET_KEY_MIN = 32;

/** --secret-key-file, else AUTOMATION_SECRET_KEY (a value, never a flag: flags show in `ps`), else "" (generated). */
export function secretKeyFrom(file: string | undefined, env: Record<string, string | undefined> = process.env): string {
  let material = env.AUTOMATION_SECRET_KEY ?? "";
  let origin = "AUTOMATION_SECRET_KEY";
  if (file) {
    try {
      material = readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`cannot read --secret-key-file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    origin = `--secret-key-file ${file}`;
  }
  material = material.trim();
  if (material !== "" && material.length < SECRET_KEY_MIN) throw new UsageError(`${origin} must hold at least ${SECRET_KEY_MIN} characters`);
  return material;
}

function resendUrl(raw: string): string {
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new UsageError(`--resend-url must be an http(s) URL (got ${raw})`);
  return raw.replace(/\/+$/, "");
}

const list = (s: string | undefined) => (s ?? "").split(",").map((x) => x.trim()).filter(Boolean);

export function serveConfig(v: FlagValues<typeof serveFlags>): AutomationConfig {
  if (!Number.isInteger(v.port) || v.port < 0 || v.port > 65535) throw new UsageError(`--port must be 0-65535 (got ${v.port})`);
  const workers = v.workers ?? DEFAULT_WORKERS;
  if (!Number.isInteger(workers) || workers < 0 || workers > 256) throw new UsageError(`--workers must be 0-256 (got ${workers})`);
  if (v["data-dir"].trim() === "") throw new UsageError("--data-dir must not be empty");
  if (workers === 0 && dbUrl(v.db) === undefined) {
    throw new UsageError("--workers 0 (API only) needs --db postgres://… shared with `automation-server worker` processes: on SQLite nothing else would run the runs");
  }
  dbUrl(v.db);
  const lease = v["lease-seconds"];
  if (!Number.isFinite(lease) || lease < 3 || lease > 3600) throw new UsageError(`--lease-seconds must be 3-3600 (got ${lease})`);
  const dbPool = v["db-pool"];
  if (!Number.isInteger(dbPool) || dbPool < 1 || dbPool > 1000) throw new UsageError(`--db-pool must be 1-1000 (got ${dbPool})`);
  const rateLimit = v["rate-limit"];
  if (!Number.isFinite(rateLimit) || rateLimit < 0 || rateLimit > 1_000_000) throw new UsageError(`--rate-limit must be 0-1000000 (got ${rateLimit})`);
  return {
    port: v.port,
    hostname: v.host,
    dataDir: v["data-dir"],
    ...(v.db !== undefined ? { db: v.db, dbPool } : {}),
    workers,
    leaseMs: lease * 1000,
    demo: v.demo ?? false,
    console: v.console,
    httpAllowHosts: list(v["http-allow-hosts"]),
    outboundAllow: outboundAllow(v["outbound-allow"]),
    envAllowList: list(v["env-allow"]),
    publicUrl: (v["public-url"] ?? `http://localhost:${v.port}`).replace(/\/+$/, ""),
    publicUrlFromRequest: v["public-url"] === undefined,
    signingSecret: "",
    rateLimit,
    ...auditRetention(v["audit-retention"]),
    secretKey: secretKeyFrom(v["secret-key-file"]),
    resendUrl: resendUrl(v["resend-url"]),
    ...blobConfig(v),
    s3Redirect: v["s3-redirect"] ?? false,
    uploadTtlMs: uploadTtl(v["upload-ttl"]),
    gcIntervalMs: parseDuration(v["gc-interval"], "gc-interval"),
    gcGraceMs: parseDuration(v["gc-grace"], "gc-grace"),
    ops: opsOptions(v),
    bodyTimeoutMs: bodyTimeoutMs(v["body-timeout"]),
    connections: connectionLimits(v),
    ...smtpConfig(v),
    ...oidcConfig(v),
    ...withModels(v.models),
  };
}

function outboundAllow(raw: string | undefined): string[] {
  const entries = list(raw);
  try {
    parseOutboundAllow(entries);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return entries;
}

function auditRetention(raw: string | undefined): Pick<AutomationConfig, "auditRetentionMs"> {
  if (raw === undefined) return {};
  const ms = parseDuration(raw, "audit-retention");
  if (ms < 60_000) throw new UsageError(`--audit-retention must be at least 1m (got ${raw}); leave it out to keep entries forever`);
  return { auditRetentionMs: ms };
}

function uploadTtl(raw: string): number {
  const ms = parseDuration(raw, "upload-ttl");
  // S3 presigned URLs live at most 7 days.
  if (ms < 1000 || ms > 7 * 86_400_000) throw new UsageError(`--upload-ttl must be 1s-7d (got ${raw})`);
  return ms;
}

/** `--models FILE`, else the environment; neither = no models (AI steps fail naming the flag). */
function withModels(file: string | undefined, env: Record<string, string | undefined> = process.env): Pick<AutomationConfig, "models"> {
  const models = file ? loadModelsFile(file, env) : modelsFromEnv(env);
  return models ? { models } : {};
}

/** Creates the data dir (and its parents) if missing; a clear fatal error when it cannot. */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw new FatalError(`cannot create data dir ${dataDir}: ${(err as Error).message}`);
  }
}
