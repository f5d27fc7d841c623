// `automation-server migrate --from <data-dir> --to postgres://…`: copies an SQLite deployment into an
// empty PostgreSQL database. Generic over the schema: the tables and their column types come from
// PostgreSQL's catalog (the PostgreSQL schema mirrors SQLite's, test/automation/db/pg-schema.test.ts),
// the order from its foreign keys. Reads happen in one SQLite read transaction (a consistent snapshot
// even next to a running server); writes go in one PostgreSQL transaction per table batch. A failed copy
// empties the target again, so it can simply be re-run. Blobs stay where they are.
import type { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { migrations } from "../../../db/automation/index";
import { openSqlite } from "../../kernel/db";
import { FatalError } from "../../kernel/errors";
import { redactUrl } from "../../kernel/pg";
import { migrateAutomationPg } from "./pg-migrate";

interface Column {
  name: string;
  type: string;
}
interface Table {
  name: string;
  columns: Column[];
  identity: string[];
}

export interface CopyProgress {
  /** Once, before the first row: how many rows the copy will write in all. */
  start(totalRows: number): void;
  table(name: string, total: number): void;
  advance(rows: number): void;
}

export interface CopyCount {
  table: string;
  sqlite: number;
  postgres: number;
}

/** The tables of the automation schema on PostgreSQL, parents before children. */
async function pgTables(pg: SQL): Promise<Table[]> {
  const cols = (await pg`SELECT table_name, column_name, data_type, is_identity FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> 'automation_migrations' ORDER BY table_name, ordinal_position`) as {
    table_name: string;
    column_name: string;
    data_type: string;
    is_identity: string;
  }[];
  const fks = (await pg`SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
    FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = 'public'`) as { child: string; parent: string }[];
  const byName = new Map<string, Table>();
  for (const c of cols) {
    const t = byName.get(c.table_name) ?? { name: c.table_name, columns: [], identity: [] };
    t.columns.push({ name: c.column_name, type: c.data_type });
    if (c.is_identity === "YES") t.identity.push(c.column_name);
    byName.set(c.table_name, t);
  }
  const ordered: Table[] = [];
  const seen = new Set<string>();
  const visit = (name: string, path: string[]) => {
    if (seen.has(name) || path.includes(name)) return;
    for (const fk of fks) if (fk.child === name && fk.parent !== name) visit(fk.parent, [...path, name]);
    seen.add(name);
    const t = byName.get(name);
    if (t) ordered.push(t);
  };
  for (const name of [...byName.keys()].sort()) visit(name, []);
  return ordered;
}

/** A SQLite value as PostgreSQL takes it for a column of `type`; the SQL placeholder that casts it. */
function bind(type: string, value: unknown, n: number): { value: unknown; placeholder: string } {
  if (value === null || value === undefined) return { value: null, placeholder: `$${n}` };
  switch (type) {
    case "boolean":
      return { value: Number(value) !== 0, placeholder: `$${n}::boolean` };
    case "timestamp with time zone":
      return { value: String(value), placeholder: `CAST($${n} AS text)::timestamptz` };
    case "json":
    case "jsonb":
      // Bound as text and cast: Bun would send a JS string to a json column as a JSON string.
      return { value: String(value), placeholder: `CAST($${n} AS text)::${type}` };
    case "bigint":
      return { value: String(value), placeholder: `CAST($${n} AS text)::bigint` };
    default:
      return { value, placeholder: `$${n}` };
  }
}

/** Refuses unless every automation table on the target is empty. */
async function assertEmpty(pg: SQL, tables: Table[]): Promise<void> {
  for (const t of tables) {
    const [{ n }] = (await pg.unsafe(`SELECT COUNT(*)::int AS n FROM (SELECT 1 FROM ${t.name} LIMIT 1) x`)) as { n: number }[];
    if (n > 0) throw new FatalError(`the target database is not empty (${t.name} has rows): migrate --from copies into an empty database only`);
  }
}

/** Opens `<dataDir>/automation.db`, brought up to the current SQLite schema first. */
function openSource(dataDir: string): Database {
  const file = join(dataDir, "automation.db");
  if (!existsSync(file)) throw new FatalError(`no automation database in ${dataDir} (looked for ${file})`);
  return openSqlite(file, migrations);
}

export async function copySqliteToPg(dataDir: string, url: string, progress?: CopyProgress, batchRows = 1000): Promise<CopyCount[]> {
  const source = openSource(dataDir);
  await migrateAutomationPg(url);
  const pg = new SQL({ url, max: 2, connectionTimeout: 10 });
  const counts: CopyCount[] = [];
  let wrote = false;
  let tables: Table[] = [];
  try {
    tables = await pgTables(pg);
    await assertEmpty(pg, tables);
    source.exec("BEGIN"); // one read snapshot for every table
    try {
      const totals = tables.map((t) => (source.query(`SELECT COUNT(*) AS n FROM ${t.name}`).get() as { n: number }).n);
      progress?.start(totals.reduce((a, b) => a + b, 0));
      for (const [i, t] of tables.entries()) {
        const names = t.columns.map((c) => c.name);
        const total = totals[i];
        progress?.table(t.name, total);
        const perBatch = Math.max(1, Math.min(batchRows, Math.floor(60_000 / names.length)));
        const select = source.query(`SELECT ${names.map((n) => `"${n}"`).join(", ")} FROM ${t.name} ORDER BY rowid LIMIT ? OFFSET ?`);
        for (let offset = 0; offset < total; offset += perBatch) {
          const rows = select.all(perBatch, offset) as Record<string, unknown>[];
          if (!rows.length) break;
          const values: unknown[] = [];
          const tuples = rows.map((row) => {
            const ph = t.columns.map((c) => {
              const b = bind(c.type, row[c.name], values.length + 1);
              values.push(b.value);
              return b.placeholder;
            });
            return `(${ph.join(", ")})`;
          });
          const overriding = t.identity.length ? " OVERRIDING SYSTEM VALUE" : "";
          wrote = true;
          await pg
            .begin((tx) => tx.unsafe(`INSERT INTO ${t.name} (${names.join(", ")})${overriding} VALUES ${tuples.join(", ")}`, values))
            .catch((err: Error) => {
              throw new Error(`table ${t.name}, rows ${offset + 1}-${offset + rows.length}: ${err.message}`);
            });
          progress?.advance(rows.length);
        }
        for (const col of t.identity) {
          await pg.unsafe(`SELECT setval(pg_get_serial_sequence('${t.name}', '${col}'), GREATEST((SELECT MAX(${col}) FROM ${t.name}), 1))`);
        }
        const [{ n }] = (await pg.unsafe(`SELECT COUNT(*)::int AS n FROM ${t.name}`)) as { n: number }[];
        counts.push({ table: t.name, sqlite: total, postgres: n });
      }
    } finally {
      source.exec("COMMIT");
    }
    const off = counts.filter((c) => c.sqlite !== c.postgres);
    if (off.length) throw new Error(`row counts differ after the copy: ${off.map((c) => `${c.table} ${c.sqlite}→${c.postgres}`).join(", ")}`);
    return counts;
  } catch (err) {
    if (wrote) await pg.unsafe(`TRUNCATE ${tables.map((t) => t.name).join(", ")} CASCADE`).catch(() => {});
    if (err instanceof FatalError) throw err;
    throw new FatalError(`copy to ${redactUrl(url)} failed${wrote ? " (the target was emptied again)" : ""}: ${(err as Error).message}`);
  } finally {
    source.close();
    await pg.close({ timeout: 5 }).catch(() => {});
  }
}
