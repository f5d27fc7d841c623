// Fuzzing the automation API in-process (app.handle): requests for every operation of its own OpenAPI
// document (/openapi/json), valid and hostile, with tenant A's key, garbage or none; tenant B's ids are
// among the path parameters tried.
// Properties: never a 5xx, every error in the issues envelope, nothing of tenant B in any answer to
// someone else, and afterwards B's data unchanged and A's still readable, and the exactly-once and
// conservation invariants (exactlyOnce below): once the workers drained, every run is finished or
// legitimately waiting, finished once, with no step executed twice; a repeated idempotency key gives
// no second upload; the runs' usage equals their model calls; every file's bytes are there.
// Seed printed; FUZZ_SEED replays, FUZZ_RUNS sets the count (test/bench/fuzz.ts runs long).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { runsOf } from "../../src/automation/runs/service";
import { TERMINAL } from "../../src/automation/db/runs-model";
import { harness, json, type Harness } from "../automation/app/harness";
import { sql } from "../automation/app/sql";
import { testBackend } from "../automation/app/config";
import { fuzzParams, operationsOf, requestArb, type FuzzRequest } from "./requests";
import { hostileZips, isIssuesEnvelope } from "./support";

setDefaultTimeout(120_000);

const MARK = "secretb7q";

/** The body, or its first second of a stream that stays open (experiment progress streams do). */
async function bodyText(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let text = "";
  const until = Date.now() + 1000;
  for (;;) {
    const next = await Promise.race([reader.read(), Bun.sleep(Math.max(0, until - Date.now())).then(() => null)]);
    if (!next || next.done) break;
    text += dec.decode(next.value, { stream: true });
  }
  await reader.cancel().catch(() => {});
  return text;
}

export async function automationTarget() {
  const h = await harness();
  const a = await h.tenant("fuzz-a");
  const b = await h.tenant("fuzz-b");
  const yaml = (name: string) => `name: ${name}\ninputs: [{name: n, type: string}]\nsteps: [{name: s, type: transform.set, with: {fields: {x: "{{ input.n }}"}}}]\n`;
  const ids: string[] = [];
  const bIds: string[] = [];
  for (const [t, name] of [[a, "fuzz-a-flow"], [b, `${MARK}-flow`]] as const) {
    const wf = await json(await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: yaml(name) } }));
    const form = new FormData();
    form.set("file", new File([`${t === b ? MARK : "a"}-content`], `${t === b ? MARK : "a"}-file.txt`, { type: "text/plain" }));
    const file = await json(await h.req("POST", "/v1/files", { key: t.key, body: form }));
    const run = await json(await h.req("POST", "/v1/runs", { key: t.key, body: { target: `workflows.${wf.id}`, input: { n: t === b ? MARK : "a" } } }));
    ids.push(wf.id, file.id, run.id, `workflows.${wf.id}`);
    if (t === b) bIds.push(`/v1/automations/${wf.id}`, `/v1/files/${file.id}`, `/v1/files/${file.id}/content`, `/v1/runs/${run.id}`);
  }
  const doc = await json(await h.req("GET", "/openapi/json"));
  const send = async (r: FuzzRequest) => {
    const res = await h.app.handle(new Request(`http://localhost${r.url}`, { method: r.method, headers: r.headers, body: r.body }));
    return { status: res.status, text: await bodyText(res) };
  };
  const bState = async () => {
    const out: unknown[] = [await json(await h.req("GET", "/v1/automations", { key: b.key }))];
    for (const path of bIds) out.push(await (await h.req("GET", path, { key: b.key })).text());
    return JSON.stringify(out);
  };
  return { h, a, b, ids, ops: operationsOf(doc as Parameters<typeof operationsOf>[0]), send, bState };
}

/** Rows of a statement both backends understand (`?` placeholders, `->>` for JSON, counts cast to INTEGER). */
const rows = <T>(h: Harness, text: string, ...args: (string | number)[]) => sql<T>(h.ctx, text, ...args);

/**
 * The invariants that must hold after any sequence of requests. Waits (up to 30 s) for the workers to
 * drain, then checks through the database and the API; returns what was checked, for the log.
 */
export async function exactlyOnce(h: Harness, tenant: { id: string; key: string }): Promise<Record<string, number>> {
  const { key } = tenant;
  const busy = async () => (await rows<{ n: number }>(h, "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM runs WHERE status IN ('created', 'pending', 'running', 'finalizing')"))[0].n;
  for (const until = Date.now() + 30_000; (await busy()) > 0 && Date.now() < until; ) await Bun.sleep(50);
  expect(await busy()).toBe(0);

  // Every run finished, or waiting on an open human-review task.
  const runs = await rows<{ id: string; tenant_id: string; status: string }>(h, "SELECT id, tenant_id, status FROM runs");
  const waitingWithoutTask = await rows(h, "SELECT r.id FROM runs r WHERE r.status = 'waiting' AND NOT EXISTS (SELECT 1 FROM human_review_tasks t WHERE t.run_id = r.id AND t.status = 'pending')");
  expect(waitingWithoutTask).toEqual([]);
  for (const r of runs) expect([...TERMINAL, "waiting"]).toContain(r.status);

  // Finished exactly once: one terminal event per finished run, none for the others.
  const terminalEvents = await rows<{ run_id: string; n: number; status: string }>(
    h,
    `SELECT r.id AS run_id, r.status, (SELECT CAST(COUNT(*) AS INTEGER) FROM run_events e WHERE e.run_id = r.id AND e.type IN ('completed', 'failed', 'cancelled', 'rejected')) AS n FROM runs r`,
  );
  for (const t of terminalEvents) expect({ run: t.run_id, finishes: t.n }).toEqual({ run: t.run_id, finishes: t.status === "waiting" ? 0 : 1 });
  // No step executed twice: one outcome per step path in each run's journal, and no step still running in a finished run.
  expect(await rows(h, "SELECT run_id, metadata->>'path' AS path FROM run_events WHERE type IN ('step_completed', 'step_failed', 'step_skipped') GROUP BY run_id, metadata->>'path' HAVING COUNT(*) > 1")).toEqual([]);
  expect(await rows(h, "SELECT s.run_id, s.path FROM run_steps s JOIN runs r ON r.id = s.run_id WHERE s.status = 'running' AND r.status <> 'waiting'")).toEqual([]);

  // A repeated idempotency key: the same upload session, once, however often and however concurrently it is sent.
  const body = { filename: "once.txt", contentType: "text/plain", size: 4, idempotencyKey: "fuzz-once" };
  const answers = await Promise.all(Array.from({ length: 4 }, () => h.req("POST", "/v1/files/uploads", { key, body })));
  const ids = new Set<string>();
  for (const a of answers) {
    expect(a.status).toBeLessThan(300);
    ids.add((await json(a)).id);
  }
  expect(ids.size).toBe(1);
  expect(await rows(h, "SELECT tenant_id, idempotency_key FROM upload_sessions WHERE idempotency_key IS NOT NULL GROUP BY tenant_id, idempotency_key HAVING COUNT(*) > 1")).toEqual([]);

  // Usage: each run's tokens and call count are its model calls' sums, as the API reports them.
  let checkedUsage = 0;
  for (const r of runs.filter((x) => x.tenant_id === tenant.id).slice(0, 200)) {
    const res = await h.req("GET", `/v1/runs/${r.id}?expand=usage`, { key });
    expect(res.status).toBe(200);
    const run = await json(res);
    const [calls] = await rows<{ n: number; input: number; output: number }>(
      h,
      "SELECT CAST(COUNT(*) AS INTEGER) AS n, CAST(COALESCE(SUM(input_tokens), 0) AS INTEGER) AS input, CAST(COALESCE(SUM(output_tokens), 0) AS INTEGER) AS output FROM model_calls WHERE run_id = ?",
      r.id,
    );
    expect({ status: run.execution.status, calls: run.usage.llmCallCount, input: run.usage.tokens.input, output: run.usage.tokens.output }).toEqual({ status: r.status, calls: calls.n, input: calls.input, output: calls.output });
    checkedUsage++;
  }
  expect(checkedUsage).toBeGreaterThan(0);

  // Conservation of files: every file and run artifact has its bytes in the blob store, of its size.
  const blobs = (await rows<{ sha256: string; size: number | string }>(h, "SELECT sha256, size FROM files UNION SELECT sha256, size FROM run_files")).map((b) => ({ sha256: b.sha256, size: Number(b.size) }));
  for (const b of blobs) expect({ sha256: b.sha256, size: (await h.ctx.blobs.get(b.sha256))?.size ?? -1 }).toEqual(b);
  return { runs: runs.length, usageChecked: checkedUsage, blobs: blobs.length };
}

describe("fuzz: automation API in-process", () => {
  test("every operation, hostile input: no 5xx, the envelope, no other tenant's data", async () => {
    const t = await automationTarget();
    expect(t.ops.length).toBeGreaterThan(100);
    // Runs the fuzzer starts (and reruns, cancels, experiments) execute while it goes on.
    await runsOf(t.h.ctx).startWorkers();
    // The runs queued before the workers started (tenant B's among them) finish before B's state is taken.
    for (const until = Date.now() + 10_000; runsOf(t.h.ctx).pool.running > 0 && Date.now() < until; ) await Bun.sleep(10);
    const before = await t.bState();
    const ctx = { ids: t.ids, auth: [`Bearer ${t.a.key}`, `Bearer ${t.a.key}`, `Bearer ${t.a.key}`, "Bearer eak_nope", "Basic Zm9vOmJhcg==", undefined], zips: hostileZips() };
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb(t.ops, ctx), async (req) => {
        const r = await Promise.race([t.send(req), Bun.sleep(10_000).then(() => ({ status: 0, text: "" }))]);
        if (r.status === 0) throw new Error(`no answer within 10 s to ${req.describe}`);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status >= 500) throw new Error(`${r.status} for ${req.describe}: ${r.text.slice(0, 300)}`);
        if (r.status >= 400 && !isIssuesEnvelope(r.text)) throw new Error(`no envelope (${r.status}) for ${req.describe}: ${r.text.slice(0, 300)}`);
        if (r.text.includes(MARK)) throw new Error(`tenant B's data in the answer to ${req.describe}`);
      }),
      // The PostgreSQL pass (`bun run test:pg`) runs this file on PostgreSQL: fewer cases, each costs more there.
      fuzzParams(`automation in-process [${testBackend}]`, testBackend === "postgres" ? 1000 : 2000),
    );
    console.log(`[fuzz] automation statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    // On top, legitimate work racing itself: 30 runs started at once, a third cancelled while they
    // start, reruns of others, each cancel and rerun sent twice at the same time.
    const started = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => (await json(await t.h.req("POST", "/v1/runs", { key: t.a.key, body: { target: t.ids[3], input: { n: `storm ${i}` } } }))).id as string),
    );
    const raced = await Promise.all(
      started.flatMap((id, i) =>
        i % 3 === 0 ? [0, 1].map(() => t.h.req("POST", `/v1/runs/${id}/cancel`, { key: t.a.key })) : i % 3 === 1 ? [0, 1].map(() => t.h.req("POST", `/v1/runs/${id}/rerun`, { key: t.a.key, body: {} })) : [],
      ),
    );
    for (const r of raced) expect(r.status).toBeLessThan(500);
    // B's data is as it was; A's lists still answer.
    expect(await t.bState()).toBe(before);
    expect((await t.h.req("GET", "/v1/runs", { key: t.a.key })).status).toBe(200);
    console.log(`[fuzz] automation invariants checked: ${JSON.stringify(await exactlyOnce(t.h, t.a))}`);
    // Stopped and closed here, within the test's time (on PostgreSQL the pool's close can outlast the
    // 5 s the file-end cleanup gets); the file-end cleanup then finds nothing left to do.
    const closing = Date.now();
    await runsOf(t.h.ctx).stopWorkers();
    await t.h.ctx.db.close();
    console.log(`[fuzz] workers stopped and database closed in ${Date.now() - closing} ms`);
  });
});
