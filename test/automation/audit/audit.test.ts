// The audit trail through HTTP (issue 37): state-changing requests by key and by session name the
// right actor; sign-in success, failure and throttling are recorded; GET /v1/audit filters and pages,
// is refused to roles without audit:read and shows only the caller's tenant; chains stay whole under
// concurrent writes.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { harness, json, type Harness } from "../app/harness";
import { atFileEnd } from "../../support/file-end";
import { as, PASSWORD, peopleHarness } from "../people/support";
import { actionOf, auditOf, resourceOf, verifyChain, type AuditEntry } from "../../../src/automation/audit/service";
import { authenticateRequest, settledAuthOf } from "../../../src/automation/tenancy/auth";
import { type AuditInput, NO_TENANT } from "../../../src/automation/audit/store";

const workflow = `
name: audit-one
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
`;

async function entries(h: Awaited<ReturnType<typeof peopleHarness>>["h"], key: string, query = ""): Promise<{ data: AuditEntry[]; nextCursor: string | null; hasMore: boolean }> {
  await auditOf(h.ctx).drain();
  const r = await h.req("GET", `/v1/audit${query}`, { key });
  expect(r.status).toBe(200);
  return (await json(r)) as unknown as { data: AuditEntry[]; nextCursor: string | null; hasMore: boolean };
}

describe("audit trail", () => {
  test("a key's request and a session's request name their actor, action, resource, request id and outcome", async () => {
    const { h, t, person } = await peopleHarness();
    const admin = await person("admin");
    const dev = await person("developer");
    const key = await h.key("acme", ["*"]);
    const keyId = (await json(await h.req("GET", "/v1/auth/check", { key }))).keyId as string;

    expect((await h.req("POST", "/v1/automations", { key, body: { yaml: workflow }, headers: { "x-request-id": "req-make-automation" } })).status).toBe(201);
    const run = await h.req("POST", "/v1/runs", { key, body: { target: "workflows.audit-one", input: { n: 1 } } });
    expect(run.status).toBe(201);
    const runId = (await json(run)).id as string;
    const cancel = await as(h, dev, "POST", `/v1/runs/${runId}/cancel`);
    expect(cancel.status).toBeLessThan(500);
    expect((await as(h, admin, "PUT", `/v1/members/${dev.userId}`, { body: { role: "viewer" } })).status).toBe(200);

    const page = await entries(h, t.key);
    const byAction = (a: string) => page.data.find((e) => e.action === a)!;
    const made = byAction("automations.create");
    expect(made.actor).toEqual({ type: "key", id: keyId, name: null });
    expect(made.requestId).toBe("req-make-automation");
    expect(made.outcome).toBe("success");
    expect(made.tenantId).toBe(t.id);
    const created = byAction("runs.create");
    expect(created.resource).toEqual({ type: "runs", id: runId });
    expect(created.status).toBe(201);
    const cancelled = byAction("runs.cancel");
    expect(cancelled.actor).toEqual({ type: "user", id: dev.userId, name: dev.email });
    expect(cancelled.resource).toEqual({ type: "runs", id: runId });
    const role = byAction("members.update");
    expect(role.actor).toEqual({ type: "user", id: admin.userId, name: admin.email });
    expect(role.resource).toEqual({ type: "members", id: dev.userId });
    // Reads are not recorded.
    expect(page.data.some((e) => e.action.endsWith(".read") || e.action === "audit")).toBe(false);
    // Newest first, positions of one chain.
    const positions = page.data.map((e) => e.position);
    expect(positions).toEqual([...positions].sort((a, b) => b - a));
  });

  test("sign-in: success as the user, failure as the attempted e-mail, throttled; unknown e-mails and bad keys go to the chain without tenant", async () => {
    const { h, t, person } = await peopleHarness();
    const who = await person("viewer");
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: who.email, password: PASSWORD } })).status).toBe(201);
    let refused = 0;
    for (;;) {
      const r = await h.req("POST", "/v1/auth/sessions", { body: { email: who.email, password: "wrong wrong wrong 1" } });
      if (r.status === 429) break;
      expect(r.status).toBe(401);
      refused++;
    }
    expect(refused).toBeGreaterThanOrEqual(9);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: "nobody@example.com", password: "wrong wrong wrong 1" } })).status).toBe(401);
    expect((await h.req("POST", "/v1/runs", { key: "eak_not_a_key_0123456789", body: {} })).status).toBe(401);

    const signIns = (await entries(h, t.key, "?action=auth.sessions.create&limit=100")).data;
    // The person() helper's sign-in and the one above.
    expect(signIns.filter((e) => e.outcome === "success").map((e) => e.actor)).toEqual([1, 2].map(() => ({ type: "user", id: who.userId, name: who.email })));
    const failed = signIns.filter((e) => e.outcome === "failure");
    expect(failed.length).toBe(refused);
    expect(failed.every((e) => e.actor.type === "anonymous" && e.actor.name === who.email && e.status === 401)).toBe(true);
    const throttled = signIns.filter((e) => e.outcome === "throttled");
    expect(throttled.map((e) => [e.status, e.actor.name])).toEqual([[429, who.email]]);

    const none = await h.ctx.storage.audit.list({ tenantKey: NO_TENANT }, 10);
    expect(none.find((e) => e.actorName === "nobody@example.com")).toMatchObject({ actorType: "anonymous", action: "auth.sessions.create", outcome: "failure" });
    expect(none.find((e) => e.action === "runs.create")).toMatchObject({ actorType: "anonymous", actorId: null, outcome: "failure", status: 401 });
  });

  test("filters by actor, action, resource and time; cursor paging; 403 without audit:read; only the caller's tenant", async () => {
    const { h, t, person } = await peopleHarness();
    const other = await h.tenant("other");
    const key = await h.key("acme", ["*"]);
    const keyId = (await json(await h.req("GET", "/v1/auth/check", { key }))).keyId as string;
    const admin = await person("admin");
    for (let i = 0; i < 5; i++) {
      await h.req("POST", "/v1/members/invitations", { key, body: { email: `i${i}@example.com`, role: "viewer" } });
      h.clock.advance(60_000);
    }
    const mid = h.clock.now().toISOString();
    for (let i = 0; i < 3; i++) {
      await as(h, admin, "POST", "/v1/members/invitations", { body: { email: `j${i}@example.com`, role: "viewer" } });
      h.clock.advance(60_000);
    }
    await h.req("POST", "/v1/members/invitations", { key: other.key, body: { email: "elsewhere@example.com", role: "viewer" } });

    expect((await entries(h, t.key, `?actor=${keyId}`)).data.length).toBe(5);
    expect((await entries(h, t.key, `?actor=${admin.userId}&action=members.invitations.create`)).data.length).toBe(3);
    expect((await entries(h, t.key, `?since=${encodeURIComponent(mid)}&action=members.invitations.create`)).data.length).toBe(3);
    expect((await entries(h, t.key, `?until=${encodeURIComponent(mid)}&action=members.invitations.create`)).data.length).toBe(5);
    expect((await entries(h, t.key, `?resource=${admin.userId}`)).data.length).toBe(0);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof entries>> = await entries(h, t.key, `?action=members.invitations.create&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.data.map((e) => e.id));
      expect(page.hasMore).toBe(page.nextCursor !== null);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(8);
    expect(seen.some((id) => id === undefined)).toBe(false);
    // The other tenant's act is not in acme's trail, and is in its own.
    expect((await entries(h, t.key, "?limit=200")).data.some((e) => e.tenantId !== t.id)).toBe(false);
    expect((await entries(h, other.key)).data.map((e) => e.action)).toEqual(["members.invitations.create"]);

    expect((await h.req("GET", "/v1/audit?cursor=nonsense", { key: t.key })).status).toBe(400);
    expect((await h.req("GET", "/v1/audit?since=yesterday", { key: t.key })).status).toBe(400);
    for (const role of ["developer", "reviewer", "viewer"]) {
      const p = await person(role);
      const r = await as(h, p, "GET", "/v1/audit");
      expect([role, r.status]).toEqual([role, 403]);
    }
    expect((await as(h, admin, "GET", "/v1/audit")).status).toBe(200);
    expect((await h.req("GET", "/v1/audit", { key: await h.key("acme", ["runs:*", "members:*"]) })).status).toBe(403);
    expect((await h.req("GET", "/v1/audit", { key: await h.key("acme", ["audit:read"]) })).status).toBe(200);
  });

  test("concurrent writes keep one unforked chain per tenant", async () => {
    const { h, t } = await peopleHarness();
    const other = await h.tenant("other");
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => h.req("POST", "/v1/members/invitations", { key: i % 2 ? t.key : other.key, body: { email: `c${i}@example.com`, role: "viewer" } })),
    );
    await auditOf(h.ctx).drain();
    for (const tenant of [t.id, other.id]) {
      const v = await verifyChain(h.ctx.storage.audit, tenant);
      expect(v).toMatchObject({ ok: true, entries: 30 });
    }
  });

  test("two instances on one database append to one chain without forking it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-two-"));
    atFileEnd(() => rmSync(dir, { recursive: true, force: true }));
    const a = await harness({ dataDir: dir });
    const b = await harness({ dataDir: dir });
    const t = await a.tenant("acme");
    const send = (h: Harness, i: number) => h.req("POST", "/v1/members/invitations", { key: t.key, body: { email: `two${i}@example.com`, role: "viewer" } });
    for (let round = 0; round < 4; round++) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? a : b, round * 20 + i)));
      await Promise.all([auditOf(a.ctx).drain(), auditOf(b.ctx).drain()]);
    }
    expect(await verifyChain(a.ctx.storage.audit, t.id)).toMatchObject({ ok: true, entries: 80 });
    const rows = await b.ctx.storage.audit.range({ tenantKey: t.id }, 0, 200);
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
  });

  test("an instance whose last known head is stale appends after the other instance's entries", async () => {
    // PostgreSQL appends in one statement onto the head this instance last wrote; when another instance
    // moved it since, that statement writes nothing and the batch is appended onto the head as it is.
    const dir = mkdtempSync(join(tmpdir(), "audit-stale-"));
    atFileEnd(() => rmSync(dir, { recursive: true, force: true }));
    const a = await harness({ dataDir: dir });
    const b = await harness({ dataDir: dir });
    const t = await a.tenant("acme");
    let n = 0;
    const entry = (): AuditInput => ({
      id: `aud_stale${++n}`,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      tenantKey: t.id,
      actorType: "key",
      actorId: "key_x",
      actorName: "ci",
      action: "runs.create",
      resourceType: "runs",
      resourceId: `exec_${n}`,
      requestId: `req_${n}`,
      address: null,
      outcome: "success",
      status: 201,
    });
    await a.ctx.storage.audit.append([entry(), entry()]);
    await a.ctx.storage.audit.append([entry()]); // a now knows the head at 3
    await b.ctx.storage.audit.append([entry(), entry()]); // moves it to 5 behind a's back
    await a.ctx.storage.audit.append([entry(), entry(), entry()]);
    await b.ctx.storage.audit.append([entry()]);
    expect(await verifyChain(a.ctx.storage.audit, t.id)).toMatchObject({ ok: true, entries: 9 });
    const rows = await b.ctx.storage.audit.range({ tenantKey: t.id }, 0, 20);
    expect(rows.map((r) => [r.seq, r.id])).toEqual(Array.from({ length: 9 }, (_, i) => [i + 1, `aud_stale${i + 1}`]));
    expect(await a.ctx.storage.audit.head(t.id)).toEqual({ seq: 9, hash: rows.at(-1)!.hash });
  });

  test("kept in blocks, one row per chain per batch: paging, filters, lookups and retention across and inside blocks", async () => {
    const { h, t } = await peopleHarness();
    const other = await h.tenant("other");
    const store = h.ctx.storage.audit;
    // 40 batches of 5 entries for t (and one for the other tenant in every batch), a second apart;
    // actors cycle through three keys, actions through two.
    const start = Date.UTC(2026, 0, 1);
    const made: AuditInput[] = [];
    const entry = (tenantKey: string, n: number): AuditInput => ({
      id: `aud_blk${tenantKey === t.id ? "" : "o"}${n}`,
      at: new Date(start + n * 1000).toISOString(),
      tenantKey,
      actorType: "key",
      actorId: `key_${n % 3}`,
      actorName: "ci",
      action: n % 2 ? "runs.create" : "runs.cancel",
      resourceType: "runs",
      resourceId: `exec_${n}`,
      requestId: `req_${n}`,
      address: "127.0.0.1",
      outcome: "success",
      status: 201,
    });
    for (let batch = 0; batch < 40; batch++) {
      const mine = Array.from({ length: 5 }, (_, i) => entry(t.id, batch * 5 + i + 1));
      made.push(...mine);
      await store.append([...mine.slice(0, 2), entry(other.id, batch + 1), ...mine.slice(2)]);
    }
    const rowsOf = async (statement: string): Promise<Record<string, unknown>[]> =>
      h.ctx.db.pg ? ((await h.ctx.db.pg.unsafe(statement.replace("?", "$1"), [t.id])) as Record<string, unknown>[]) : (h.ctx.db.sqlite!.query(statement).all(t.id) as Record<string, unknown>[]);
    const [{ n: blocks }] = (await rowsOf("SELECT count(*) AS n FROM audit_blocks WHERE tenant_key = ?")) as { n: unknown }[];
    expect(Number(blocks)).toBe(40);

    const seqs = (rs: { seq: number }[]) => rs.map((r) => r.seq);
    const desc = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);
    expect(seqs(await store.list({ tenantKey: t.id }, 50))).toEqual(desc(200, 151));
    expect(seqs(await store.list({ tenantKey: t.id }, 50, 153))).toEqual(desc(152, 103));
    // Paging a few at a time through every block, newest first, as GET /v1/audit's cursor does.
    const all: number[] = [];
    for (let before: number | undefined; ; ) {
      const page = await store.list({ tenantKey: t.id }, 7, before);
      all.push(...seqs(page));
      if (page.length < 7) break;
      before = page.at(-1)!.seq;
    }
    expect(all).toEqual(desc(200, 1));
    // Filters, checked against the entries as made.
    const want = (keep: (e: AuditInput) => boolean) => made.map((e, i) => ({ e, seq: i + 1 })).filter(({ e }) => keep(e)).map(({ seq }) => seq).reverse();
    expect(seqs(await store.list({ tenantKey: t.id, actorId: "key_1" }, 500))).toEqual(want((e) => e.actorId === "key_1"));
    expect(seqs(await store.list({ tenantKey: t.id, actorId: "key_1", action: "runs.cancel" }, 500))).toEqual(want((e) => e.actorId === "key_1" && e.action === "runs.cancel"));
    expect(seqs(await store.list({ tenantKey: t.id, resourceId: "exec_77" }, 500))).toEqual([77]);
    expect(seqs(await store.list({ tenantKey: t.id, resourceId: "exec_7" }, 500))).toEqual([7]);
    const since = new Date(start + 53_000).toISOString();
    const until = new Date(start + 121_000).toISOString();
    expect(seqs(await store.list({ tenantKey: t.id, since, until }, 500))).toEqual(desc(120, 53));
    expect(seqs(await store.range({ tenantKey: t.id, since, until }, 60, 500))).toEqual(desc(120, 61).reverse());
    expect(seqs(await store.range({ tenantKey: t.id }, 37, 10))).toEqual(desc(47, 38).reverse());
    expect(seqs(await store.range({ tenantKey: other.id }, 0, 100))).toEqual(desc(40, 1).reverse());
    const hundredth = (await store.range({ tenantKey: t.id }, 99, 1))[0]!;
    expect(await store.byHash(t.id, hundredth.hash)).toMatchObject({ seq: 100, id: "aud_blk100" });
    expect(await store.byHash(t.id, "f".repeat(64))).toBeUndefined();

    // Retention cuts inside a block: entries 1-102 are older than 103's time; 103-105 stay in their block.
    const pruned = await store.prune(made[102]!.at, new Date(start + 86_400_000).toISOString());
    expect(pruned).toBe(102 + 40); // and the other tenant's chain, wholly older
    expect(seqs(await store.range({ tenantKey: t.id }, 0, 500))).toEqual(desc(200, 103).reverse());
    expect(await store.anchor(t.id)).toMatchObject({ seq: 102, at: made[101]!.at });
    const [{ n: left }] = (await rowsOf("SELECT count(*) AS n FROM audit_blocks WHERE tenant_key = ?")) as { n: unknown }[];
    expect(Number(left)).toBe(20);
    expect(await verifyChain(store, t.id)).toMatchObject({ ok: true, entries: 98, from: 103 });
    await store.append([entry(t.id, 201)]);
    expect(await verifyChain(store, t.id)).toMatchObject({ ok: true, entries: 99 });
    expect(await verifyChain(store, other.id)).toMatchObject({ ok: true, entries: 0 });
  });

  test("a NUL in a path id is kept as U+FFFD; the batch around it is written whole", async () => {
    // PostgreSQL refuses NUL in text: one such value used to fail its whole batch (5 tries, then the
    // batch was logged as lost, with every other request's entry in it).
    const { h, t } = await peopleHarness();
    // In one batch: the NUL id (refused as text that cannot be stored), an unknown id, a human review.
    const [nul, plain, review] = await Promise.all([
      h.req("POST", "/v1/automations/a%00b/versions", { key: t.key, body: {} }),
      h.req("POST", "/v1/automations/plain/versions", { key: t.key, body: {} }),
      h.req("POST", "/v1/human-reviews/x%00/approve", { key: t.key, body: {} }),
    ]);
    expect([nul.status, plain.status, review.status]).toEqual([400, 404, 400]);
    const made = (await entries(h, t.key)).data;
    expect(made.map((e) => `${e.action} ${e.resource?.id}`).sort()).toEqual(["automations.versions.create a\uFFFDb", "automations.versions.create plain", "human-reviews.approve x\uFFFD"]);
    expect(await verifyChain(h.ctx.storage.audit, t.id)).toMatchObject({ ok: true });
  });

  test("fields holding control characters, empty strings and nulls are stored as given", async () => {
    // PostgreSQL sends a batch as text split on \x1d-\x1f (JSON when a value holds one): both forms keep every value.
    const { h, t } = await peopleHarness();
    const base: AuditInput = {
      id: "aud_plain",
      at: "2026-01-01T00:00:00.000Z",
      tenantKey: t.id,
      actorType: "anonymous",
      actorId: null,
      actorName: "",
      action: "runs.cancel",
      resourceType: "runs",
      resourceId: "",
      requestId: null,
      address: "::1",
      outcome: "failure",
      status: 404,
    };
    const odd = [
      { ...base, id: "aud_us", resourceId: "a\x1fb" },
      { ...base, id: "aud_rs", actorName: "x\x1ey", actorId: "" },
      { ...base, id: "aud_gs", resourceId: "\x1d", requestId: "\x1d\x1d" },
      { ...base, id: "aud_misc", actorName: "tab\tnew\nline \"q\" \\ é 😀", resourceType: null },
    ];
    const lookalike = { ...base, id: "aud_lookalike", actorName: "\\u001e is typed, not a separator" };
    await h.ctx.storage.audit.append([base, { ...base, id: "aud_plain2", actorId: "", actorName: null }]);
    await h.ctx.storage.audit.append(odd);
    await h.ctx.storage.audit.append([lookalike]);
    const rows = await h.ctx.storage.audit.range({ tenantKey: t.id }, 0, 200);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const e of [base, { ...base, id: "aud_plain2", actorId: "", actorName: null }, ...odd, lookalike]) {
      const r = byId.get(e.id)!;
      expect({ ...e }).toEqual({ id: r.id, at: r.at, tenantKey: r.tenantKey, actorType: r.actorType, actorId: r.actorId, actorName: r.actorName, action: r.action, resourceType: r.resourceType, resourceId: r.resourceId, requestId: r.requestId, address: r.address, outcome: r.outcome, status: r.status });
    }
    expect(await verifyChain(h.ctx.storage.audit, t.id)).toMatchObject({ ok: true });
  });

  test("resources: the last parameter and the segment naming it, else the created id; the same route with other paths", () => {
    expect(resourceOf("/v1/runs", "/v1/runs", "exec_1")).toEqual({ type: "runs", id: "exec_1" });
    expect(resourceOf("/v1/runs", "/v1/runs")).toEqual({ type: "runs", id: null });
    expect(resourceOf("/v1/runs/:id/cancel", "/v1/runs/exec_2/cancel")).toEqual({ type: "runs", id: "exec_2" });
    expect(resourceOf("/v1/runs/:id/cancel", "/v1/runs/exec_3/cancel", "ignored")).toEqual({ type: "runs", id: "exec_3" });
    expect(resourceOf("/v1/automations/:id/versions/:versionId/promote", "/v1/automations/aut_1/versions/ver_2/promote")).toEqual({ type: "versions", id: "ver_2" });
    expect(resourceOf("/v1/automations/:id/examples/:exampleId/input/*", "/v1/automations/aut_1/examples/ex%201/input/a/b")).toEqual({ type: "examples", id: "ex 1" });
    expect(resourceOf("/v1/members/:userId", "/v1/members/usr_%E0%A4%A")).toEqual({ type: "members", id: "usr_%E0%A4%A" });
    expect(resourceOf("/v1/auth/sessions", "/v1/auth/sessions")).toEqual({ type: "sessions", id: null });
  });

  test("a request's authentication is readable once settled: the principal, or null when refused", async () => {
    const { h, t } = await peopleHarness();
    const ok = new Request("http://localhost/v1/runs", { method: "POST", headers: { authorization: `Bearer ${t.key}` } });
    const lookup = authenticateRequest(h.ctx, ok);
    expect(settledAuthOf(ok)).toBeUndefined();
    const auth = await lookup;
    expect(settledAuthOf(ok)).toBe(auth);
    expect(auth.tenantId).toBe(t.id);
    const bad = new Request("http://localhost/v1/runs", { method: "POST", headers: { authorization: "Bearer nope" } });
    await authenticateRequest(h.ctx, bad).catch(() => {});
    expect(settledAuthOf(bad)).toBeNull();
    expect(settledAuthOf(new Request("http://localhost/v1/runs"))).toBeUndefined();
  });

  test("action names", () => {
    expect(actionOf("POST", "/v1/runs")).toBe("runs.create");
    expect(actionOf("POST", "/api/v1/runs")).toBe("runs.create");
    expect(actionOf("POST", "/v1/runs/:id/cancel")).toBe("runs.cancel");
    expect(actionOf("DELETE", "/v1/members/:userId")).toBe("members.delete");
    expect(actionOf("PUT", "/v1/members/:userId")).toBe("members.update");
    expect(actionOf("POST", "/v1/automations/:id/versions")).toBe("automations.versions.create");
    expect(actionOf("POST", "/v1/automations/:id/versions/:versionId/promote")).toBe("automations.versions.promote");
    expect(actionOf("PATCH", "/v1/automations/:id/examples/:exampleId/input/*")).toBe("automations.examples.input.update");
    expect(actionOf("POST", "/v1/human-reviews/:id/approve")).toBe("human-reviews.approve");
    expect(actionOf("POST", "/v1/auth/sessions")).toBe("auth.sessions.create");
  });
});
