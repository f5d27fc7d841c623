// `automation-server [serve] | migrate | tenants create | keys create|list|revoke | workflows push`.
import { migrations } from "../../db/automation/index";
import { helpText, parseFlags } from "../kernel/config";
import { migrate, openSqlite } from "../kernel/db";
import { UsageError } from "../kernel/errors";
import { isPostgresUrl, redactUrl } from "../kernel/pg";
import { progress } from "@clack/prompts";
import { interactive } from "./admin";
import { copySqliteToPg } from "./db/pg-copy";
import { migrateAutomationPg } from "./db/pg-migrate";
import { join } from "node:path";
import { dbUrl, ensureDataDir, serveConfig, serveFlags, storageFlags } from "./config";
import { checkSharedBlobs, createContext, serve, work } from "./server";
import { writeReadyFile } from "../kernel/server";
import { DEMO_EMAIL, runDemo } from "./demo/seed";
import { keysCommand, tenantsCommand } from "./tenancy/cli";
import { usersCommand } from "./people/cli";
import { auditCommand } from "./audit/cli";
import { setupToken } from "./people/service";
import { workflowsCommand } from "./automations/cli";
import { agentsCommand } from "./agents/cli";
import { seedDemoAgent } from "./agents/demo";
import { blobsCommand } from "./files/cli";
import { backupCommand, restoreCommand } from "./backup";
import { experimentsCommand } from "./experiments-gate";

const USAGE = `Usage: automation-server [serve] [options]
       automation-server --version   version, commit and build date
       automation-server worker --db postgres://… [--workers N] [--port PORT]
       automation-server migrate [--data-dir DIR | --db postgres://…] [--json]
       automation-server migrate --from DATA_DIR --to postgres://… [--json]
       automation-server backup --to DIR [--data-dir DIR] [--json]
       automation-server restore --from DIR --data-dir DIR [--json]
       automation-server tenants create --name NAME [--slug SLUG] [--json]
       automation-server keys create --tenant SLUG [--scopes LIST] [--name NAME] [--json]
       automation-server keys list --tenant SLUG [--json]
       automation-server keys revoke KEY_ID [--json]
       automation-server users create|list|disable|enable|set-role|invite ... (users --help)
       automation-server audit export --since TIME [--until TIME] --tenant SLUG   (NDJSON)
       automation-server audit verify [--tenant SLUG]
       automation-server workflows push FILE.yaml --tenant SLUG [--json]
       automation-server agents add --tenant SLUG --repo PATH_OR_URL [--slug SLUG] [--json]
       automation-server agents sync AGENT --tenant SLUG [--json]
       automation-server blobs gc [--dry-run] [--grace DURATION] [--blobs DIR|s3://…]
       automation-server blobs copy --to DIR|s3://BUCKET/PREFIX [--blobs DIR|s3://…]
       automation-server experiments gate --base EXP --candidate EXP [--format junit] [--url URL --key KEY]

Each subcommand takes --help.`;

export async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
      return serveCommand([]);
    case "serve":
      return serveCommand(rest);
    case "worker":
      return workerCommand(rest);
    case "migrate":
      return migrateCommand(rest);
    case "backup":
      return backupCommand(rest);
    case "restore":
      return restoreCommand(rest);
    case "tenants":
      return tenantsCommand(rest);
    case "keys":
      return keysCommand(rest);
    case "users":
      return usersCommand(rest);
    case "audit":
      return auditCommand(rest);
    case "workflows":
      return workflowsCommand(rest);
    case "agents":
      return agentsCommand(rest);
    case "blobs":
      return blobsCommand(rest);
    case "experiments":
      return experimentsCommand(rest);
    default:
      if (cmd.startsWith("-")) return serveCommand(argv);
      throw new UsageError(`unknown command "${cmd}"`);
  }
}

async function serveCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, serveFlags);
  if (values.help) {
    process.stdout.write(helpText(USAGE, serveFlags));
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const config = serveConfig(values);
  const ctx = await createContext(config);
  await checkSharedBlobs(ctx);
  const demo = config.demo ? await runDemo(ctx) : undefined;
  const demoAgent = demo ? await seedDemoAgent(ctx, demo.tenantId) : undefined;
  const served = serve(ctx);
  const { running, metricsUrl } = served;
  const smtp = await served.smtp;
  // No user yet: a one-time link (24 h, stored hashed, voided by the next start's) creates the first owner.
  // Made before the log line: nothing awaited between the log line and the banner, so whoever reads
  // stdout and stderr together sees the address line first.
  const setup = await setupToken({ people: ctx.storage.people, tenancy: ctx.storage.tenancy, clock: ctx.clock });
  const demoLink = demo && config.console !== false ? await demo.signInLink(config.publicUrlFromRequest ? running.url : config.publicUrl) : undefined;
  ctx.log.info("automation-server listening", { url: running.url, dataDir: config.dataDir, database: ctx.db.describe, ...(smtp ? { smtp: smtp.url } : {}) });
  // One write: whoever reads the address line (a supervisor, a test) has the rest of the banner with it.
  const banner = [`automation-server listening on ${running.url} (API under ${running.url}/v1, OpenAPI ${running.url}/openapi/json)\n`, `database on ${ctx.db.describe}\n`];
  if (smtp) banner.push(`smtp on ${smtp.url} (inbound e-mail for *@${config.mailDomain})\n`);
  if (metricsUrl) banner.push(`metrics on ${metricsUrl}\n`);
  else if (ctx.metrics) banner.push(`metrics on ${running.url}/metrics\n`);
  if (demo) banner.push(demo.banner(running.url));
  // A single-use code (10 minutes), not the key: nothing a browser keeps in its history signs anyone in later.
  if (demoLink) banner.push(`  console    ${demoLink.link}\n             (signs in as ${DEMO_EMAIL}: one use, within 10 minutes; a new link each start)\n\n`);
  if (setup) banner.push(`first owner: open ${(config.publicUrlFromRequest ? running.url : config.publicUrl).replace(/\/+$/, "")}/v1/auth/setup?token=${setup} (one use, 24 h)\n`);
  if (demoAgent) banner.push(`${demoAgent.agent ? `  agent      ${demoAgent.agent} (runs need --models)` : `  note       ${demoAgent.note}`}\n\n`);
  process.stdout.write(banner.join(""));
  writeReadyFile(values["ready-file"], running.url, smtp ? [smtp.url] : []);
}

// `worker` parses serve's flags (one config) but shows and takes only those a worker uses; --port is
// optional (no port, no HTTP at all).
const WORKER_FLAGS = [
  "db", "db-pool", "data-dir", "workers", "lease-seconds", "ready-file", "host", "http-allow-hosts", "outbound-allow", "env-allow", "models",
  "secret-key-file", "resend-url", "blobs", "s3-endpoint", "s3-region", "blobs-max-bytes", "log-format", "help",
] as const;
const workerFlags = {
  ...serveFlags,
  port: { type: "number", value: "PORT", help: "serve GET /health and GET /metrics (only) on this port (0: a free one, reported on the first stdout line); default: no HTTP" },
} as const;
const workerHelp = Object.fromEntries(Object.entries(workerFlags).filter(([k]) => k === "port" || (WORKER_FLAGS as readonly string[]).includes(k))) as Partial<typeof workerFlags>;

async function workerCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, workerFlags);
  if (values.help) {
    process.stdout.write(
      helpText(
        "Usage: automation-server worker --db postgres://… [options]\n\nExecutes runs from the database's queue, next to any number of `serve` instances (`--workers 0` makes\nthose API only) and other workers on the same PostgreSQL database (docs/automation/scale-out.md).\nNo public API. SIGTERM: stops claiming, lets running steps finish (10 s), hands back the rest, exits 0.",
        workerHelp as typeof workerFlags,
      ),
    );
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const given = argv.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0].replace(/^no-/, ""));
  const foreign = given.find((k) => k !== "port" && !(WORKER_FLAGS as readonly string[]).includes(k));
  if (foreign) throw new UsageError(`--${foreign} is a serve option; a worker takes: ${["port", ...WORKER_FLAGS.filter((f) => f !== "help")].map((f) => `--${f}`).join(", ")}`);
  if (dbUrl(values.db) === undefined) throw new UsageError("a worker needs --db postgres://… (the database the serve instances use): on SQLite `serve` runs its own workers");
  const config = serveConfig({ ...values, port: values.port ?? 0, demo: false, console: false });
  if (config.workers < 1) throw new UsageError("a worker needs --workers 1-256");
  const ctx = await createContext(config, { metrics: values.port !== undefined });
  await checkSharedBlobs(ctx);
  const working = await work(ctx, { port: values.port });
  ctx.log.info("automation-server worker started", { worker: working.worker, slots: config.workers, database: ctx.db.describe, ...(working.url ? { url: working.url } : {}) });
  const slots = `${config.workers} slot${config.workers === 1 ? "" : "s"}`;
  process.stdout.write(
    (working.url ? `automation-server worker listening on ${working.url} (GET /health, GET /metrics; ${slots})\n` : `automation-server worker ready (${slots})\n`) +
      `database on ${ctx.db.describe}\n`,
  );
  writeReadyFile(values["ready-file"], working.url ?? "ready", []);
}

const migrateFlags = {
  ...storageFlags,
  from: { type: "string", value: "DIR", help: "with --to: copy this SQLite deployment's data dir into PostgreSQL" },
  to: { type: "string", value: "URL", help: "with --from: the empty PostgreSQL database to copy into" },
  json: { type: "boolean", help: 'print one JSON object: {"applied": [names]} (a copy: {"tables": [{table, rows}]})' },
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

async function migrateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, migrateFlags);
  if (values.help) {
    process.stdout.write(
      helpText(
        "Usage: automation-server migrate [--data-dir DIR | --db postgres://…] [--json]\n       automation-server migrate --from DATA_DIR --to postgres://… [--json]\n\nApplies pending database migrations and exits (PostgreSQL: under an advisory lock, so\nseveral instances may run it at once). With --from/--to: copies an SQLite deployment into an\nempty PostgreSQL database (docs/automation/postgres.md).",
        migrateFlags,
      ),
    );
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (values.from !== undefined || values.to !== undefined) return copyCommand(values.from, values.to, Boolean(values.json));
  let applied: string[];
  const db = dbUrl(values.db);
  if (db !== undefined) {
    applied = await migrateAutomationPg(db);
  } else {
    ensureDataDir(values["data-dir"]);
    const sqlite = openSqlite(join(values["data-dir"], "automation.db"), []);
    applied = migrate(sqlite, migrations);
    sqlite.close();
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ applied }) + "\n");
    return;
  }
  process.stdout.write(applied.length ? `applied ${applied.length} migration(s): ${applied.join(", ")}\n` : "database is up to date\n");
}

/** `migrate --from DIR --to URL`: the copy, a progress bar on a terminal, then the rows per table. */
async function copyCommand(from: string | undefined, to: string | undefined, json: boolean): Promise<void> {
  if (!from || !to) throw new UsageError("--from DATA_DIR and --to postgres://… go together");
  if (!isPostgresUrl(to)) throw new UsageError(`--to must be a postgres:// URL (got "${to}")`);
  const tty = !json && interactive();
  let bar: ReturnType<typeof progress> | undefined;
  let current = "";
  const counts = await copySqliteToPg(from, to, {
    start(total) {
      if (!tty) return;
      bar = progress({ max: Math.max(1, total) });
      bar.start(`copying ${total} rows`);
    },
    table(name, total) {
      current = `${name} (${total} rows)`;
      if (bar) bar.message(current);
      else if (!json) process.stdout.write(`copying ${current}\n`);
    },
    advance(rows) {
      bar?.advance(rows, current);
    },
  });
  bar?.stop("copied");
  if (json) {
    process.stdout.write(JSON.stringify({ tables: counts.map((c) => ({ table: c.table, rows: c.postgres })) }) + "\n");
    return;
  }
  const width = Math.max(...counts.map((c) => c.table.length));
  process.stdout.write(`\n${"table".padEnd(width)}  rows\n`);
  for (const c of counts) process.stdout.write(`${c.table.padEnd(width)}  ${c.postgres}\n`);
  process.stdout.write(`\ncopied ${counts.reduce((n, c) => n + c.postgres, 0)} rows in ${counts.length} tables to ${redactUrl(to)}; blobs stay in ${from}/blobs (or where --blobs points)\n`);
}
