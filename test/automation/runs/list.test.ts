// GET /v1/runs: every filter of the reference, sort/order, limit, and a cursor that neither repeats nor
// skips a run while new runs are inserted between pages.
import { describe, expect, test } from "bun:test";
import { runsOf } from "../../../src/automation/runs/service";
import { json, type Json, runsHarness, twoSteps } from "./support";
import { sql } from "../app/sql";

async function seeded() {
  const h = await runsHarness();
  const a = await h.deploy(twoSteps("alpha"));
  const b = await h.deploy(twoSteps("beta"));
  const svc = runsOf(h.ctx);
  const actor = { tenantId: h.t.id, keyId: "key_seed", keyName: "seeder" };
  const other = { tenantId: h.t.id, keyId: "key_other", keyName: "other" };
  const at: string[] = [];
  const mk = async (target: string, extra: Record<string, unknown> = {}, who = actor) => {
    h.clock.advance(60_000);
    at.push(h.clock.now().toISOString());
    return (await svc.start(who, { target, input: { who: "x" }, ...extra })).id;
  };
  const ids = {
    a1: await mk("workflows.alpha"),
    a2: await mk("workflows.alpha", { trigger: "cli", batchId: "batch_1", exampleId: "ex_invoice_001", experimentId: "exp_1" }),
    b1: await mk("workflows.beta", { batchId: "batch_1", exampleId: "ex_receipt_002", experimentId: "exp_2" }, other),
    b2: await mk("workflows.beta"),
    a3: await mk("workflows.alpha"),
  };
  return { h, a, b, ids, at, svc };
}

const idsOf = (body: Json) => body.runs.map((r: { id: string }) => r.id);

describe("GET /v1/runs filters", () => {
  test("newest first by default, envelope {runs, nextCursor}", async () => {
    const { h, ids } = await seeded();
    const body = await json(await h.get("/v1/runs"));
    expect(Object.keys(body).sort()).toEqual(["nextCursor", "runs"]);
    expect(idsOf(body)).toEqual([ids.a3, ids.b2, ids.b1, ids.a2, ids.a1]);
    expect(body.nextCursor).toBeNull();
    expect(body.runs[0].execution.status).toBe("pending");
    expect(body.runs[0].source.name).toBe("alpha");
  });

  test("type, source (alias, slug, id), status list", async () => {
    const { h, ids, b } = await seeded();
    expect(idsOf(await json(await h.get("/v1/runs?type=workflow")))).toHaveLength(5);
    expect(idsOf(await json(await h.get("/v1/runs?type=agent")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?source=workflows.beta")))).toEqual([ids.b2, ids.b1]);
    expect(idsOf(await json(await h.get("/v1/runs?source=beta")))).toEqual([ids.b2, ids.b1]);
    expect(idsOf(await json(await h.get(`/v1/runs?source=${b.id}`)))).toEqual([ids.b2, ids.b1]);
    expect(idsOf(await json(await h.get("/v1/runs?source=agents.beta")))).toEqual([]);
    await sql(h.ctx, "UPDATE runs SET status = 'failed', completed_at = '2026-11-22T10:00:00.000Z' WHERE id = ?", ids.a1);
    await sql(h.ctx, "UPDATE runs SET status = 'completed', completed_at = '2026-11-22T11:00:00.000Z' WHERE id = ?", ids.b2);
    expect(idsOf(await json(await h.get("/v1/runs?status=failed,completed")))).toEqual([ids.b2, ids.a1]);
    expect(idsOf(await json(await h.get("/v1/runs?status=pending")))).toEqual([ids.a3, ids.b1, ids.a2]);
    const bad = await h.get("/v1/runs?status=done");
    expect(bad.status).toBe(400);
    expect((await json(bad)).issues[0].field).toContain("status");
  });

  test("trigger, triggered_by, source_ref (version id or tag)", async () => {
    const { h, ids } = await seeded();
    expect(idsOf(await json(await h.get("/v1/runs?trigger=cli")))).toEqual([ids.a2]);
    expect(idsOf(await json(await h.get("/v1/runs?trigger=api")))).toEqual([ids.a3, ids.b2, ids.b1, ids.a1]);
    expect(idsOf(await json(await h.get("/v1/runs?triggered_by=key_other")))).toEqual([ids.b1]);
    expect(idsOf(await json(await h.get("/v1/runs?triggeredBy=key_other")))).toEqual([ids.b1]);
    const versionId = (await json(await h.get(`/v1/runs/${ids.b1}`))).source.versionId;
    expect(idsOf(await json(await h.get(`/v1/runs?source_ref=${versionId}`)))).toEqual([ids.b2, ids.b1]);
    expect(idsOf(await json(await h.get("/v1/runs?source_ref=9.9.9")))).toEqual([]);
  });

  test("batch_id, example_id, example_id_contains, experiments", async () => {
    const { h, ids } = await seeded();
    expect(idsOf(await json(await h.get("/v1/runs?batch_id=batch_1")))).toEqual([ids.b1, ids.a2]);
    expect(idsOf(await json(await h.get("/v1/runs?example_id=ex_invoice_001")))).toEqual([ids.a2]);
    expect(idsOf(await json(await h.get("/v1/runs?example_id_contains=receipt")))).toEqual([ids.b1]);
    expect(idsOf(await json(await h.get("/v1/runs?example_id_contains=%25")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?experiments=exclude")))).toEqual([ids.a3, ids.b2, ids.a1]);
    expect(idsOf(await json(await h.get("/v1/runs?experiments=only")))).toEqual([ids.b1, ids.a2]);
    expect(idsOf(await json(await h.get("/v1/runs?experiments=include")))).toHaveLength(5);
    expect(idsOf(await json(await h.get("/v1/runs?experiments=exp_2")))).toEqual([ids.b1]);
    expect((await h.get("/v1/runs?experiments=whatever")).status).toBe(400);
    const item = (await json(await h.get(`/v1/runs?ids=${ids.a2}`))).runs[0];
    expect(item.execution.batchId).toBe("batch_1");
    expect(item.eval.exampleId).toBe("ex_invoice_001");
  });

  test("from/to (inclusive), created_after/before (exclusive), completed_after/before", async () => {
    const { h, ids, at } = await seeded();
    expect(idsOf(await json(await h.get(`/v1/runs?from=${at[1]}&to=${at[3]}`)))).toEqual([ids.b2, ids.b1, ids.a2]);
    expect(idsOf(await json(await h.get(`/v1/runs?created_after=${at[1]}&created_before=${at[3]}`)))).toEqual([ids.b1]);
    expect(idsOf(await json(await h.get(`/v1/runs?createdAfter=${at[3]}`)))).toEqual([ids.a3]);
    await sql(h.ctx, "UPDATE runs SET status = 'completed', completed_at = ? WHERE id = ?", "2026-11-23T00:00:00.000Z", ids.a1);
    await sql(h.ctx, "UPDATE runs SET status = 'completed', completed_at = ? WHERE id = ?", "2026-11-24T00:00:00.000Z", ids.b2);
    expect(idsOf(await json(await h.get("/v1/runs?completed_after=2026-11-23T12:00:00Z")))).toEqual([ids.b2]);
    expect(idsOf(await json(await h.get("/v1/runs?completed_before=2026-11-23T12:00:00Z")))).toEqual([ids.a1]);
    expect((await h.get("/v1/runs?from=yesterday")).status).toBe(400);
  });

  test("ids (comma list), sort and order", async () => {
    const { h, ids } = await seeded();
    expect(idsOf(await json(await h.get(`/v1/runs?ids=${ids.a1},${ids.b2}`)))).toEqual([ids.b2, ids.a1]);
    expect(idsOf(await json(await h.get(`/v1/runs?ids=${ids.a1},${ids.b2}&order=asc`)))).toEqual([ids.a1, ids.b2]);
    await sql(h.ctx, "UPDATE runs SET completed_at = ? WHERE id = ?", "2026-11-25T00:00:00.000Z", ids.a1);
    await sql(h.ctx, "UPDATE runs SET completed_at = ? WHERE id = ?", "2026-11-24T00:00:00.000Z", ids.a3);
    const bySort = idsOf(await json(await h.get("/v1/runs?sort=completed_at&order=desc&limit=2")));
    expect(bySort).toEqual([ids.a1, ids.a3]);
    expect((await h.get("/v1/runs?sort=name")).status).toBe(400);
    expect((await h.get("/v1/runs?order=up")).status).toBe(400);
  });

  test("review filters on runs without reviews: review-requiring filters match none (reviews/ tests the rest)", async () => {
    const { h } = await seeded();
    expect(idsOf(await json(await h.get("/v1/runs?review_status=open")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?has_review=true")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?reviewVerdict=correct")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?has_corrections=1")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?review_note_contains=x")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?review_created_after=2026-01-01T00:00:00Z")))).toEqual([]);
    // No review was ever closed: every run is "since the last closed review".
    expect(idsOf(await json(await h.get("/v1/runs?since_last_closed=true")))).toHaveLength(5);
    expect(idsOf(await json(await h.get("/v1/runs?no_review=true")))).toHaveLength(5);
    expect(idsOf(await json(await h.get("/v1/runs?has_review=false")))).toHaveLength(5);
    expect((await h.get("/v1/runs?review_status=maybe")).status).toBe(400);
    expect((await h.get("/v1/runs?has_review=perhaps")).status).toBe(400);
  });

  test("sample_rate keeps runs whose sampleRank is below it", async () => {
    const { h } = await seeded();
    const all = (await json(await h.get("/v1/runs?expand=sampleRank"))).runs as { id: string; sampleRank: number }[];
    const threshold = [...all].sort((x, y) => x.sampleRank - y.sampleRank)[2].sampleRank;
    const kept = idsOf(await json(await h.get(`/v1/runs?sample_rate=${threshold}`)));
    expect(kept.sort()).toEqual(all.filter((r) => r.sampleRank < threshold).map((r) => r.id).sort());
    expect(kept).toHaveLength(2);
    expect(idsOf(await json(await h.get("/v1/runs?sample_rate=0")))).toEqual([]);
    expect(idsOf(await json(await h.get("/v1/runs?sample_rate=1")))).toHaveLength(5);
    expect((await h.get("/v1/runs?sample_rate=1.5")).status).toBe(400);
  });

  test("limit 1-100, offset; another tenant's runs never appear", async () => {
    const { h, ids } = await seeded();
    expect((await json(await h.get("/v1/runs?limit=2"))).runs).toHaveLength(2);
    expect(idsOf(await json(await h.get("/v1/runs?limit=2&offset=2")))).toEqual([ids.b1, ids.a2]);
    expect((await h.get("/v1/runs?limit=0")).status).toBe(400);
    expect((await h.get("/v1/runs?limit=101")).status).toBe(400);
    const other = await h.tenant("someone-else");
    expect((await json(await h.get("/v1/runs", other.key))).runs).toEqual([]);
  });

  test("a foreign or broken cursor is a 400", async () => {
    const { h } = await seeded();
    const c = (await json(await h.get("/v1/runs?limit=2"))).nextCursor;
    expect((await h.get("/v1/runs?cursor=garbage")).status).toBe(400);
    expect((await h.get(`/v1/runs?cursor=${c}&order=asc`)).status).toBe(400);
  });
});

describe("cursor pagination under concurrent inserts", () => {
  test("newest-first pages never repeat or skip a run that existed when paging began", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const svc = runsOf(h.ctx);
    const actor = { tenantId: h.t.id, keyId: "key_x" };
    const existing: string[] = [];
    // Many runs share a createdAt (manual clock), so the id tie-break carries the order.
    for (let i = 0; i < 57; i++) {
      if (i % 5 === 0) h.clock.advance(1000);
      existing.push((await svc.start(actor, { target: "workflows.two-steps", input: { who: `r${i}` } })).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const page: Json = await json(await h.get(`/v1/runs?limit=7${q}`));
      seen.push(...idsOf(page));
      cursor = page.nextCursor;
      // Between pages, new runs arrive (some in the same millisecond as existing ones).
      for (let k = 0; k < 3; k++) {
        await svc.start(actor, { target: "workflows.two-steps", input: { who: `new${inserted++}` } });
      }
      h.clock.advance(1);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...existing].sort());
    expect(seen).toEqual([...existing].reverse());
  });

  test("oldest-first pages pick up runs inserted meanwhile exactly once", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const svc = runsOf(h.ctx);
    const actor = { tenantId: h.t.id, keyId: "key_x" };
    const all: string[] = [];
    for (let i = 0; i < 20; i++) all.push((await svc.start(actor, { target: "workflows.two-steps", input: { who: `r${i}` } })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let rounds = 0;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const page: Json = await json(await h.get(`/v1/runs?order=asc&limit=6${q}`));
      seen.push(...idsOf(page));
      cursor = page.nextCursor;
      if (rounds++ < 3) {
        for (const k of [0, 1]) all.push((await svc.start(actor, { target: "workflows.two-steps", input: { who: `n${rounds}${k}` } })).id);
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(all);
  });
});
