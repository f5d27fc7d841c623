// `automation-server audit verify|export` and retention (issue 37), through the source entry on a data
// dir (and its PostgreSQL database in the PostgreSQL pass): verify passes on an intact trail and names
// the first entry of a chain whose row was edited, deleted, or swapped with another (the database
// edited directly: bun:sqlite, or SQL on PostgreSQL); retention prunes the oldest entries, keeps the
// anchor and verify still passes; export writes NDJSON within the asked times.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { harness, type Harness } from "../app/harness";
import { auditOf, pruneAudit } from "../../../src/automation/audit/service";
import { atFileEnd } from "../../support/file-end";

const ENTRY = join(import.meta.dir, "../../../bin/automation-server.ts");

async function trail(entries = 6): Promise<{ h: Harness; dir: string; tenant: { id: string; slug: string; key: string }; cli(...args: string[]): { code: number; out: string; err: string }; sql(statement: string): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "audit-cli-"));
  atFileEnd(() => rmSync(dir, { recursive: true, force: true }));
  const h = await harness({ dataDir: dir });
  const tenant = await h.tenant("acme");
  for (let i = 0; i < entries; i++) {
    await h.req("POST", "/v1/members/invitations", { key: tenant.key, body: { email: `p${i}@example.com`, role: "viewer" } });
    h.clock.advance(60_000);
  }
  await auditOf(h.ctx).drain();
  const db = h.ctx.config.db;
  return {
    h,
    dir,
    tenant,
    cli(...args) {
      const p = Bun.spawnSync(["bun", ENTRY, ...args, "--data-dir", dir, ...(db ? ["--db", db] : [])], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
    },
    async sql(statement) {
      if (h.ctx.db.pg) {
        await h.ctx.db.pg.unsafe(statement);
        return;
      }
      // Another connection on the file, as someone with the database at hand would edit it.
      const edit = new Database(join(dir, "automation.db"));
      edit.run(statement);
      edit.close();
    },
  };
}

const ids = async (h: Harness, tenantId: string) => (await h.ctx.storage.audit.range({ tenantKey: tenantId }, 0, 100)).map((r) => ({ id: r.id, seq: r.seq }));

describe("audit CLI", () => {
  test("verify: intact, then an edited row is named", async () => {
    const t = await trail();
    const ok = t.cli("audit", "verify");
    expect(ok.err).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/audit trail intact: 6 entries in 1 chain verified/);
    expect(t.cli("audit", "verify", "--tenant", "acme").code).toBe(0);

    const rows = await ids(t.h, t.tenant.id);
    await t.sql(`UPDATE audit_entries SET actor_name = 'someone else' WHERE id = '${rows[2]!.id}'`);
    const bad = t.cli("audit", "verify");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(`entry ${rows[2]!.id} at position 3: changed`);
  });

  test("verify: a deleted row is named by the entry after the gap", async () => {
    const t = await trail();
    const rows = await ids(t.h, t.tenant.id);
    await t.sql(`DELETE FROM audit_entries WHERE id = '${rows[1]!.id}'`);
    const bad = t.cli("audit", "verify", "--tenant", "acme");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(`entry ${rows[2]!.id} at position 3: removed: the entry at position 2 is missing`);
  });

  test("verify: the last rows deleted show against the chain's head", async () => {
    const t = await trail();
    const rows = await ids(t.h, t.tenant.id);
    await t.sql(`DELETE FROM audit_entries WHERE id IN ('${rows[4]!.id}', '${rows[5]!.id}')`);
    const bad = t.cli("audit", "verify");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("at position 5: removed: the chain's head is at position 6, its last 2 entries are missing");
  });

  test("verify: two swapped rows are named as reordered", async () => {
    const t = await trail();
    const rows = await ids(t.h, t.tenant.id);
    const [a, b] = [rows[2]!, rows[3]!];
    await t.sql(`UPDATE audit_entries SET seq = -1 WHERE id = '${a.id}'`);
    await t.sql(`UPDATE audit_entries SET seq = ${a.seq} WHERE id = '${b.id}'`);
    await t.sql(`UPDATE audit_entries SET seq = ${b.seq} WHERE id = '${a.id}'`);
    const bad = t.cli("audit", "verify");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(`entry ${b.id} at position 3: reordered: it follows entry ${a.id}, which is at position 4`);
  });

  test("retention prunes the oldest entries, keeps the anchor, and verify still passes; export writes NDJSON", async () => {
    const t = await trail(6);
    const start = (await ids(t.h, t.tenant.id))[0]!;
    // Entries 1-6 are a minute apart from 09:00; three days later, two more.
    t.h.clock.advance(3 * 86_400_000);
    for (let i = 0; i < 2; i++) await t.h.req("POST", "/v1/members/invitations", { key: t.tenant.key, body: { email: `late${i}@example.com`, role: "viewer" } });
    await auditOf(t.h.ctx).drain();
    const pruned = await pruneAudit(t.h.ctx.storage.audit, t.h.clock.now(), 86_400_000);
    expect(pruned).toBe(6);
    const left = await ids(t.h, t.tenant.id);
    expect(left.map((r) => r.seq)).toEqual([7, 8]);
    expect(left.some((r) => r.id === start.id)).toBe(false);
    expect(await t.h.ctx.storage.audit.anchor(t.tenant.id)).toMatchObject({ seq: 6 });
    const ok = t.cli("audit", "verify");
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("2 entries");
    // Removing the first entry after the anchor is still seen.
    await t.sql(`DELETE FROM audit_entries WHERE seq = 7`);
    expect(t.cli("audit", "verify").err).toContain(`at position 8: removed: the entry at position 7 is missing`);

    const out = t.cli("audit", "export", "--tenant", "acme", "--since", "2026-11-01");
    expect(out.code).toBe(0);
    const lines = out.out.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((e) => e.position)).toEqual([8]);
    expect(lines[0]).toMatchObject({ action: "members.invitations.create", actor: { type: "key" }, outcome: "success", tenantId: t.tenant.id });
    expect(t.cli("audit", "export", "--tenant", "acme", "--since", "2026-11-01", "--until", "2026-11-22T10:00:00Z").out).toBe("");
    expect(t.cli("audit", "export", "--tenant", "acme").code).toBe(2);
    expect(t.cli("audit", "export", "--tenant", "nope", "--since", "2026-01-01").err).toContain('no tenant "nope"');
  });

  test("audit --help lists export and verify", () => {
    const p = Bun.spawnSync(["bun", ENTRY, "audit", "--help"], { stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(0);
    expect(p.stdout.toString()).toContain("audit export --since");
    expect(p.stdout.toString()).toContain("audit verify");
    expect(Bun.spawnSync(["bun", ENTRY, "--help"], { stdout: "pipe" }).stdout.toString()).toContain("audit verify");
  });
});
