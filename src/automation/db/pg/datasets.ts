// Dataset examples and their files on PostgreSQL. Name and path conflicts are decided by the unique
// indexes (dataset_examples_name, example_files' primary key), not by a read first; the writes that
// touch an example's files and its blob pins lock the example row, so a file added while another
// request unpins its blob cannot lose its pin.
import { type DatasetStore, type ExampleFileRow, type ExampleRow, examplePin, type Folder, type NewExample } from "../../datasets/store";
import { int, isUniqueViolation, type Pg, plain, plainRows } from "./rows";

const EXAMPLE_COLS = `id, tenant_id AS "tenantId", automation_id AS "automationId", automation_type AS "automationType", name, input::text AS input,
  expected::text AS expected, metadata::text AS metadata, annotation, row_order AS "rowOrder", overrides::text AS overrides, latest_run_id AS "latestRunId",
  created_at AS "createdAt", updated_at AS "updatedAt"`;
const FILE_COLS = `example_id AS "exampleId", folder, path, content_type AS "contentType", size::float8 AS size, sha256, created_at AS "createdAt"`;
const ORDER = "ORDER BY row_order IS NULL, row_order, created_at, id";

const fileRows = (rows: Record<string, unknown>[]) => plainRows<ExampleFileRow>(rows);

export class PgDatasetStore implements DatasetStore {
  constructor(readonly pg: Pg) {}

  private async lockExample(tx: Pg, exampleId: string): Promise<void> {
    await tx`SELECT 1 FROM dataset_examples WHERE id = ${exampleId} FOR UPDATE`;
  }

  private async putFile(tx: Pg, tenantId: string, f: ExampleFileRow): Promise<void> {
    await tx`INSERT INTO example_files (example_id, folder, path, content_type, size, sha256, created_at)
      VALUES (${f.exampleId}, ${f.folder}, ${f.path}, ${f.contentType}, ${f.size}, ${f.sha256}, ${f.createdAt})
      ON CONFLICT (example_id, folder, path) DO UPDATE SET content_type = excluded.content_type, size = excluded.size, sha256 = excluded.sha256, created_at = excluded.created_at`;
    await tx`INSERT INTO blob_refs (sha256, owner, tenant_id, created_at) VALUES (${f.sha256}, ${examplePin(f.exampleId)}, ${tenantId}, ${f.createdAt}) ON CONFLICT DO NOTHING`;
  }

  async get(tenantId: string, automationId: string, id: string): Promise<ExampleRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE tenant_id = $1 AND automation_id = $2 AND id = $3`, [tenantId, automationId, id]);
    return r ? plain<ExampleRow>(r) : undefined;
  }

  async byId(id: string): Promise<ExampleRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE id = $1`, [id]);
    return r ? plain<ExampleRow>(r) : undefined;
  }

  async list(tenantId: string, automationId: string, limit: number, offset: number): Promise<ExampleRow[]> {
    const rows = await this.pg.unsafe(`SELECT ${EXAMPLE_COLS} FROM dataset_examples WHERE tenant_id = $1 AND automation_id = $2 ${ORDER} LIMIT $3 OFFSET $4`, [
      tenantId,
      automationId,
      limit < 0 ? null : limit,
      offset,
    ]);
    return plainRows<ExampleRow>(rows);
  }

  all(tenantId: string, automationId: string): Promise<ExampleRow[]> {
    return this.list(tenantId, automationId, -1, 0);
  }

  async count(tenantId: string, automationId: string): Promise<number> {
    const [{ n }] = await this.pg`SELECT COUNT(*)::int AS n FROM dataset_examples WHERE tenant_id = ${tenantId} AND automation_id = ${automationId}`;
    return n;
  }

  async files(exampleId: string, folder?: Folder): Promise<ExampleFileRow[]> {
    if (!folder) return fileRows(await this.pg.unsafe(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = $1 ORDER BY folder DESC, path`, [exampleId]));
    return fileRows(await this.pg.unsafe(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = $1 AND folder = $2 ORDER BY path`, [exampleId, folder]));
  }

  async file(exampleId: string, folder: Folder, path: string): Promise<ExampleFileRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${FILE_COLS} FROM example_files WHERE example_id = $1 AND folder = $2 AND path = $3`, [exampleId, folder, path]);
    return r ? plain<ExampleFileRow>(r) : undefined;
  }

  async create(tenantId: string, examples: NewExample[], replace?: { automationId: string }): Promise<{ removed: string[]; filesRemoved: number } | "name_taken"> {
    try {
      return await this.pg.begin(async (tx) => {
        const removed: string[] = [];
        let filesRemoved = 0;
        if (replace) {
          const gone = await tx`SELECT id FROM dataset_examples WHERE tenant_id = ${tenantId} AND automation_id = ${replace.automationId} ORDER BY id FOR UPDATE`;
          removed.push(...gone.map((r: { id: string }) => r.id));
          if (removed.length) {
            filesRemoved = int((await tx`SELECT COUNT(*) AS n FROM example_files WHERE example_id IN ${tx(removed)}`)[0].n);
            await tx`DELETE FROM dataset_examples WHERE id IN ${tx(removed)}`; // their files go with them (ON DELETE CASCADE)
          }
        }
        for (const { row: r, files } of examples) {
          await tx`INSERT INTO dataset_examples (id, tenant_id, automation_id, automation_type, name, input, expected, metadata, annotation, row_order, overrides, latest_run_id, created_at, updated_at)
            VALUES (${r.id}, ${r.tenantId}, ${r.automationId}, ${r.automationType}, ${r.name}, CAST(${r.input} AS text)::json, CAST(${r.expected} AS text)::json,
              CAST(${r.metadata} AS text)::json, ${r.annotation}, ${r.rowOrder}, CAST(${r.overrides} AS text)::json, ${r.latestRunId}, ${r.createdAt}, ${r.updatedAt})`;
          for (const f of files) await this.putFile(tx, tenantId, f);
        }
        return { removed, filesRemoved };
      });
    } catch (err) {
      if (isUniqueViolation(err, "dataset_examples_name")) return "name_taken";
      throw err;
    }
  }

  async update(r: ExampleRow): Promise<"ok" | "name_taken"> {
    try {
      await this.pg`UPDATE dataset_examples SET name = ${r.name}, input = CAST(${r.input} AS text)::json, expected = CAST(${r.expected} AS text)::json,
        metadata = CAST(${r.metadata} AS text)::json, annotation = ${r.annotation}, row_order = ${r.rowOrder}, overrides = CAST(${r.overrides} AS text)::json,
        updated_at = ${r.updatedAt} WHERE id = ${r.id}`;
      return "ok";
    } catch (err) {
      if (isUniqueViolation(err, "dataset_examples_name")) return "name_taken";
      throw err;
    }
  }

  async setLatestRun(id: string, runId: string): Promise<void> {
    await this.pg`UPDATE dataset_examples SET latest_run_id = ${runId} WHERE id = ${id}`;
  }

  async remove(id: string): Promise<void> {
    await this.pg`DELETE FROM dataset_examples WHERE id = ${id}`; // its files go with it (ON DELETE CASCADE)
  }

  async putFiles(tenantId: string, files: ExampleFileRow[]): Promise<string[]> {
    return this.pg.begin(async (tx) => {
      const replaced: string[] = [];
      for (const id of [...new Set(files.map((f) => f.exampleId))].sort()) await this.lockExample(tx, id);
      for (const f of files) {
        const [prev] = await tx`SELECT sha256 FROM example_files WHERE example_id = ${f.exampleId} AND folder = ${f.folder} AND path = ${f.path}`;
        if (prev) replaced.push(prev.sha256);
        await this.putFile(tx, tenantId, f);
      }
      return replaced;
    });
  }

  async renameFile(exampleId: string, folder: Folder, from: string, to: string): Promise<"ok" | "exists"> {
    try {
      await this.pg`UPDATE example_files SET path = ${to} WHERE example_id = ${exampleId} AND folder = ${folder} AND path = ${from}`;
      return "ok";
    } catch (err) {
      if (isUniqueViolation(err)) return "exists";
      throw err;
    }
  }

  async removeFile(exampleId: string, folder: Folder, path: string): Promise<void> {
    await this.pg`DELETE FROM example_files WHERE example_id = ${exampleId} AND folder = ${folder} AND path = ${path}`;
  }

  async unpinIfUnused(exampleId: string, sha256: string): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      await this.lockExample(tx, exampleId);
      if ((await tx`SELECT 1 FROM example_files WHERE example_id = ${exampleId} AND sha256 = ${sha256} LIMIT 1`).length) return false;
      await tx`DELETE FROM blob_refs WHERE owner = ${examplePin(exampleId)} AND sha256 = ${sha256}`;
      return true;
    });
  }
}
