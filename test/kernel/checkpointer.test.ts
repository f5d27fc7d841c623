// The checkpoint thread (src/kernel/checkpointer.ts): a SQLite file's write-ahead log is copied into the
// file by the thread while the main connection only commits, the log starts over once copied, and
// stopping hands checkpoints back to the main connection. Real files in a temp dir.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SAFETY_PAGES, startCheckpointer } from "../../src/kernel/checkpointer";
import { openSqlite } from "../../src/kernel/db";

const dir = mkdtempSync(join(tmpdir(), "checkpointer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A connection opened as the server opens its own (WAL, synchronous NORMAL and a busy timeout). The
 * busy timeout matters here: a connection that reads the log's index while a commit is rewriting its
 * header takes the write lock for an instant to read it again (SQLite's rule), and a commit that
 * finds it taken waits that instant out instead of failing with SQLITE_BUSY.
 */
function open(name: string): { db: Database; file: string } {
  const file = join(dir, name);
  const db = openSqlite(file, []);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)");
  return { db, file };
}

/** ~3,000 commits of a 2 KiB row each: about 3,000 log pages, below SAFETY_PAGES. */
function write(db: Database, n = 3000): void {
  const insert = db.prepare("INSERT INTO t (body) VALUES (?)");
  const body = new Uint8Array(2048).fill(7);
  for (let i = 0; i < n; i++) insert.run(body);
  insert.finalize();
}

const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);
/** The database's size as the main connection sees it (through the log): what the file holds once all is copied. */
const bytes = (db: Database) =>
  db.query<{ n: number }, []>("SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()").get()!.n;

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await Bun.sleep(20);
  }
  return what();
}

describe("checkpoints on a thread of their own", () => {
  test("without the thread, at the raised automatic checkpoint, the commits stay in the log and the file does not grow (the premise)", () => {
    const { db, file } = open("control.db");
    db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_PAGES}`);
    write(db);
    expect(size(file)).toBeLessThan(100 * 1024);
    expect(size(`${file}-wal`)).toBeGreaterThan(5 * 1024 * 1024);
    db.close();
  });

  test("the thread copies the committed log into the file while the main connection only commits; the log then starts over; stop gives the main connection its own checkpoints back", async () => {
    const { db, file } = open("threaded.db");
    const cp = startCheckpointer(db, { everyMs: 20 });
    expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(SAFETY_PAGES);
    write(db);
    // The 3,000 rows (~6 MiB) reach the file without the main connection checkpointing: all of its
    // pages (the thread copies them in page order, so the file has its full size near the end of a copy).
    expect(bytes(db)).toBeGreaterThan(5 * 1024 * 1024);
    expect(await until(() => size(file) >= bytes(db), 5000)).toBe(true);
    // Once everything is copied, the next commit starts the log over from its beginning (SQLite's
    // rule: at a write whose snapshot saw the log fully copied), where it would otherwise be appended to.
    const frames = () => db.query<{ log: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get()!.log;
    await Bun.sleep(100);
    write(db, 1);
    expect(frames()).toBeLessThan(10);
    write(db, 2999);
    expect(bytes(db)).toBeGreaterThan(11 * 1024 * 1024);
    expect(await until(() => size(file) >= bytes(db), 5000)).toBe(true);
    // Data written on the main thread is all there, read through the file.
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(6000);
    await cp.stop();
    expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(1000);
    // The thread's connection is closed: the main one is the last, and closing it removes the log.
    db.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = new Database(file);
    expect(again.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(6000);
    again.close();
  });

  test("an in-memory database has no log: nothing starts, stop resolves", async () => {
    const db = new Database(":memory:");
    const cp = startCheckpointer(db);
    await cp.stop();
    expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(1000);
    db.close();
  });
});
