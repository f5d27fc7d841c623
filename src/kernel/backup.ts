// Online backups of a SQLite database both servers share: `VACUUM INTO` writes a consistent snapshot
// (one read transaction: writers carry on meanwhile, WAL mode) to a new file, checked before it is
// renamed into place. Restores refuse any target that already holds data.
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { FatalError } from "./errors";

/** Throws unless `path` is a readable SQLite database passing `integrity_check` with `tables` in it. */
export function checkSqlite(path: string, tables: string[], what: string): void {
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const ok = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    if (ok.length !== 1 || ok[0].integrity_check !== "ok") throw new FatalError(`${what} ${path} is damaged: ${ok.map((r) => r.integrity_check).join("; ").slice(0, 200)}`);
    const have = new Set(db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name));
    const missing = tables.filter((t) => !have.has(t));
    if (missing.length) throw new FatalError(`${what} ${path} is not this server's database (no table ${missing.join(", ")})`);
  } catch (err) {
    if (err instanceof FatalError) throw err;
    throw new FatalError(`${what} ${path} is not a readable SQLite database: ${(err as Error).message}`);
  } finally {
    db?.close();
  }
}

/**
 * Writes a consistent copy of the SQLite database at `source` to `dest` (which must not exist) while
 * other processes keep writing to it. The copy is made under a temporary name, checked, then renamed.
 */
export function snapshotSqlite(source: string, dest: string, tables: string[]): { bytes: number } {
  if (!existsSync(source)) throw new FatalError(`no database at ${source}`);
  if (existsSync(dest)) throw new FatalError(`${dest} already exists: a backup never overwrites a file`);
  const tmp = `${dest}.${process.pid}.partial`;
  let db: Database | undefined;
  try {
    db = new Database(source, { create: false });
    db.exec("PRAGMA busy_timeout = 10000");
    db.query("VACUUM INTO ?").run(tmp);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new FatalError(`cannot back up ${source}: ${(err as Error).message}`);
  } finally {
    db?.close();
  }
  try {
    checkSqlite(tmp, tables, "the snapshot of");
    renameSync(tmp, dest);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return { bytes: statSync(dest).size };
}

/** True when nothing is at `path` or it is an empty directory / empty file. */
export function isEmptyTarget(path: string): boolean {
  if (!existsSync(path)) return true;
  const st = statSync(path);
  return st.isDirectory() ? readdirSync(path).length === 0 : st.size === 0;
}

/** Restores the SQLite file `from` (checked first) to `to`, which must not hold data (nor its WAL). */
export function restoreSqlite(from: string, to: string, tables: string[]): { bytes: number } {
  if (!existsSync(from)) throw new FatalError(`no backup at ${from}`);
  for (const p of [to, `${to}-wal`, `${to}-shm`]) {
    if (!isEmptyTarget(p)) throw new FatalError(`${p} already holds data: restore only into an empty target (move it away first)`);
  }
  checkSqlite(from, tables, "the backup");
  const tmp = `${to}.${process.pid}.partial`;
  try {
    // A copy through SQLite (not a byte copy): it leaves a plain database whatever the source's journal mode was.
    const src = new Database(from, { readonly: true });
    try {
      src.query("VACUUM INTO ?").run(tmp);
    } finally {
      src.close();
    }
    for (const p of [`${to}-wal`, `${to}-shm`]) rmSync(p, { force: true });
    renameSync(tmp, to);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new FatalError(`cannot restore into ${to}: ${(err as Error).message}`);
  }
  return { bytes: statSync(to).size };
}
