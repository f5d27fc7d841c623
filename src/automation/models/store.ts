// What the runs feature still reads of the model-call journal synchronously (usage, expand=debug):
// re-exported from the SQLite storage until runs/ moves onto the async storage (issue 21), then this
// file goes. Everything else uses `ctx.storage.models`.
import type { Database } from "bun:sqlite";
import { SyncModelCallReads } from "../db/sqlite/models";

export const sqliteModelCallStore = (sqlite: Database) => new SyncModelCallReads(sqlite);
