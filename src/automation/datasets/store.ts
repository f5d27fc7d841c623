// The only SQL of dataset examples and their input/expected files (migration 0150_datasets.sql).
// JSON columns hold the wire values as text; the service parses them.
import type { Database } from "bun:sqlite";

export interface ExampleRow {
  id: string;
  tenantId: string;
  automationId: string;
  automationType: string;
  name: string;
  input: string | null;
  expected: string | null;
  metadata: string | null;
  annotation: string | null;
  rowOrder: number | null;
  overrides: string | null;
  latestRunId: string | null;
  createdAt: string;
  updatedAt: string;
}

export type Folder = "input" | "expected";

export interface ExampleFileRow {
  exampleId: string;
  folder: Folder;
  path: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

const EXAMPLE_COLS =
  "id, tenant_id AS tenantId, automation_id AS automationId, automation_type AS automationType, name, input, expected, metadata, annotation, row_order AS rowOrder, overrides, latest_run_id AS latestRunId, created_at AS createdAt, updated_at AS updatedAt";
const FILE_COLS = "example_id AS exampleId, folder, path, content_type AS contentType, size, sha256, created_at AS createdAt";
// Display order: rowOrder first (nulls last), then creation.
const ORDER = "ORDER BY row_order IS NULL, row_order, created_at, id";

export class ExampleStore {
  constructor(readonly sqlite: Database) {}

  tx<T>(fn: () => T): T {
    return this.sqlite.transaction(fn).immediate();
  }

  insert(r: ExampleRow): void {
    this.sqlite
      .query(
        `INSERT INTO dataset_examples (id, tenant_id, automation_id, automation_type, name, input, expected, metadata, annotation, row_order, overrides, latest_run_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.id, r.tenantId, r.automationId, r.automationType, r.name, r.input, r.expected, r.metadata, r.annotation, r.rowOrder, r.overrides, r.latestRunId, r.createdAt, r.updatedAt);
  }

  update(r: ExampleRow): void {
    this.sqlite
      .query(
        `UPDATE dataset_examples SET name = ?, input = ?, expected = ?, metadata = ?, annotation = ?, row_order = ?, overrides = ?, updated_at = ? WHERE id = ?`,
      )
      .run(r.name, r.input, r.expected, r.metadata, r.annotation, r.rowOrder, r.overrides, r.updatedAt, r.id);
  }

  setLatestRun(id: string, runId: string): void {
    this.sqlite.query("UPDATE dataset_examples SET latest_run_id = ? WHERE id = ?").run(runId, id);
  }

  get(tenantId: string, automationId: string, id: string): ExampleRow | undefined {
    return this.sqlite
      .query<ExampleRow, [string, string, string]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE tenant_id = ? AND automation_id = ? AND id = ?`)
      .get(tenantId, automationId, id) ?? undefined;
  }

  byId(id: string): ExampleRow | undefined {
    return this.sqlite.query<ExampleRow, [string]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE id = ?`).get(id) ?? undefined;
  }

  byName(automationId: string, name: string): ExampleRow | undefined {
    return this.sqlite
      .query<ExampleRow, [string, string]>(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE automation_id = ? AND name = ?`)
      .get(automationId, name) ?? undefined;
  }

  list(tenantId: string, automationId: string, limit: number, offset: number): ExampleRow[] {
    return this.sqlite
      .query<ExampleRow, [string, string, number, number]>(
        `SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE tenant_id = ? AND automation_id = ? ${ORDER} LIMIT ? OFFSET ?`,
      )
      .all(tenantId, automationId, limit, offset);
  }

  all(tenantId: string, automationId: string): ExampleRow[] {
    return this.list(tenantId, automationId, -1, 0);
  }

  count(tenantId: string, automationId: string): number {
    return this.sqlite
      .query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM dataset_examples WHERE tenant_id = ? AND automation_id = ?")
      .get(tenantId, automationId)!.n;
  }

  remove(id: string): void {
    this.sqlite.query("DELETE FROM example_files WHERE example_id = ?").run(id);
    this.sqlite.query("DELETE FROM dataset_examples WHERE id = ?").run(id);
  }

  files(exampleId: string, folder?: Folder): ExampleFileRow[] {
    if (!folder) return this.sqlite.query<ExampleFileRow, [string]>(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = ? ORDER BY folder DESC, path`).all(exampleId);
    return this.sqlite
      .query<ExampleFileRow, [string, string]>(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = ? AND folder = ? ORDER BY path`)
      .all(exampleId, folder);
  }

  file(exampleId: string, folder: Folder, path: string): ExampleFileRow | undefined {
    return this.sqlite
      .query<ExampleFileRow, [string, string, string]>(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = ? AND folder = ? AND path = ?`)
      .get(exampleId, folder, path) ?? undefined;
  }

  /** Inserts or replaces the file at (example, folder, path). */
  putFile(f: ExampleFileRow): void {
    this.sqlite
      .query("INSERT OR REPLACE INTO example_files (example_id, folder, path, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(f.exampleId, f.folder, f.path, f.contentType, f.size, f.sha256, f.createdAt);
  }

  renameFile(exampleId: string, folder: Folder, from: string, to: string): void {
    this.sqlite.query("UPDATE example_files SET path = ? WHERE example_id = ? AND folder = ? AND path = ?").run(to, exampleId, folder, from);
  }

  removeFile(exampleId: string, folder: Folder, path: string): void {
    this.sqlite.query("DELETE FROM example_files WHERE example_id = ? AND folder = ? AND path = ?").run(exampleId, folder, path);
  }

  /** Whether any file of the example still uses these bytes (the example holds one pin per blob). */
  usesBlob(exampleId: string, sha256: string): boolean {
    return !!this.sqlite.query("SELECT 1 FROM example_files WHERE example_id = ? AND sha256 = ? LIMIT 1").get(exampleId, sha256);
  }

  /** Drops one blob pin of `owner` (the files feature only releases all of an owner's pins at once). */
  releasePin(owner: string, sha256: string): void {
    this.sqlite.query("DELETE FROM blob_refs WHERE owner = ? AND sha256 = ?").run(owner, sha256);
  }
}
