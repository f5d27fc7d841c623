// Flags and environment of `automation-server serve` and the shared flags of admin subcommands.
import { availableParallelism } from "node:os";
import type { FlagSpec, FlagValues } from "../kernel/config";
import { UsageError } from "../kernel/errors";
import type { AutomationConfig } from "./context";
import { loadModelsFile, modelsFromEnv } from "./models/config";

export const dataDirFlag = {
  "data-dir": {
    type: "string",
    env: "AUTOMATION_DATA_DIR",
    default: "./data/automation",
    value: "DIR",
    help: "SQLite database, blob storage and signing secret",
  },
} satisfies Record<string, FlagSpec>;

export const serveFlags = {
  port: { type: "number", env: "PORT", default: 8081, value: "PORT", help: "HTTP port" },
  host: { type: "string", env: "HOST", default: "0.0.0.0", value: "HOST", help: "interface to listen on" },
  ...dataDirFlag,
  workers: { type: "number", env: "AUTOMATION_WORKERS", value: "N", help: "run concurrency (default: CPU count)" },
  demo: { type: "boolean", help: "create a demo tenant with a known API key and example workflows" },
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
    help: "comma list of hosts action.http may call (exact or *.suffix)",
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
  models: {
    type: "string",
    env: "AUTOMATION_MODELS",
    value: "FILE",
    help: "model providers (TOML, see README); without it AUTOMATION_DEFAULT_MODEL=provider/model configures one from env",
  },
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

const list = (s: string | undefined) => (s ?? "").split(",").map((x) => x.trim()).filter(Boolean);

export function serveConfig(v: FlagValues<typeof serveFlags>): AutomationConfig {
  if (!Number.isInteger(v.port) || v.port < 0 || v.port > 65535) throw new UsageError(`--port must be 0-65535 (got ${v.port})`);
  const workers = v.workers ?? availableParallelism();
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new UsageError(`--workers must be 1-256 (got ${workers})`);
  if (v["data-dir"].trim() === "") throw new UsageError("--data-dir must not be empty");
  const rateLimit = v["rate-limit"];
  if (!Number.isFinite(rateLimit) || rateLimit < 0 || rateLimit > 1_000_000) throw new UsageError(`--rate-limit must be 0-1000000 (got ${rateLimit})`);
  return {
    port: v.port,
    hostname: v.host,
    dataDir: v["data-dir"],
    workers,
    demo: v.demo ?? false,
    httpAllowHosts: list(v["http-allow-hosts"]),
    envAllowList: list(v["env-allow"]),
    publicUrl: (v["public-url"] ?? `http://localhost:${v.port}`).replace(/\/+$/, ""),
    publicUrlFromRequest: v["public-url"] === undefined,
    signingSecret: "",
    rateLimit,
    ...withModels(v.models),
  };
}

/** `--models FILE`, else the environment; neither = no models (AI steps fail naming the flag). */
function withModels(file: string | undefined, env: Record<string, string | undefined> = process.env): Pick<AutomationConfig, "models"> {
  const models = file ? loadModelsFile(file, env) : modelsFromEnv(env);
  return models ? { models } : {};
}
