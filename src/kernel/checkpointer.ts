// SQLite's WAL checkpoints on a thread of their own. By default SQLite copies the write-ahead log back
// into the database file inside the commit that takes the log past 1,000 pages (wal_autocheckpoint):
// on the thread that made the commit, which in a server is the one answering HTTP, with an fsync of
// the log and of the file. Here a worker thread of the same process, with its own connection to the
// file, runs a PASSIVE checkpoint every `everyMs`: it copies what is committed without taking the
// write lock or waiting for anyone, so commits on the main thread go on while it works, and the next
// commit after a complete checkpoint starts the log over from its beginning.
//
// Durability is unchanged: a commit is what makes a write durable (in the log), as before; a
// checkpoint only moves committed pages into the file. If the thread falls behind or dies, the main
// connection still checkpoints itself, later: its automatic checkpoint is raised to SAFETY_PAGES, not
// turned off, so the log stays bounded whatever happens to the thread.
import type { Database } from "bun:sqlite";
import type { Logger } from "./logger";

/** How often the thread checkpoints (ms). */
export const CHECKPOINT_EVERY_MS = 200;
/** The main connection's own automatic checkpoint while the thread runs (pages of 4 KiB: ~40 MiB of log). */
export const SAFETY_PAGES = 10_000;
/** SQLite's default, given back when the thread stops. */
const DEFAULT_PAGES = 1000;

// The thread's code, as a Blob URL: nothing to embed in the executable, nothing to resolve at run time.
const SOURCE = `
import { Database } from "bun:sqlite";
let db, checkpoint, timer;
self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "start") {
    try {
      db = new Database(m.file);
      db.exec("PRAGMA synchronous = NORMAL");
      checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
      let failed = false;
      timer = setInterval(() => {
        try {
          checkpoint.get();
          failed = false;
        } catch (err) {
          if (!failed) postMessage({ type: "error", message: String(err && err.message || err) });
          failed = true;
        }
      }, m.everyMs);
    } catch (err) {
      postMessage({ type: "error", message: String(err && err.message || err) });
    }
  } else if (m.type === "stop") {
    clearInterval(timer);
    // Its statement finalized first: a connection closed with one open lingers (and keeps the log).
    try { checkpoint && checkpoint.finalize(); db && db.close(true); } catch {}
    postMessage({ type: "stopped" });
  }
};
`;

let url: string | undefined;

export interface Checkpointer {
  /** Stops the thread and closes its connection (before the main connection closes). */
  stop(): Promise<void>;
}

/**
 * Checkpoints `sqlite`'s file on a worker thread (a file database in WAL mode; an in-memory one has
 * no log and gets a no-op). The thread never keeps the process alive.
 */
export function startCheckpointer(sqlite: Database, opts: { everyMs?: number; log?: Logger } = {}): Checkpointer {
  const file = sqlite.filename;
  if (!file || file === ":memory:") return { stop: async () => {} };
  let worker: Worker;
  try {
    url ??= URL.createObjectURL(new Blob([SOURCE], { type: "text/javascript" }));
    worker = new Worker(url);
  } catch (err) {
    opts.log?.warn("sqlite checkpoints stay on the main thread: the checkpoint thread did not start", { error: (err as Error).message });
    return { stop: async () => {} };
  }
  worker.unref();
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_PAGES}`);
  let stopped: (() => void) | undefined;
  worker.onmessage = (e: MessageEvent<{ type: string; message?: string }>) => {
    if (e.data.type === "error") opts.log?.warn("sqlite checkpoint thread: a checkpoint failed (the main connection checkpoints itself later)", { error: e.data.message ?? "" });
    else if (e.data.type === "stopped") stopped?.();
  };
  worker.postMessage({ type: "start", file, everyMs: opts.everyMs ?? CHECKPOINT_EVERY_MS });
  let done: Promise<void> | undefined;
  return {
    stop: () =>
      (done ??= new Promise<void>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          worker.terminate();
          try {
            sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`);
          } catch {
            // already closed
          }
          resolve();
        };
        // A thread that does not answer within a second is terminated all the same.
        const timer = setTimeout(finish, 1000);
        stopped = finish;
        worker.postMessage({ type: "stop" });
      })),
  };
}
