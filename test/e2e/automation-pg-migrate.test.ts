// `automation-server migrate --db postgres://…` on the compiled binary: the PostgreSQL schema applied
// once even when several instances migrate at the same moment (advisory lock), idempotent afterwards,
// AUTOMATION_DB as the environment form, and clear one-line failures.
import { beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { automationPgMigrations } from "../../db/automation/pg/index";
import { freshPostgresDb } from "../support/postgres";
import { ensureBuilt, refusedPort } from "./support";

let bin = "";
beforeAll(async () => {
  bin = await ensureBuilt("automation-server");
});

async function migrate(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([bin, "migrate", ...args], { env: { ...process.env, AUTOMATION_DB: "", ...env }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

describe("automation-server migrate --db", () => {
  test("four instances migrating one empty database together apply the schema once", async () => {
    const url = await freshPostgresDb();
    const runs = await Promise.all([1, 2, 3, 4].map(() => migrate(["--db", url, "--json"])));
    for (const r of runs) expect(r.code).toBe(0);
    const applied = runs.map((r) => (JSON.parse(r.out) as { applied: string[] }).applied);
    const all = automationPgMigrations.map((m) => m.name);
    expect(applied.filter((a) => a.length > 0)).toEqual([all]);
    expect(applied.filter((a) => a.length === 0)).toHaveLength(3);
    const db = new SQL({ url, max: 1 });
    try {
      expect(((await db`SELECT name FROM automation_migrations ORDER BY name`) as { name: string }[]).map((r) => r.name)).toEqual(all);
      const [{ n }] = (await db`SELECT COUNT(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`) as { n: number }[];
      expect(n).toBeGreaterThan(25);
    } finally {
      await db.close();
    }
    const again = await migrate(["--db", url]);
    expect(again).toMatchObject({ code: 0, out: "database is up to date\n" });
  }, 120_000);

  test("AUTOMATION_DB is the environment form of --db", async () => {
    const url = await freshPostgresDb();
    const r = await migrate([], { AUTOMATION_DB: url });
    expect(r.code).toBe(0);
    expect(r.out).toBe(`applied ${automationPgMigrations.length} migration(s): ${automationPgMigrations.map((m) => m.name).join(", ")}\n`);
  }, 60_000);

  test("an unreachable server is one line naming the URL without its password, exit 1", async () => {
    const port = refusedPort();
    const r = await migrate(["--db", `postgres://auto:s3cret@127.0.0.1:${port}/auto`]);
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toContain(`postgres://auto:***@127.0.0.1:${port}/auto`);
    expect(r.err).not.toContain("s3cret");
  }, 60_000);

  test("--db that is not a postgres:// URL is a usage error (exit 2) pointing at --data-dir", async () => {
    const r = await migrate(["--db", "./data/automation.db"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--db must be a postgres:// URL");
    expect(r.err).toContain("--data-dir");
  });
});
