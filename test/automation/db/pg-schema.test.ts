// The PostgreSQL schema (db/automation/pg/) against the SQLite one (db/automation/*.sql): every table,
// column and index of SQLite exists on PostgreSQL with a type that holds the same values, so a SQLite
// migration added without its PostgreSQL counterpart fails here. Plus the one trigger, which must
// behave the same on both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migrations } from "../../../db/automation/index";
import { openSqlite } from "../../../src/kernel/db";
import { migrateAutomationPg } from "../../../src/automation/db/pg-migrate";
import { automationPgMigrations } from "../../../db/automation/pg/index";
import { freshPostgresDb } from "../../support/postgres";

let url = "";
let pg: SQL;
const sqlite = openSqlite(":memory:", migrations);

beforeAll(async () => {
  url = await freshPostgresDb();
  expect(await migrateAutomationPg(url)).toEqual(automationPgMigrations.map((m) => m.name));
  pg = new SQL({ url, max: 2 });
});
afterAll(async () => {
  await pg?.close();
  sqlite.close();
});

/** Which PostgreSQL types may hold a SQLite column, by the SQLite declared type and the column's role. */
function compatible(column: string, sqliteType: string, pgType: string): boolean {
  const t = sqliteType.toLowerCase();
  if (t === "real") return pgType === "double precision";
  if (t === "integer") return ["integer", "bigint", "boolean"].includes(pgType);
  if (t !== "text") return false;
  if (/_at$|^at$|^timestamp$/.test(column)) return pgType === "timestamp with time zone";
  return ["text", "json", "jsonb"].includes(pgType);
}

describe("PostgreSQL schema mirrors SQLite", () => {
  test("every SQLite table and column exists with a compatible type, and nothing extra", async () => {
    const tables = sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name")
      .all()
      .map((r) => r.name);
    expect(tables.length).toBeGreaterThan(25);
    const pgCols = (await pg`SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'automation_migrations'`) as { table_name: string; column_name: string; data_type: string }[];
    const pgTables = [...new Set(pgCols.map((c) => c.table_name))].sort();
    expect(pgTables).toEqual(tables);
    const problems: string[] = [];
    for (const table of tables) {
      const cols = sqlite.query<{ name: string; type: string }, []>(`PRAGMA table_info(${table})`).all();
      const onPg = pgCols.filter((c) => c.table_name === table);
      expect(onPg.map((c) => c.column_name).sort()).toEqual(cols.map((c) => c.name).sort());
      for (const c of cols) {
        const p = onPg.find((x) => x.column_name === c.name)!;
        if (!compatible(c.name, c.type, p.data_type)) problems.push(`${table}.${c.name}: SQLite ${c.type}, PostgreSQL ${p.data_type}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("every text column compares bytewise, as SQLite does, so both backends sort ids and names alike", async () => {
    const loose = (await pg`SELECT table_name || '.' || column_name AS c FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type = 'text' AND table_name <> 'automation_migrations' AND collation_name IS DISTINCT FROM 'C'`) as { c: string }[];
    expect(loose.map((r) => r.c)).toEqual([]);
    const ids = ["run_b", "run_B", "run_a", "Run_z", "run-1", "run_\u00e9", "run_1"];
    const pgOrder = ((await pg`SELECT id FROM unnest(${pg.array(ids, "text")}::text[] COLLATE "C") AS x(id) ORDER BY id`) as { id: string }[]).map((r) => r.id);
    sqlite.exec("CREATE TEMP TABLE ids (id text)");
    for (const id of ids) sqlite.query("INSERT INTO ids VALUES (?)").run(id);
    const sqliteOrder = sqlite.query<{ id: string }, []>("SELECT id FROM ids ORDER BY id").all().map((r) => r.id);
    expect(pgOrder).toEqual(sqliteOrder);
  });

  test("every SQLite index exists on PostgreSQL under the same name and uniqueness", async () => {
    const indexes = sqlite
      .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
      .all();
    const onPg = (await pg`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'`) as { indexname: string; indexdef: string }[];
    for (const i of indexes) {
      const p = onPg.find((x) => x.indexname === i.name);
      expect(p ? i.name : `missing ${i.name}`).toBe(i.name);
      expect(p!.indexdef.startsWith("CREATE UNIQUE")).toBe(i.sql.startsWith("CREATE UNIQUE"));
    }
  });

  test("ending a run cancels its pending human-review task, on PostgreSQL as on SQLite", async () => {
    const now = "2026-11-25T10:00:00.000Z";
    const done = "2026-11-25T10:05:00.000Z";
    const seed = async (run: string) => {
      await pg`INSERT INTO runs (id, tenant_id, type, automation_id, definition, status, input, sample_rank, created_at)
        VALUES (${run}, 't', 'workflow', 'a', 'x', 'waiting', '{}', 0.5, ${now})`;
      await pg`INSERT INTO human_review_tasks (id, tenant_id, run_id, step_path, automation_id, source_label, status, required_count, data, files, created_at, updated_at)
        VALUES (${`task_${run}`}, 't', ${run}, 'review', 'a', 'x', 'pending', 1, '{}', '[]', ${now}, ${now})`;
    };
    await seed("run_a");
    await seed("run_b");
    await pg`UPDATE runs SET status = 'cancelled', completed_at = ${done} WHERE id = 'run_a'`;
    await pg`UPDATE runs SET metadata = '{"x": 1}' WHERE id = 'run_b'`;
    const rows = (await pg`SELECT id, status, version, updated_at FROM human_review_tasks ORDER BY id`) as { id: string; status: string; version: number; updated_at: Date }[];
    expect(rows.map((r) => [r.id, r.status, r.version])).toEqual([
      ["task_run_a", "cancelled", 2],
      ["task_run_b", "pending", 1],
    ]);
    expect(rows[0].updated_at.toISOString()).toBe(done);
  });

  test("JSON a user gave keeps its key order; times keep their milliseconds", async () => {
    const input = '{"zeta": 1, "alpha": {"b": 2, "a": 1}}';
    const at = "2026-11-25T10:00:00.123Z";
    await pg`INSERT INTO runs (id, tenant_id, type, automation_id, definition, status, input, sample_rank, created_at)
      VALUES ('run_json', 't', 'workflow', 'a', 'x', 'pending', CAST(${input} AS text)::json, 0.1, ${at})`;
    const [row] = (await pg`SELECT input::text AS input, created_at FROM runs WHERE id = 'run_json'`) as { input: string; created_at: Date }[];
    expect(row.input).toBe(input);
    expect(row.created_at.toISOString()).toBe(at);
  });
});
