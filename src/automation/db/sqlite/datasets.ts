// Dataset examples and their input/expected files on SQLite (migration 0150_datasets.sql); an
// example's files and its blob pins change in one transaction.
import type { Database } from "bun:sqlite";
import { type DatasetStore, type ExampleFileRow, type ExampleRow, examplePin, type Folder, type NewExample } from "../../datasets/store";

const EXAMPLE_COLS =
  "id, tenant_id AS tenantId, automation_id AS automationId, automation_type AS automationType, name, input, expected, metadata, annotation, row_order AS rowOrder, overrides, latest_run_id AS latestRunId, created_at AS createdAt, updated_at AS updatedAt";
const FILE_COLS = "example_id AS exampleId, folder, path, content_type AS contentType, size, sha256, created_at AS createdAt";
// Display order: rowOrder first (nulls last), then creation.
const NAME_TAKEN = new Error("name taken");
const ORDER = "ORDER BY row_order IS NULL, row_order, created_at, id";

export class SqliteDatasetStore implements DatasetStore {
  constructor(readonly sqlite: Database) {}

  private byName(automationId: string, name: string): ExampleRow | undefined {
    return this.sqlite.query<ExampleRow, [string, string]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE automation_id = ? AND name = ?`).get(automationId, name) ?? undefined;
  }

  private listSync(tenantId: string, automationId: string, limit: number, offset: number): ExampleRow[] {
    return this.sqlite
      .query<ExampleRow, [string, string, number, number]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE tenant_id = ? AND automation_id = ? ${ORDER} LIMIT ? OFFSET ?`)
      .all(tenantId, automationId, limit, offset);
  }

  private fileSync(exampleId: string, folder: Folder, path: string): ExampleFileRow | undefined {
    return this.sqlite
      .query<ExampleFileRow, [string, string, string]>(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = ? AND folder = ? AND path = ?`)
      .get(exampleId, folder, path) ?? undefined;
  }

  private removeSync(id: string): void {
    this.sqlite.query("DELETE FROM example_files WHERE example_id = ?").run(id);
    this.sqlite.query("DELETE FROM dataset_examples WHERE id = ?").run(id);
  }

  private putFileSync(tenantId: string, f: ExampleFileRow): void {
    this.sqlite
      .query("INSERT OR REPLACE INTO example_files (example_id, folder, path, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(f.exampleId, f.folder, f.path, f.contentType, f.size, f.sha256, f.createdAt);
    this.sqlite.query("INSERT OR IGNORE INTO blob_refs (sha256, owner, tenant_id, created_at) VALUES (?, ?, ?, ?)").run(f.sha256, examplePin(f.exampleId), tenantId, f.createdAt);
  }

  async get(tenantId: string, automationId: string, id: string): Promise<ExampleRow | undefined> {
    return this.sqlite
      .query<ExampleRow, [string, string, string]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE tenant_id = ? AND automation_id = ? AND id = ?`)
      .get(tenantId, automationId, id) ?? undefined;
  }

  async byId(id: string): Promise<ExampleRow | undefined> {
    return this.sqlite.query<ExampleRow, [string]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE id = ?`).get(id) ?? undefined;
  }

  async list(tenantId: string, automationId: string, limit: number, offset: number): Promise<ExampleRow[]> {
    return this.listSync(tenantId, automationId, limit, offset);
  }

  async all(tenantId: string, automationId: string): Promise<ExampleRow[]> {
    return this.listSync(tenantId, automationId, -1, 0);
  }

  async count(tenantId: string, automationId: string): Promise<number> {
    return this.sqlite.query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM dataset_examples WHERE tenant_id = ? AND automation_id = ?").get(tenantId, automationId)!.n;
  }

  async files(exampleId: string, folder?: Folder): Promise<ExampleFileRow[]> {
    if (!folder) return this.sqlite.query<ExampleFileRow, [string]>(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = ? ORDER BY folder DESC, path`).all(exampleId);
    return this.sqlite.query<ExampleFileRow, [string, string]>(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = ? AND folder = ? ORDER BY path`).all(exampleId, folder);
  }

  async file(exampleId: string, folder: Folder, path: string): Promise<ExampleFileRow | undefined> {
    return this.fileSync(exampleId, folder, path);
  }

  async create(tenantId: string, examples: NewExample[], replace?: { automationId: string }): Promise<{ removed: string[]; filesRemoved: number } | "name_taken"> {
    const tx = this.sqlite.transaction(() => {
      const removed: string[] = [];
      let filesRemoved = 0;
      if (replace) {
        for (const r of this.listSync(tenantId, replace.automationId, -1, 0)) {
          filesRemoved += this.sqlite.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM example_files WHERE example_id = ?").get(r.id)!.n;
          this.removeSync(r.id);
          removed.push(r.id);
        }
      }
      // Thrown, so a replace's deletions roll back with it.
      for (const { row } of examples) if (this.byName(row.automationId, row.name)) throw NAME_TAKEN;
      const ins = this.sqlite.query(
        `INSERT INTO dataset_examples (id, tenant_id, automation_id, automation_type, name, input, expected, metadata, annotation, row_order, overrides, latest_run_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const { row: r, files } of examples) {
        ins.run(r.id, r.tenantId, r.automationId, r.automationType, r.name, r.input, r.expected, r.metadata, r.annotation, r.rowOrder, r.overrides, r.latestRunId, r.createdAt, r.updatedAt);
        for (const f of files) this.putFileSync(tenantId, f);
      }
      return { removed, filesRemoved };
    });
    try {
      return tx.immediate();
    } catch (err) {
      if (err === NAME_TAKEN) return "name_taken";
      throw err;
    }
  }

  async update(r: ExampleRow): Promise<"ok" | "name_taken"> {
    return this.sqlite.transaction(() => {
      const other = this.byName(r.automationId, r.name);
      if (other && other.id !== r.id) return "name_taken" as const;
      this.sqlite
        .query("UPDATE dataset_examples SET name = ?, input = ?, expected = ?, metadata = ?, annotation = ?, row_order = ?, overrides = ?, updated_at = ? WHERE id = ?")
        .run(r.name, r.input, r.expected, r.metadata, r.annotation, r.rowOrder, r.overrides, r.updatedAt, r.id);
      return "ok" as const;
    }).immediate();
  }

  async setLatestRun(id: string, runId: string): Promise<void> {
    this.sqlite.query("UPDATE dataset_examples SET latest_run_id = ? WHERE id = ?").run(runId, id);
  }

  async remove(id: string): Promise<void> {
    this.sqlite.transaction(() => this.removeSync(id)).immediate();
  }

  async putFiles(tenantId: string, files: ExampleFileRow[]): Promise<string[]> {
    return this.sqlite.transaction(() => {
      const replaced: string[] = [];
      for (const f of files) {
        const prev = this.fileSync(f.exampleId, f.folder, f.path);
        if (prev) replaced.push(prev.sha256);
        this.putFileSync(tenantId, f);
      }
      return replaced;
    }).immediate();
  }

  async renameFile(exampleId: string, folder: Folder, from: string, to: string): Promise<"ok" | "exists"> {
    return this.sqlite.transaction(() => {
      if (this.fileSync(exampleId, folder, to)) return "exists" as const;
      this.sqlite.query("UPDATE example_files SET path = ? WHERE example_id = ? AND folder = ? AND path = ?").run(to, exampleId, folder, from);
      return "ok" as const;
    }).immediate();
  }

  async removeFile(exampleId: string, folder: Folder, path: string): Promise<void> {
    this.sqlite.query("DELETE FROM example_files WHERE example_id = ? AND folder = ? AND path = ?").run(exampleId, folder, path);
  }

  async unpinIfUnused(exampleId: string, sha256: string): Promise<boolean> {
    return this.sqlite.transaction(() => {
      if (this.sqlite.query("SELECT 1 FROM example_files WHERE example_id = ? AND sha256 = ? LIMIT 1").get(exampleId, sha256)) return false;
      this.sqlite.query("DELETE FROM blob_refs WHERE owner = ? AND sha256 = ?").run(examplePin(exampleId), sha256);
      return true;
    }).immediate();
  }
}
