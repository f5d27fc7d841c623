// `automation-server audit verify|export` and retention (issue 37), through the source entry on a data
// dir (and its PostgreSQL database in the PostgreSQL pass): verify passes on an intact trail and names
// the first entry of a chain that was edited, deleted, or swapped with another (the database edited
// directly: the entries packed in a block's JSON rewritten through bun:sqlite, or SQL on PostgreSQL);
// retention prunes the oldest entries, keeps the
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

/** A packed entry as a block stores it (src/automation/db/audit-blocks.ts): `[seq, id, at, ..., prevHash, hash]`. */
type Packed = [number, string, ...unknown[]];

async function trail(entries = 6): Promise<{
  h: Harness;
  dir: string;
  tenant: { id: string; slug: string; key: string };
  cli(...args: string[]): { code: number; out: string; err: string };
  tamper(edit: (e: Packed) => Packed | null): Promise<void>;
}> {
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
  // Someone with the database at hand: every block of the tenant read, its entries edited (null drops
  // one) and the block written back in place, its columns untouched.
  const sql = async <T>(statement: string, args: unknown[] = []): Promise<T[]> => {
    if (h.ctx.db.pg) return (await h.ctx.db.pg.unsafe(statement.replace(/\?(\d)/g, "$$$1"), args)) as T[];
    const edit = new Database(join(dir, "automation.db"));
    try {
      return edit.query(statement).all(...(args as string[])) as T[];
    } finally {
      edit.close();
    }
  };
  return {
    h,
    dir,
    tenant,
    cli(...args) {
      const p = Bun.spawnSync(["bun", ENTRY, ...args, "--data-dir", dir, ...(db ? ["--db", db] : [])], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
    },
    async tamper(edit) {
      const blocks = await sql<{ first_seq: number | bigint; entries: string }>("SELECT first_seq, entries FROM audit_blocks WHERE tenant_key = ?1", [tenant.id]);
      for (const b of blocks) {
        const before = b.entries;
        const after = JSON.stringify((JSON.parse(before) as Packed[]).map(edit).filter((e) => e !== null));
        if (after !== before) await sql("UPDATE audit_blocks SET entries = ?1 WHERE tenant_key = ?2 AND first_seq = ?3", [after, tenant.id, Number(b.first_seq)]);
      }
    },
  };
}

const ids = async (h: Harness, tenantId: string) => (await h.ctx.storage.audit.range({ tenantKey: tenantId }, 0, 100)).map((r) => ({ id: r.id, seq: r.seq }));

/** Swaps the positions of entries 3 and 4; verify names the one now at 3 as following the one at 4. */
async function swappedIsReordered(t: Awaited<ReturnType<typeof trail>>): Promise<void> {
  const rows = await ids(t.h, t.tenant.id);
  const [a, b] = [rows[2]!, rows[3]!];
  await t.tamper((e) => (e[1] === a.id ? (e.with(0, b.seq) as Packed) : e[1] === b.id ? (e.with(0, a.seq) as Packed) : e));
  const bad = t.cli("audit", "verify");
  expect(bad.code).toBe(1);
  expect(bad.err).toContain(`entry ${b.id} at position 3: reordered: it follows entry ${a.id}, which is at position 4`);
}

describe("audit CLI", () => {
  test("verify: intact, then an edited row is named", async () => {
    const t = await trail();
    const ok = t.cli("audit", "verify");
    expect(ok.err).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/audit trail intact: 6 entries in 1 chain verified/);
    expect(t.cli("audit", "verify", "--tenant", "acme").code).toBe(0);

    const rows = await ids(t.h, t.tenant.id);
    await t.tamper((e) => (e[1] === rows[2]!.id ? (e.with(5, "someone else") as Packed) : e));
    const bad = t.cli("audit", "verify");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(`entry ${rows[2]!.id} at position 3: changed`);
  });

  test("verify: a deleted row is named by the entry after the gap", async () => {
    const t = await trail();
    const rows = await ids(t.h, t.tenant.id);
    await t.tamper((e) => (e[1] === rows[1]!.id ? null : e));
    const bad = t.cli("audit", "verify", "--tenant", "acme");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(`entry ${rows[2]!.id} at position 3: removed: the entry at position 2 is missing`);
  });

  test("verify: the last rows deleted show against the chain's head", async () => {
    const t = await trail();
    const rows = await ids(t.h, t.tenant.id);
    await t.tamper((e) => (e[1] === rows[4]!.id || e[1] === rows[5]!.id ? null : e));
    const bad = t.cli("audit", "verify");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("at position 5: removed: the chain's head is at position 6, its last 2 entries are missing");
  });

  test("verify: two swapped rows are named as reordered", async () => {
    const t = await trail();
    await swappedIsReordered(t);
  });

  test("verify: two rows swapped across two blocks are named as reordered too", async () => {
    // Two batches, so two blocks: positions 1-3, then 4-6 (each drain writes what was gathered).
    const t = await trail(3);
    for (let i = 0; i < 3; i++) await t.h.req("POST", "/v1/members/invitations", { key: t.tenant.key, body: { email: `q${i}@example.com`, role: "viewer" } });
    await auditOf(t.h.ctx).drain();
    await swappedIsReordered(t);
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
    await t.tamper((e) => (e[0] === 7 ? null : e));
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
