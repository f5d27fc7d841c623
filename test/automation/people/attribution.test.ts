// Attribution (issue 37): every human act names the person, not their session; keys are named by
// their name. Through HTTP: a reviewer's session decides a human-review task and reviews a run, a
// developer's session starts a run, and a key does the same for comparison.
import { describe, expect, test } from "bun:test";
import { createUser } from "../../../src/automation/people/service";
import { INVOICE_CHECK, json, type Json, reviewHarness } from "../human-review/support";
import { as, PASSWORD, signIn } from "./support";

async function setup() {
  const r = await reviewHarness();
  await r.deploy(INVOICE_CHECK);
  const deps = { people: r.h.ctx.storage.people, tenancy: r.h.ctx.storage.tenancy, clock: r.h.clock };
  const person = async (email: string, name: string, role: string) => {
    await createUser(deps, { email, name, password: PASSWORD, tenant: r.t.slug, role });
    return signIn(r.h, email, PASSWORD);
  };
  return { r, person };
}

describe("attribution", () => {
  test("a reviewer's approval names the reviewer (e-mail in `by`, {type, id, name} in `actor`), not the session", async () => {
    const { r, person } = await setup();
    const rita = await person("Rita@Example.com", "Rita Reviewer", "reviewer");
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 99.5 });
    const base = `/v1/human-reviews/${task.id}`;
    for (const [i, path] of ["/total", "/lines/0/qty"].entries()) {
      const set = await as(r.h, rita, "PUT", `${base}/fields`, { body: { path, value: i === 0 ? 120 : 3, expectedVersion: i + 1, idempotencyKey: `f${i}` } });
      expect(set.status).toBe(200);
      const field = (await json(set)).decisions.find((d: Json) => d.path === path);
      expect(field.confirmedBy).toBe("Rita@Example.com");
    }
    const approved = await as(r.h, rita, "POST", `${base}/approve`, { body: { expectedVersion: 3 } });
    expect(approved.status).toBe(200);
    const decided = await json(await r.get(base));
    expect(decided.decision.status).toBe("approved");
    expect(decided.decision.by).toBe("Rita@Example.com");
    expect(decided.decision.actor).toEqual({ type: "user", id: rita.userId, name: "Rita@Example.com" });
    expect(JSON.stringify(decided)).not.toContain("ses_");
    await r.until(runId, ["completed"]);
  });

  test("a key's rejection names the key by its name (its id when it has none)", async () => {
    const { r } = await setup();
    const named = await r.h.ctx.storage.tenancy.keys(r.t.id);
    const keyRow = named[0]!;
    const { task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 99.5 });
    const rejected = await r.post(`/v1/human-reviews/${task.id}/reject`, { expectedVersion: 1, reason: "wrong vendor", idempotencyKey: "rej-1" });
    expect(rejected.status).toBe(200);
    const decided = await json(await r.get(`/v1/human-reviews/${task.id}`));
    expect(decided.decision.by).toBe(keyRow.name ?? keyRow.id);
    expect(decided.decision.actor).toEqual({ type: "key", id: keyRow.id, name: keyRow.name ?? keyRow.id });
  });

  test("a run a person starts names them in trigger.by ({id: usr_…, name, email}); the runs list filters by the person", async () => {
    const { r, person } = await setup();
    const dev = await person("dev@example.com", "Dana Developer", "developer");
    const started = await as(r.h, dev, "POST", "/v1/runs", { body: { target: "workflows.invoice-check", input: { vendor: "ACME", total: 99.5 } } });
    expect(started.status).toBe(201);
    const run = await json(started);
    const read = await json(await r.get(`/v1/runs/${run.id}`));
    expect(read.trigger.by).toEqual({ id: dev.userId, name: "Dana Developer", email: "dev@example.com" });
    const byKey = await json(await r.post("/v1/runs", { target: "workflows.invoice-check", input: { vendor: "ACME", total: 99.5 } }));
    const keyRun = await json(await r.get(`/v1/runs/${byKey.id}`));
    expect(keyRun.trigger.by.id).toMatch(/^key_/);
    expect(keyRun.trigger.by.email).toBe("");
    const mine = await json(await r.get(`/v1/runs?triggeredBy=${dev.userId}&limit=50`));
    expect(mine.runs.map((x: Json) => x.id)).toEqual([run.id]);
  });

  test("a run review names the person's user id and e-mail (reviewedBy, closedBy) as the reference describes them", async () => {
    const { r, person } = await setup();
    const rita = await person("rita@example.com", "Rita", "reviewer");
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 99.5 });
    await r.post(`/v1/human-reviews/${task.id}/reject`, { expectedVersion: 1, reason: "no", idempotencyKey: "rej-2" });
    await r.until(runId, ["rejected"]);
    const open = await as(r.h, rita, "PUT", `/v1/runs/${runId}/reviews`, { body: { verdict: "incorrect", note: "vendor wrong" } });
    expect(open.status).toBe(200);
    const review = (await json(open)).review;
    expect(review).toMatchObject({ reviewedBy: rita.userId, reviewedByEmail: "rita@example.com", closedBy: null, closedByEmail: null });
    const closed = (await json(await as(r.h, rita, "PUT", `/v1/runs/${runId}/reviews`, { body: { status: "closed" } }))).review;
    expect(closed).toMatchObject({ closedBy: rita.userId, closedByEmail: "rita@example.com" });
    // A key's review: its id, no e-mail.
    const byKey = (await json(await r.put(`/v1/runs/${runId}/reviews`, { verdict: "correct" }))).review;
    expect(byKey.reviewedBy).toMatch(/^key_/);
    expect(byKey.reviewedByEmail).toBeNull();
  });
});
