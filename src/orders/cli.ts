// `order-server [serve options] | backup --to FILE | restore --from FILE --db FILE`.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { restoreSqlite, snapshotSqlite } from "../kernel/backup";
import { type FlagSpec, helpText, parseFlags } from "../kernel/config";
import { FatalError, UsageError } from "../kernel/errors";
import { isPostgresUrl } from "../kernel/pg";
import { orderFlags, orderHelpExtra, startOrderServer } from "./server";

const USAGE = `Usage: order-server [options]
       order-server backup --to FILE [--db FILE]
       order-server restore --from FILE --db FILE
       order-server --version        version, commit and build date

The marketplace order API (OAuth2 password grant; SQLite, or PostgreSQL for N instances).`;

/** The tables a backup of the order database must hold. */
const TABLES = ["users", "orders", "ledger", "__migrations"];

const PG_HINT = "for PostgreSQL use pg_dump / pg_restore (see docs/operations.md)";

export async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === "backup") return backupCommand(rest);
  if (cmd === "restore") return restoreCommand(rest);
  if (cmd === "serve") return serveCommand(rest);
  if (cmd !== undefined && !cmd.startsWith("-")) throw new UsageError(`unknown command "${cmd}"`);
  return serveCommand(argv);
}

async function serveCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, orderFlags);
  if (values.help) {
    process.stdout.write(helpText(USAGE, orderFlags, orderHelpExtra));
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  await startOrderServer({ ...values, oauthClients: process.env.ORDER_OAUTH_CLIENTS });
}

const backupFlags = {
  to: { type: "string", value: "FILE", help: "where to write the backup (a new SQLite file; never overwritten)" },
  db: { ...orderFlags.db, help: "the server's SQLite database file (a PostgreSQL URL is refused: use pg_dump)" },
  help: { type: "boolean", short: "h", help: "Show this help and exit" },
} satisfies Record<string, FlagSpec>;

/** A consistent copy of a running server's SQLite database, taken while it keeps serving writes. */
async function backupCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, backupFlags);
  if (values.help) {
    process.stdout.write(helpText("Usage: order-server backup --to FILE [--db FILE]\n\nCopies the SQLite database consistently while the server keeps running (SQLite VACUUM INTO).", backupFlags));
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.to) throw new UsageError("--to FILE is required");
  if (isPostgresUrl(values.db)) throw new FatalError(`--db is a PostgreSQL URL: ${PG_HINT}`);
  if (values.db === ":memory:") throw new FatalError("an in-memory database cannot be backed up");
  mkdirSync(dirname(values.to), { recursive: true });
  const t0 = performance.now();
  const { bytes } = snapshotSqlite(values.db, values.to, TABLES);
  process.stdout.write(`backed up ${values.db} to ${values.to} (${bytes} bytes, ${Math.round(performance.now() - t0)} ms)\n`);
}

const restoreFlags = {
  from: { type: "string", value: "FILE", help: "the backup file written by order-server backup" },
  db: { type: "string", env: "ORDER_DB", value: "FILE", help: "the SQLite database to create (must not exist or be empty)" },
  help: { type: "boolean", short: "h", help: "Show this help and exit" },
} satisfies Record<string, FlagSpec>;

/** Brings a backup back as a new database file; refuses a target that already holds data. */
async function restoreCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, restoreFlags);
  if (values.help) {
    process.stdout.write(helpText("Usage: order-server restore --from FILE --db FILE\n\nRestores a backup into a new (empty) database file; start the server on it afterwards.", restoreFlags));
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.from) throw new UsageError("--from FILE is required");
  if (!values.db) throw new UsageError("--db FILE is required (the database to create)");
  if (isPostgresUrl(values.db)) throw new FatalError(`--db is a PostgreSQL URL: ${PG_HINT}`);
  if (values.db === ":memory:") throw new UsageError("--db must be a file");
  mkdirSync(dirname(values.db), { recursive: true });
  const { bytes } = restoreSqlite(values.from, values.db, TABLES);
  process.stdout.write(`restored ${values.from} into ${values.db} (${bytes} bytes)\n`);
}
