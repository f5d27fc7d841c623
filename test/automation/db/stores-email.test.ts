// The e-mail store contract (servers, delivery claims), run on both backends with the same
// assertions: same rows, same order. And the invariants decided inside the database, raced: a live
// name is taken once, a step execution's delivery is claimed once (a send goes out exactly once).
// SQLite: an in-memory database; PostgreSQL: a fresh database on the test server.
import { afterAll, describe, expect, test } from "bun:test";
import type { Delivery, EmailServerRow } from "../../../src/automation/db/tables/email";
import { pgBackend, sqliteBackend, type Backend } from "./backends";

const opened: Backend[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
});

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

async function open(kind: "sqlite" | "postgres"): Promise<Backend> {
  const b = kind === "sqlite" ? await sqliteBackend() : await pgBackend();
  opened.push(b);
  for (const t of ["t1", "t2"]) await b.exec("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)", [t, t, t, at(0)]);
  return b;
}

async function onBoth<T>(body: (b: Backend) => Promise<T>): Promise<{ sqlite: T; postgres: T }> {
  return { sqlite: await body(await open("sqlite")), postgres: await body(await open("postgres")) };
}

const server = (id: string, name: string, o: Partial<EmailServerRow> = {}): EmailServerRow => ({
  id,
  tenantId: "t1",
  name,
  enabled: 1,
  transport: "smtp",
  fromEmail: "ops@example.com",
  fromName: null,
  host: "127.0.0.1",
  port: 2525,
  security: "starttls",
  username: "u",
  caPem: null,
  secret: "sealed:abc",
  createdAt: at(1),
  updatedAt: at(1),
  deletedAt: null,
  ...o,
});

const claim = (runId: string, stepPath = "send"): Delivery => ({ runId, stepPath, tenantId: "t1", serverId: "ems_1", state: "sending", result: null, createdAt: at(5) });

describe("e-mail store contract on SQLite and PostgreSQL", () => {
  test("servers: live names once, by id or name, newest first, PATCH and soft delete; deliveries claimed, sent, released", async () => {
    const out = await onBoth(async (b) => {
      const em = b.storage.email;
      const inserts = [
        await em.insertServer(server("ems_1", "main")),
        await em.insertServer(server("ems_2", "backup", { createdAt: at(2), enabled: 0, transport: "resend", host: null, port: null, security: null, username: null })),
        await em.insertServer(server("ems_3", "main", { createdAt: at(3) })), // the name is taken
        await em.insertServer(server("ems_4", "main", { tenantId: "t2" })), // another tenant's
        // A name that is the id of another server: a lookup by that ref prefers the id.
        await em.insertServer(server("ems_5", "ems_1", { createdAt: at(4) })),
      ];
      const page = await em.listServers("t1", 2, 0);
      const rest = await em.listServers("t1", 2, 2);
      const byName = await em.serverByRef("t1", "backup");
      const byId = await em.serverByRef("t1", "ems_1");
      const taken = [await em.nameTaken("t1", "main"), await em.nameTaken("t1", "main", "ems_1"), await em.nameTaken("t1", "nope")];
      const renamedToTaken = await em.updateServer("t1", "ems_2", { name: "main", updatedAt: at(6) });
      const patched = await em.updateServer("t1", "ems_2", { enabled: 1, fromName: "Ops", updatedAt: at(7) });
      const otherTenant = await em.updateServer("t2", "ems_2", { fromName: "x" });
      await em.updateServer("t1", "ems_1", { deletedAt: at(8), updatedAt: at(8) });
      const deleted = [await em.server("t1", "ems_1"), await em.serverByRef("t1", "main")];
      const reused = await em.insertServer(server("ems_6", "main", { createdAt: at(9) }));

      const firstClaim = await em.claimDelivery(claim("run_1"));
      const secondClaim = await em.claimDelivery(claim("run_1"));
      const sending = await em.delivery("run_1", "send");
      await em.markSent("run_1", "send", JSON.stringify({ messageId: "m1", to: ["a@b.c"] }));
      const sent = await em.delivery("run_1", "send");
      await em.claimDelivery(claim("run_2"));
      await em.releaseDelivery("run_2", "send");
      const released = await em.delivery("run_2", "send");
      const reclaimed = await em.claimDelivery(claim("run_2"));
      return { inserts, page, rest, byName, byId, taken, renamedToTaken, patched, otherTenant, deleted, reused, firstClaim, secondClaim, sending, sent: { ...sent!, result: JSON.parse(sent!.result!) }, released, reclaimed };
    });
    expect(out.postgres).toEqual(out.sqlite);
    const s = out.sqlite;
    expect(s.inserts).toEqual(["ok", "ok", "name_taken", "ok", "ok"]);
    expect(s.page.total).toBe(3);
    expect(s.page.rows.map((r) => r.id)).toEqual(["ems_5", "ems_2"]);
    expect(s.rest.rows.map((r) => r.id)).toEqual(["ems_1"]);
    expect(s.page.rows[1]).toEqual(server("ems_2", "backup", { createdAt: at(2), enabled: 0, transport: "resend", host: null, port: null, security: null, username: null }));
    expect(s.byName?.id).toBe("ems_2");
    expect(s.byId?.id).toBe("ems_1");
    expect(s.taken).toEqual([true, false, false]);
    expect(s.renamedToTaken).toBe("name_taken");
    expect(s.patched).toMatchObject({ id: "ems_2", name: "backup", enabled: 1, fromName: "Ops", updatedAt: at(7) });
    expect(s.otherTenant).toBeUndefined();
    expect(s.deleted).toEqual([undefined, undefined]);
    expect(s.reused).toBe("ok");
    expect([s.firstClaim, s.secondClaim, s.reclaimed]).toEqual([true, false, true]);
    expect(s.sending).toEqual(claim("run_1"));
    expect(s.sent).toEqual({ ...claim("run_1"), state: "sent", result: { messageId: "m1", to: ["a@b.c"] } });
    expect(s.released).toBeUndefined();
  }, 60_000);

  for (const kind of ["sqlite", "postgres"] as const) {
    test(`${kind}: 12 racing claimers of one delivery: exactly one sends`, async () => {
      const b = await open(kind);
      const wins = await Promise.all(Array.from({ length: 12 }, (_, i) => b.storage.email.claimDelivery({ ...claim("run_race"), serverId: `ems_${i}` })));
      expect(wins.filter(Boolean)).toHaveLength(1);
      const winner = wins.indexOf(true);
      expect((await b.storage.email.delivery("run_race", "send"))?.serverId).toBe(`ems_${winner}`);
    }, 60_000);

    test(`${kind}: 8 racing creates of one name: one server, the others name_taken`, async () => {
      const b = await open(kind);
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => b.storage.email.insertServer(server(`ems_r${i}`, "same"))));
      expect(answers.filter((a) => a === "ok")).toHaveLength(1);
      expect((await b.storage.email.listServers("t1", 10, 0)).total).toBe(1);
    }, 60_000);
  }
});
