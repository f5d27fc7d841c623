// Keys made by people (issue 37): `POST/GET /v1/keys`, `DELETE /v1/keys/{id}` through HTTP. The secret
// is shown once; a key never grants more than its maker holds; it expires, is revoked at once, and
// belongs to its maker: disabled, removed or demoted, their keys stop or narrow at the next request.
// Runs on SQLite, and on PostgreSQL with AUTOMATION_TEST_DB=postgres.
import { describe, expect, test } from "bun:test";
import { json, type Json } from "../app/harness";
import { removeMember, setRole, setStatus } from "../../../src/automation/people/service";
import { createKey } from "../../../src/automation/tenancy/service";
import { as, peopleHarness } from "./support";

const DAY = 86_400_000;

describe("keys made by people", () => {
  test("an admin makes a key, sees the secret once, uses it; the list shows its last use; revoked → 401", async () => {
    const { h, person } = await peopleHarness();
    const admin = await person("admin");
    const made = await as(h, admin, "POST", "/v1/keys", { body: { name: "ci deploys", scopes: ["automations:write", "runs:read"], expiresInDays: 30 } });
    expect(made.status).toBe(201);
    expect(made.headers.get("cache-control")).toBe("no-store");
    const key = await json(made);
    expect(key).toMatchObject({
      name: "ci deploys",
      scopes: ["automations:write", "runs:read"],
      lastUsedAt: null,
      revokedAt: null,
      createdBy: { type: "user", id: admin.userId, name: "Person 1" },
      expiresAt: new Date(h.clock.now().getTime() + 30 * DAY).toISOString(),
    });
    expect(key.id).toStartWith("key_");
    expect(key.key).toMatch(/^eak_/);
    expect(key.hint).toBe(key.key.slice(-4));

    // Listed without the secret or its hash, newest first, with the shell's first key after it.
    const before = await json(await as(h, admin, "GET", "/v1/keys"));
    expect(before).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(before.data[0]).toMatchObject({ id: key.id, lastUsedAt: null, createdBy: { type: "user", id: admin.userId } });
    expect(before.data[1].createdBy).toBeNull();
    for (const k of before.data as Json[]) {
      expect(k.key).toBeUndefined();
      expect(k.hash).toBeUndefined();
    }
    expect(JSON.stringify(before)).not.toContain(key.key);

    h.clock.advance(60_000);
    expect((await h.req("GET", "/v1/automations", { key: key.key })).status).toBe(200);
    const check = await json(await h.req("GET", "/v1/auth/check", { key: key.key }));
    expect(check).toMatchObject({ keyId: key.id, userId: admin.userId, name: "ci deploys", scope: ["automations:write", "runs:read"], wildcardGranted: false });
    const after = await json(await as(h, admin, "GET", "/v1/keys"));
    expect(after.data[0].lastUsedAt).toBe(h.clock.now().toISOString());
    // Its scopes hold: reading runs yes, members no.
    expect((await h.req("GET", "/v1/members", { key: key.key })).status).toBe(403);

    const revoked = await as(h, admin, "DELETE", `/v1/keys/${key.id}`);
    expect(revoked.status).toBe(200);
    const first = (await json(revoked)).revokedAt;
    expect(first).toBe(h.clock.now().toISOString());
    h.clock.advance(5_000);
    const again = await as(h, admin, "DELETE", `/v1/keys/${key.id}`);
    expect(again.status).toBe(200);
    expect((await json(again)).revokedAt).toBe(first);
    const refused = await h.req("GET", "/v1/automations", { key: key.key });
    expect(refused.status).toBe(401);
    expect((await json(refused)).issues[0].code).toBe("unauthorized");
    expect((await json(await as(h, admin, "GET", "/v1/keys"))).data[0]).toMatchObject({ id: key.id, revokedAt: first });
  });

  test("bad input is a 400 naming the field; a key expires: works until expiresAt, then 401", async () => {
    const { h, person } = await peopleHarness();
    const admin = await person("admin");
    const inDay = await json(await as(h, admin, "POST", "/v1/keys", { body: { name: "one day", scopes: ["runs:read"], expiresInDays: 1 } }));
    const at = new Date(h.clock.now().getTime() + 2 * 3600_000).toISOString();
    const exact = await json(await as(h, admin, "POST", "/v1/keys", { body: { name: "two hours", scopes: ["runs:read"], expiresAt: at } }));
    expect(exact.expiresAt).toBe(at);
    expect((await h.req("GET", "/v1/runs", { key: inDay.key })).status).toBe(200);
    expect((await h.req("GET", "/v1/runs", { key: exact.key })).status).toBe(200);

    const bad: [unknown, string][] = [
      [{ name: "past", scopes: ["runs:read"], expiresAt: "2020-01-01T00:00:00Z" }, "expiresAt"],
      [{ name: "both", scopes: ["runs:read"], expiresAt: "2099-01-01T00:00:00Z", expiresInDays: 3 }, "expiresInDays"],
      [{ name: "zero", scopes: ["runs:read"], expiresInDays: 0 }, "expiresInDays"],
      [{ name: "long", scopes: ["runs:read"], expiresInDays: 3651 }, "expiresInDays"],
      [{ name: "not a date", scopes: ["runs:read"], expiresAt: "tomorrow" }, "expiresAt"],
      [{ name: "", scopes: ["runs:read"] }, "name"],
      [{ name: "x".repeat(101), scopes: ["runs:read"] }, "name"],
      [{ name: "no scopes", scopes: [] }, "scopes"],
      [{ name: "bad scope", scopes: ["runs"] }, "scopes"],
      [{ name: "extra", scopes: ["runs:read"], tenant: "other" }, "tenant"],
    ];
    for (const [body, field] of bad) {
      const r = await as(h, admin, "POST", "/v1/keys", { body });
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect((await json(r)).issues[0].field).toStartWith(field);
    }
    h.clock.advance(2 * 3600_000);
    const expired = await h.req("GET", "/v1/runs", { key: exact.key });
    expect(expired.status).toBe(401);
    expect((await json(expired)).issues[0].message).toContain("expired");
    expect((await h.req("GET", "/v1/runs", { key: inDay.key })).status).toBe(200);
    h.clock.advance(DAY);
    expect((await h.req("GET", "/v1/runs", { key: inDay.key })).status).toBe(401);

  });

  test("a key made on the shell may expire too (keys create --expires-in-days)", async () => {
    const { h, t } = await peopleHarness();
    const k = await createKey(h.ctx.storage.tenancy, h.clock, { tenant: t.slug, scopes: ["runs:read"], name: "nightly", expiresInDays: 2 });
    expect(k.expiresAt).toBe(new Date(h.clock.now().getTime() + 2 * DAY).toISOString());
    expect((await h.req("GET", "/v1/runs", { key: k.key })).status).toBe(200);
    h.clock.advance(2 * DAY);
    expect((await h.req("GET", "/v1/runs", { key: k.key })).status).toBe(401);
    const err = await createKey(h.ctx.storage.tenancy, h.clock, { tenant: t.slug, expiresInDays: 0 }).catch((e: Error & { kind?: string }) => e);
    expect([(err as { kind?: string }).kind, (err as Error).message]).toEqual(["invalid", "expiresInDays is at least 1"]);
  });

  test("no escalation: a key grants at most what its maker holds; reviewers may not make keys", async () => {
    const { h, t, person } = await peopleHarness();
    const admin = await person("admin");
    const wild = await as(h, admin, "POST", "/v1/keys", { body: { name: "everything", scopes: ["runs:read", "*"] } });
    expect(wild.status).toBe(403);
    const issue = (await json(wild)).issues[0];
    expect(issue).toMatchObject({ code: "insufficient_scope", field: "scopes" });
    expect(issue.message).toContain("lacks the scope *");
    expect((await as(h, admin, "POST", "/v1/keys", { body: { name: "tenant", scopes: ["tenant:write"] } })).status).toBe(403);
    expect((await as(h, admin, "POST", "/v1/keys", { body: { name: "members", scopes: ["members:*", "keys:write"] } })).status).toBe(201);

    const owner = await person("owner");
    const all = await as(h, owner, "POST", "/v1/keys", { body: { name: "owner's", scopes: ["*"] } });
    expect(all.status).toBe(201);

    const reviewer = await person("reviewer");
    const refused = await as(h, reviewer, "POST", "/v1/keys", { body: { name: "mine", scopes: ["runs:read"] } });
    expect(refused.status).toBe(403);
    expect((await json(refused)).issues[0]).toMatchObject({ code: "insufficient_scope" });
    expect((await as(h, reviewer, "GET", "/v1/keys")).status).toBe(403);

    // A key with keys:write makes keys within its own scopes; `runs:write` covers `runs:read`, not `runs:*`.
    const maker = await createKey(h.ctx.storage.tenancy, h.clock, { tenant: t.slug, scopes: ["keys:write", "runs:write"], name: "maker" });
    const byKey = await h.req("POST", "/v1/keys", { key: maker.key, body: { name: "child", scopes: ["runs:read"] } });
    expect(byKey.status).toBe(201);
    expect((await json(byKey)).createdBy).toEqual({ type: "key", id: maker.id, name: "maker" });
    expect((await h.req("POST", "/v1/keys", { key: maker.key, body: { name: "more", scopes: ["runs:*"] } })).status).toBe(403);
    expect((await h.req("POST", "/v1/keys", { key: maker.key, body: { name: "more", scopes: ["automations:read"] } })).status).toBe(403);
  });

  test("a key belongs to its maker: disabled or removed, the key is refused at the next request; demoted, it narrows", async () => {
    const { h, t, deps, person } = await peopleHarness();
    const admin = await person("admin");
    const key = (await json(await as(h, admin, "POST", "/v1/keys", { body: { name: "bot", scopes: ["automations:*", "runs:read", "keys:write"] } }))).key;
    // A key this key makes belongs to the same person.
    const child = (await json(await h.req("POST", "/v1/keys", { key, body: { name: "bot's child", scopes: ["runs:read"] } }))).key;
    expect((await h.req("GET", "/v1/runs", { key })).status).toBe(200);
    expect((await h.req("GET", "/v1/runs", { key: child })).status).toBe(200);
    // Remembered by now (both backends keep a live key's lookup): the change must still be seen at once.
    expect((await h.req("GET", "/v1/runs", { key })).status).toBe(200);

    await setStatus(deps, admin.userId, "disabled");
    expect((await h.req("GET", "/v1/runs", { key })).status).toBe(401);
    expect((await h.req("GET", "/v1/runs", { key: child })).status).toBe(401);
    // Re-enabling brings the keys back (they were never revoked).
    await setStatus(deps, admin.userId, "active");
    expect((await h.req("GET", "/v1/runs", { key })).status).toBe(200);

    // Demoted to viewer: the key keeps its scopes but grants no more than the role does now.
    await setRole(deps, admin.userId, t.slug, "viewer");
    const narrowed = await json(await h.req("GET", "/v1/auth/check", { key }));
    expect(narrowed.scope.sort()).toEqual(["automations:read", "runs:read"]);
    const write = await h.req("POST", "/v1/keys", { key, body: { name: "x", scopes: ["runs:read"] } });
    expect(write.status).toBe(403);
    await setRole(deps, admin.userId, t.slug, "admin");
    expect((await json(await h.req("GET", "/v1/auth/check", { key }))).scope).toEqual(["automations:*", "runs:read", "keys:write"]);

    await removeMember(deps, admin.userId, t.id);
    expect((await h.req("GET", "/v1/runs", { key })).status).toBe(401);
  });

  test("another tenant's key is a 404 and never listed", async () => {
    const { h, person } = await peopleHarness();
    const admin = await person("admin");
    const beta = await h.tenant("beta");
    const theirs = await json(await h.req("POST", "/v1/keys", { key: beta.key, body: { name: "beta's", scopes: ["runs:read"] } }));
    expect(theirs.createdBy.type).toBe("key");
    const r = await as(h, admin, "DELETE", `/v1/keys/${theirs.id}`);
    expect(r.status).toBe(404);
    expect((await as(h, admin, "DELETE", "/v1/keys/key_nope")).status).toBe(404);
    expect((await h.req("GET", "/v1/runs", { key: theirs.key })).status).toBe(200);
    const ids = (await json(await as(h, admin, "GET", "/v1/keys"))).data.map((k: Json) => k.id);
    expect(ids).not.toContain(theirs.id);
    expect((await json(await h.req("GET", "/v1/keys", { key: beta.key }))).data.map((k: Json) => k.id)).toContain(theirs.id);
  });
});
