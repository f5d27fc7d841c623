// Migration 0420 (issue 37): a trail written one row per entry, as before the trail was kept in blocks,
// reads the same after the migration on both backends: every entry with its fields, verify passes
// (the hashes cover `at` exactly as it was written), and appends continue the chain.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migrations } from "../../../db/automation/index";
import { automationPgMigrations } from "../../../db/automation/pg/index";
import { verifyChain } from "../../../src/automation/audit/service";
import { entryHash, GENESIS, type AuditInput } from "../../../src/automation/audit/store";
import { pgStorage } from "../../../src/automation/db/pg/index";
import { sqliteStorage } from "../../../src/automation/db/sqlite/index";
import { openSqlite } from "../../../src/kernel/db";
import { migratePg } from "../../../src/kernel/pg";
import { freshPostgresDb } from "../../support/postgres";

const before = <T extends { name: string }>(series: T[]) => series.slice(0, series.findIndex((m) => m.name === "0420_audit_blocks"));

/** Ten entries of one chain as the server wrote them, with a quote, a control character and nulls among them. */
function oldRows(tenant: string): { e: AuditInput; seq: number; prev: string; hash: string }[] {
  let prev = GENESIS;
  return Array.from({ length: 10 }, (_, i) => {
    const e: AuditInput = {
      id: `aud_old${i + 1}`,
      at: new Date(Date.UTC(2026, 5, 1, 12, 0, i, 7)).toISOString(),
      tenantKey: tenant,
      actorType: i % 2 ? "user" : "key",
      actorId: i === 3 ? null : `usr_${i}`,
      actorName: i === 4 ? 'say "hi"\u001f' : "ci",
      action: "runs.create",
      resourceType: i === 5 ? null : "runs",
      resourceId: `exec_${i}`,
      requestId: null,
      address: "10.0.0.1",
      outcome: "success",
      status: 201,
    };
    const hash = entryHash(e, prev);
    const row = { e, seq: i + 1, prev, hash };
    prev = hash;
    return row;
  });
}

const args = (r: ReturnType<typeof oldRows>[number]) => [
  r.e.tenantKey, r.seq, r.e.id, r.e.at, r.e.actorType, r.e.actorId, r.e.actorName, r.e.action, r.e.resourceType, r.e.resourceId, r.e.requestId, r.e.address, r.e.outcome, r.e.status, r.prev, r.hash,
];
const INSERT = `INSERT INTO audit_entries (tenant_key, seq, id, at, actor_type, actor_id, actor_name, action, resource_type, resource_id, request_id, address, outcome, status, prev_hash, hash)`;

async function check(storage: ReturnType<typeof sqliteStorage>, rows: ReturnType<typeof oldRows>) {
  const tenant = rows[0]!.e.tenantKey;
  expect(await verifyChain(storage.audit, tenant)).toMatchObject({ ok: true, entries: 10 });
  const read = await storage.audit.range({ tenantKey: tenant }, 0, 100);
  expect(read).toEqual(rows.map((r) => ({ ...r.e, seq: r.seq, prevHash: r.prev, hash: r.hash })));
  expect((await storage.audit.list({ tenantKey: tenant, actorId: "usr_2" }, 10)).map((r) => r.id)).toEqual(["aud_old3"]);
  await storage.audit.append([{ ...rows[0]!.e, id: "aud_new", at: "2026-06-02T00:00:00.000Z" }]);
  expect(await verifyChain(storage.audit, tenant)).toMatchObject({ ok: true, entries: 11 });
}

describe("audit migration to blocks", () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of closers) await c();
  });

  test("SQLite", async () => {
    const file = `${process.env.TMPDIR ?? "/tmp"}/audit-migrate-${process.pid}.db`;
    const old = openSqlite(file, before(migrations));
    const rows = oldRows("ten_a");
    for (const r of rows) old.query(`${INSERT} VALUES (${Array(16).fill("?").join(", ")})`).run(...(args(r) as never[]));
    old.exec(`INSERT INTO audit_chains (tenant_key, seq, hash) VALUES ('ten_a', 10, '${rows[9]!.hash}')`);
    old.close();
    const db = openSqlite(file, migrations);
    closers.push(async () => {
      db.close();
      for (const f of [file, `${file}-wal`, `${file}-shm`]) await Bun.file(f).delete().catch(() => {});
    });
    expect((db.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'audit_entries'").get() as { n: number }).n).toBe(0);
    await check(sqliteStorage(db), rows);
  });

  test("PostgreSQL", async () => {
    const url = await freshPostgresDb();
    const pg = new SQL({ url, max: 4 });
    const series = { lock: 7_242_015_021, table: "automation_migrations" };
    await migratePg(pg, { ...series, migrations: before(automationPgMigrations) });
    const rows = oldRows("ten_b");
    for (const r of rows) await pg.unsafe(`${INSERT} VALUES (${Array.from({ length: 16 }, (_, i) => `$${i + 1}`).join(", ")})`, args(r));
    await pg.unsafe(`INSERT INTO audit_chains (tenant_key, seq, hash) VALUES ('ten_b', 10, $1)`, [rows[9]!.hash]);
    await migratePg(pg, { ...series, migrations: automationPgMigrations });
    // A block's text is compressed with lz4 where the server has it (else PostgreSQL's default, pglz).
    const lz4 = await pg
      .unsafe("SET default_toast_compression = lz4")
      .then(() => true)
      .catch(() => false);
    const [{ c }] = (await pg.unsafe("SELECT attcompression::text AS c FROM pg_attribute WHERE attrelid = 'audit_blocks'::regclass AND attname = 'entries'")) as { c: string }[];
    expect(c).toBe(lz4 ? "l" : "");
    const storage = pgStorage(pg);
    closers.push(async () => {
      await storage.notifications.close();
      await pg.close();
    });
    await check(storage, rows);
  });
});
