// The SQLite side of `automation-server backup` / `restore`: the online snapshot (VACUUM INTO, see
// kernel/backup.ts), its restore, and the blobs a database file refers to. PostgreSQL deployments use
// pg_dump; backup.ts refuses them before reaching here.
import { Database } from "bun:sqlite";
import { restoreSqlite, snapshotSqlite } from "../../../kernel/backup";

/** Tables a file must hold to be this server's database. */
const TABLES = ["runs", "files", "blob_refs", "__migrations"];

/** A consistent copy of the database at `source` (server running or not) to the new file `dest`. */
export function snapshotDatabase(source: string, dest: string): void {
  snapshotSqlite(source, dest, TABLES);
}

/** Brings the backup file `from` back as the new database file `dest`. */
export function restoreDatabase(from: string, dest: string): void {
  restoreSqlite(from, dest, TABLES);
}

/** Every distinct sha256 any table of the database at `path` refers to (any column named sha256). */
export function referencedBlobs(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name);
    const shas = new Set<string>();
    for (const t of tables) {
      const cols = db.query<{ name: string }, []>(`PRAGMA table_info("${t.replace(/"/g, '""')}")`).all();
      if (!cols.some((c) => c.name === "sha256")) continue;
      for (const r of db.query<{ sha256: string }, []>(`SELECT DISTINCT sha256 FROM "${t.replace(/"/g, '""')}" WHERE sha256 IS NOT NULL`).all()) shas.add(r.sha256);
    }
    return [...shas].filter((s) => /^[0-9a-f]{64}$/.test(s)).sort();
  } finally {
    db.close();
  }
}

