// `automation-server migrate --from <data-dir> --to postgres://…` on the compiled binary: a demo
// deployment with 300 runs (finished ones, one waiting on a human-review task, a file) is copied into
// an empty PostgreSQL database; every row of every table arrives with the same values (times, flags,
// JSON text compared after the type mapping of docs/automation/postgres.md); a second copy into the
// now non-empty database is refused and changes nothing.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { freshPostgresDb } from "../support/postgres";
import { demoServer, type DemoServer } from "./automation-demo";

let demo: DemoServer;
let bin = "";
type Json = Record<string, unknown>;

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-pg-copy-", workers: 2, sqlite: true });
  bin = `${demo.dir}/automation-server`;
  const server = await demo.boot();
  const gate = `
name: gate
inputs: [{name: n, type: integer, required: true}]
steps:
  - name: check
    type: control.human_review
    with: {data: {n: "{{ input.n }}"}, selection: {mode: explicit}}
output: {n: "{{ steps.check.output.n }}"}
`;
  expect((await demo.api("POST", "/v1/automations", { yaml: gate })).status).toBe(201);
  expect((await demo.api("POST", "/v1/runs", { target: "workflows.gate", input: { n: 7 } })).status).toBe(201);
  for (let i = 0; i < 300; i += 50) {
    const rs = await Promise.all(
      Array.from({ length: 50 }, (_, j) => demo.api("POST", "/v1/runs", { target: "workflows.hello", input: { name: `p${i + j} \u00e9 "q"` }, metadata: { batch: i, z: 1, a: 2 } })),
    );
    for (const r of rs) expect(r.status).toBe(201);
  }
  const form = new FormData();
  form.append("file", new Blob(["%PDF-1.4 tiny"], { type: "application/pdf" }), "tiny.pdf");
  expect((await fetch(`${demo.base}/v1/files`, { method: "POST", headers: { authorization: "Bearer eak_demo_0123456789abcdefghijklmnopqrstuv" }, body: form })).status).toBeLessThan(300);
  // Wait until the hello runs finished and the gate run waits on its task, then stop the server.
  for (let t = 0; t < 600; t++) {
    const db = new Database(demo.dbPath, { readonly: true });
    const open = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs WHERE status IN ('pending', 'running')").get()!.n;
    const tasks = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM human_review_tasks WHERE status = 'pending'").get()!.n;
    db.close();
    if (open === 0 && tasks === 1) break;
    await Bun.sleep(100);
  }
  expect(await server.kill("SIGTERM")).toBe(0);
}, 180_000);

afterAll(async () => {
  await demo?.close();
});

async function migrate(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([bin, "migrate", ...args], { env: { ...process.env, AUTOMATION_DB: "" }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

/** A PostgreSQL value as SQLite holds it, so rows of both compare with toEqual. */
function asSqlite(type: string, v: unknown): unknown {
  if (v === null) return null;
  if (type === "boolean") return v ? 1 : 0;
  if (type === "timestamp with time zone") return (v as Date).toISOString();
  if (type === "bigint") return Number(v);
  return v;
}

describe("migrate --from DATA_DIR --to postgres://", () => {
  test("copies every row of every table with the same values; a second copy is refused", async () => {
    const url = await freshPostgresDb();
    const r = await migrate(["--from", `${demo.dir}/data`, "--to", url, "--json"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const copied = (JSON.parse(r.out) as { tables: { table: string; rows: number }[] }).tables;
    const sqlite = new Database(demo.dbPath, { readonly: true });
    const pg = new SQL({ url, max: 2 });
    try {
      const byTable = Object.fromEntries(copied.map((c) => [c.table, c.rows]));
      expect(byTable.runs).toBe(301);
      expect(byTable.human_review_tasks).toBe(1);
      expect(byTable.files).toBeGreaterThanOrEqual(1);
      expect(byTable.run_steps).toBeGreaterThanOrEqual(300);
      // Parents come before children (foreign keys hold while inserting).
      expect(copied.findIndex((c) => c.table === "tenants")).toBeLessThan(copied.findIndex((c) => c.table === "automations"));
      expect(copied.findIndex((c) => c.table === "runs")).toBeLessThan(copied.findIndex((c) => c.table === "run_steps"));
      for (const { table, rows } of copied) {
        const cols = (await pg`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ${table}`) as { column_name: string; data_type: string }[];
        const list = cols.map((c) => (c.data_type === "json" || c.data_type === "jsonb" ? `${c.column_name}::text AS ${c.column_name}` : c.column_name)).join(", ");
        const key = cols.map((c) => c.column_name).sort().join(", ");
        const want = sqlite.query<Json, []>(`SELECT ${key} FROM ${table} ORDER BY ${key}`).all();
        expect(want).toHaveLength(rows);
        const got = ((await pg.unsafe(`SELECT ${list} FROM ${table}`)) as Json[]).map((row) =>
          Object.fromEntries(cols.map((c) => [c.column_name, asSqlite(c.data_type, row[c.column_name])])),
        );
        const json = cols.filter((c) => c.data_type === "jsonb").map((c) => c.column_name);
        // jsonb normalizes spacing and key order: compare those columns as parsed values.
        const norm = (row: Json) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, json.includes(k) && typeof v === "string" ? JSON.parse(v) : v]));
        const sort = (xs: Json[]) => xs.map(norm).sort((a, b) => (JSON.stringify(Object.entries(a).sort()) < JSON.stringify(Object.entries(b).sort()) ? -1 : 1));
        expect({ table, rows: sort(got) }).toEqual({ table, rows: sort(want) });
      }
      // User JSON is byte-identical (json, not jsonb): input keeps its spacing and key order.
      const [one] = (await pg`SELECT id, input::text AS input FROM runs WHERE automation_id IN (SELECT id FROM automations WHERE slug = 'hello') LIMIT 1`) as { id: string; input: string }[];
      expect(one.input).toBe(sqlite.query<{ input: string }, [string]>("SELECT input FROM runs WHERE id = ?").get(one.id)!.input);

      const again = await migrate(["--from", `${demo.dir}/data`, "--to", url]);
      expect(again.code).toBe(1);
      expect(again.err).toContain("not empty");
      const [{ n }] = (await pg`SELECT COUNT(*)::int AS n FROM runs`) as { n: number }[];
      expect(n).toBe(301);
    } finally {
      sqlite.close();
      await pg.close();
    }
  }, 180_000);

  test("without a terminal it prints one line per table and the counts; a missing data dir is one line, exit 1", async () => {
    const url = await freshPostgresDb();
    const r = await migrate(["--from", `${demo.dir}/data`, "--to", url]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("copying runs (301 rows)");
    expect(r.out).toMatch(/\nruns +301\n/);
    expect(r.out).toContain("blobs stay in");
    const missing = await migrate(["--from", `${demo.dir}/nope`, "--to", url]);
    expect(missing.code).toBe(1);
    expect(missing.err.trim().split("\n")).toHaveLength(1);
    expect(missing.err).toContain("no automation database");
    const half = await migrate(["--from", `${demo.dir}/data`]);
    expect(half.code).toBe(2);
  }, 120_000);
});
