// Shared plumbing of the admin subcommands: opening the data dir's database, printing, prompting.
import * as p from "@clack/prompts";
import { DomainError, FatalError, UsageError } from "../kernel/errors";
import { openStorage } from "./db/open";
import { dbUrl, ensureDataDir } from "./config";
import type { AutomationStorage } from "./db/storage";

/** An admin command beside a running server waits for the server's short write transactions. */
const ADMIN_BUSY_TIMEOUT_MS = 30_000;

/** The stores an admin command works on: PostgreSQL when `--db` names it, else the data dir's SQLite; `close` when done. */
export async function openAdminStorage(values: { "data-dir": string; db?: string }): Promise<{ storage: AutomationStorage; close(): Promise<void> }> {
  const db = dbUrl(values.db);
  if (!db) ensureDataDir(values["data-dir"]);
  const opened = await openStorage({ dataDir: values["data-dir"], db, dbPool: 2, busyTimeoutMs: ADMIN_BUSY_TIMEOUT_MS });
  return { storage: opened.storage, close: opened.close };
}

/** Interactive prompts only when a person is at the terminal. */
export const interactive = () => Boolean(process.stdin.isTTY && process.stdout.isTTY);

/** Asks for a missing value when interactive, else refuses with a usage error naming the flag. */
export async function askText(flag: string, message: string, placeholder?: string): Promise<string> {
  if (!interactive()) throw new UsageError(`${flag.startsWith("-") || flag === flag.toUpperCase() ? flag : `--${flag}`} is required`);
  const answer = await p.text({ message, placeholder, validate: (s) => (s && s.trim() ? undefined : "required") });
  if (p.isCancel(answer)) throw new FatalError("cancelled");
  return String(answer).trim();
}

/** Turns a domain refusal into one CLI line (exit 1). */
export function asCliError(err: unknown): never {
  if (err instanceof DomainError) {
    const detail = err.issues?.length ? err.issues.map((i) => `${i.field}: ${i.message}`).join("; ") : err.message;
    throw new FatalError(detail);
  }
  throw err;
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + "\n");
}
