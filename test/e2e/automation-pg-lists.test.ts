// Moving a deployment keeps what clients see (issue 21): a demo deployment on SQLite with 500 runs (some
// with input files), a finished experiment, reviews and a run waiting on a human-review task is copied
// with `migrate --from/--to` into PostgreSQL. The compiled server then answers every list endpoint with
// the same JSON on both backends (same ids, same order, same cursors, page after page), and the waiting
// run resumes on PostgreSQL once its task is approved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshPostgresDb } from "../support/postgres";
import { demoServer, type DemoServer } from "./automation-demo";
import { startServer, type Server } from "./support";

type Json = Record<string, any>;
let demo: DemoServer;
let bin = "";
const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const PUBLIC = "http://automation.example.test";

const withFile = `
name: with-file
inputs: [{name: doc, type: file, required: true}, {name: n, type: integer, required: true}]
steps:
  - {name: echo, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
output: {n: "{{ input.n }}"}
`;
const gate = `
name: gate
inputs: [{name: n, type: integer, required: true}]
steps:
  - name: check
    type: control.human_review
    with: {data: {n: "{{ input.n }}"}, selection: {mode: explicit}}
output: {n: "{{ steps.check.output.n }}"}
`;

const api = (base: string, method: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-pg-lists-", workers: 2, sqlite: true, args: ["--public-url", PUBLIC] });
  bin = `${demo.dir}/automation-server`;
  const server = await demo.boot();
  const base = server.url;
  for (const yaml of [withFile, gate]) expect((await api(base, "POST", "/v1/automations", { yaml })).status).toBe(201);
  const form = new FormData();
  form.append("file", new Blob(["%PDF-1.4 tiny"], { type: "application/pdf" }), "tiny.pdf");
  const file = (await (await fetch(`${base}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form })).json()) as Json;
  expect(file.id).toStartWith("file_");
  expect((await api(base, "POST", "/v1/runs", { target: "workflows.gate", input: { n: 7 } })).status).toBe(201);
  for (let i = 0; i < 500; i += 50) {
    const rs = await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        i < 50
          ? api(base, "POST", "/v1/runs", { target: "workflows.with-file", input: { n: i + j }, files: { doc: { $fileId: file.id } } })
          : api(base, "POST", "/v1/runs", { target: "workflows.hello", input: { name: `p${i + j}` }, metadata: { batch: i } }),
      ),
    );
    for (const r of rs) expect(r.status).toBe(201);
  }
  // A finished experiment over the demo dataset, then reviews of two of its runs.
  const exp = (await (await api(base, "POST", "/v1/automations/workflows.invoice-summary/experiments", {})).json()) as Json;
  let finished: Json = exp;
  for (let t = 0; t < 600 && !["completed", "failed"].includes(finished.status); t++) {
    await Bun.sleep(100);
    finished = (await (await api(base, "GET", `/v1/automations/workflows.invoice-summary/experiments/${exp.id}`)).json()) as Json;
  }
  expect(finished.status).toBe("completed");
  const expRuns = ((await (await api(base, "GET", `/v1/runs?experiments=${exp.id}&limit=10`)).json()) as Json).runs as Json[];
  expect(expRuns.length).toBeGreaterThanOrEqual(2);
  expect((await api(base, "PUT", `/v1/runs/${expRuns[0].id}/reviews`, { verdict: "correct", note: "fine" })).status).toBe(200);
  expect((await api(base, "PUT", `/v1/runs/${expRuns[1].id}/reviews`, { verdict: "incorrect", correctedOutput: { total: 1 } })).status).toBe(200);
  // Everything finished but the gate run, which waits on its task.
  for (let t = 0; t < 600; t++) {
    const [{ n }] = await demo.sql<{ n: number }>("SELECT COUNT(*) AS n FROM runs WHERE status IN ('pending', 'running', 'created', 'finalizing')");
    const [{ w }] = await demo.sql<{ w: number }>("SELECT COUNT(*) AS w FROM human_review_tasks WHERE status = 'pending'");
    if (n === 0 && w === 1) break;
    await Bun.sleep(100);
  }
  expect(await server.kill("SIGTERM")).toBe(0);
}, 300_000);

afterAll(async () => {
  await demo?.close();
});

/** Signed URLs carry an expiry computed at request time: equal up to their signature parameters. */
const normalize = (text: string) =>
  text.replace(/([?&](?:expires|exp|sig|signature|token|X-Amz-[A-Za-z]+)=)[^&"\\]*/g, "$1…").replace(/"requestId":"req_[0-9a-z]+"/g, '"requestId":"…"');

/** Every page of a cursor-paged list, following nextCursor. */
async function pages(base: string, path: string): Promise<{ status: number; body: string }[]> {
  const out: { status: number; body: string }[] = [];
  let url = path;
  for (let i = 0; i < 200; i++) {
    const r = await api(base, "GET", url);
    const body = await r.text();
    out.push({ status: r.status, body: normalize(body) });
    let next: string | undefined;
    try {
      next = (JSON.parse(body) as Json).nextCursor ?? undefined;
    } catch {}
    if (!next) break;
    url = `${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(next)}`;
  }
  return out;
}

/** What a client sees on one server: every list endpoint (all pages) and the per-item lists under them. */
async function snapshot(base: string): Promise<Record<string, { status: number; body: string }[]>> {
  const seen: Record<string, { status: number; body: string }[]> = {};
  const take = async (path: string) => (seen[path] = await pages(base, path));
  for (const p of [
    "/v1/automations",
    "/v1/runs?limit=37",
    "/v1/runs?limit=50&status=completed",
    "/v1/runs?limit=25&source=workflows.with-file",
    "/v1/runs?limit=40&sort=created_at&order=asc",
    "/v1/runs?limit=30&sort=completed_at&order=desc",
    "/v1/runs?limit=20&experiments=only",
    "/v1/human-reviews",
    "/v1/human-reviews?status=pending",
    "/v1/templates",
    "/v1/email-servers",
    "/v1/models",
    "/v1/automations/workflows.invoice-summary/experiments",
    "/v1/automations/workflows.invoice-summary/examples",
    "/v1/automations/workflows.invoice-summary/reviews/health?from=2026-01-01T00:00:00.000Z&to=2027-01-01T00:00:00.000Z",
  ]) {
    await take(p);
    expect({ p, status: seen[p].map((page) => page.status) }).toEqual({ p, status: seen[p].map(() => 200) });
  }
  const automations = (JSON.parse(seen["/v1/automations"][0].body) as Json).data as Json[];
  for (const a of automations) {
    await take(`/v1/automations/${a.id}/versions`);
    await take(`/v1/automations/${a.id}/schedules`);
  }
  const runs = seen["/v1/runs?limit=37"].flatMap((p) => (JSON.parse(p.body) as Json).runs as Json[]);
  expect(runs.length).toBeGreaterThanOrEqual(500);
  // Per-run lists of a sample (every 25th run, and every run of the experiment and the gate).
  for (const [i, r] of runs.entries()) {
    if (i % 25 !== 0 && !r.eval && r.execution.status !== "waiting") continue;
    for (const sub of ["", "/events", "/trace", "/reviews", "/scores", "/artifacts"]) await take(`/v1/runs/${r.id}${sub}`);
  }
  return seen;
}

describe("migrate --from/--to: the same answers on PostgreSQL", () => {
  test("every list endpoint answers the same JSON on both backends; the waiting run resumes on PostgreSQL", async () => {
    const onSqlite = await startServer([bin, "--host", "127.0.0.1", "--workers", "1", "--data-dir", `${demo.dir}/data`, "--public-url", PUBLIC], { cwd: demo.dir, sqlite: true });
    let want: Awaited<ReturnType<typeof snapshot>>;
    try {
      want = await snapshot(onSqlite.url);
    } finally {
      expect(await onSqlite.kill("SIGTERM")).toBe(0);
    }

    const url = await freshPostgresDb();
    const copy = Bun.spawn([bin, "migrate", "--from", `${demo.dir}/data`, "--to", url], { stdout: "pipe", stderr: "pipe" });
    const [code, err] = await Promise.all([copy.exited, new Response(copy.stderr).text()]);
    expect(err).toBe("");
    expect(code).toBe(0);

    const onPg: Server = await startServer([bin, "--host", "127.0.0.1", "--workers", "1", "--data-dir", `${demo.dir}/data`, "--public-url", PUBLIC, "--db", url], { cwd: demo.dir });
    try {
      expect(onPg.output()).toContain("database on PostgreSQL");
      const got = await snapshot(onPg.url);
      expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
      // Parsed first (a readable diff), then byte for byte (key order and spacing too).
      const parsed = (pages: { status: number; body: string }[]) => pages.map((p) => ({ status: p.status, json: JSON.parse(p.body) as unknown }));
      for (const path of Object.keys(want)) expect({ path, pages: parsed(got[path]) }).toEqual({ path, pages: parsed(want[path]) });
      for (const path of Object.keys(want)) expect({ path, pages: got[path] }).toEqual({ path, pages: want[path] });

      // The waiting run resumes on PostgreSQL after approval and finishes with the task's data.
      const task = ((await (await api(onPg.url, "GET", "/v1/human-reviews?status=pending")).json()) as Json).tasks[0] as Json;
      const approved = await api(onPg.url, "POST", `/v1/human-reviews/${task.id}/approve`, { expectedVersion: task.version });
      expect(approved.status).toBe(200);
      let run: Json = {};
      for (let t = 0; t < 300; t++) {
        run = (await (await api(onPg.url, "GET", `/v1/runs/${task.executionId}`)).json()) as Json;
        if (run.finished) break;
        await Bun.sleep(100);
      }
      expect(run.execution.status).toBe("completed");
      expect(run.output).toEqual({ n: 7 });
    } finally {
      expect(await onPg.kill("SIGTERM")).toBe(0);
    }
  }, 600_000);
});
