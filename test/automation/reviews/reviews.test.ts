// Run reviews through the HTTP API: metadata with its defaults and close bookkeeping, corrections,
// corrected files (upload, copy of an output, bytes, rename, delete), the review ZIP bundle, the
// review summary and every review filter of GET /runs, promotion into a dataset example, tenancy.
import { describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json, type Json } from "../app/harness";

const SHEET = `
name: sheet-report
inputs:
  - {name: rows, type: array, required: false, default: [{name: Ada, hours: 12}]}
  - {name: scan, type: file, required: false}
steps:
  - name: sheet
    type: transform.json-to-xlsx
    with: {rows: "{{ input.rows }}", sheetName: Hours, filename: hours.xlsx}
output:
  count: "{{ input.rows | size }}"
`;

async function setup() {
  const h = await harness({ workers: 2 });
  const t = await h.tenant(`r${Math.random().toString(36).slice(2, 8)}`);
  runsOf(h.ctx).startWorkers();
  await createAutomation(h.ctx.storage.automations, h.clock, t.id, SHEET);
  const call = (method: string, path: string, body?: unknown, key = t.key) => h.req(method, path, { key, body });
  const run = async (input: Json = {}) => {
    const r = await json(await call("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.sheet-report", input }));
    expect(r.execution.status).toBe("completed");
    return r.id as string;
  };
  return { h, t, call, run };
}

const upload = (name: string | null, filename: string, text: string) => {
  const form = new FormData();
  form.append("file", new File([text], filename, { type: "text/plain" }));
  if (name) form.append("name", name);
  return form;
};

describe("run reviews", () => {
  test("PUT/GET/DELETE: defaults, close bookkeeping, corrections kept or replaced", async () => {
    const { call, run } = await setup();
    const id = await run();
    expect(await json(await call("GET", `/v1/runs/${id}/reviews`))).toEqual({ review: null });

    const put = await call("PUT", `/v1/runs/${id}/reviews`, {
      verdict: "incorrect",
      note: "count is wrong",
      correctedOutput: { count: 2 },
      corrections: [{ kind: "field", path: "/count", originalValue: 1, correctedValue: 2, label: "Count" }],
    });
    expect(put.status).toBe(200);
    const r1 = (await json(put)).review;
    expect(r1.id).toMatch(/^rvw_/);
    expect(r1).toMatchObject({ verdict: "incorrect", status: "open", note: "count is wrong", correctedOutput: { count: 2 }, closedAt: null, closedBy: null });
    expect(r1.reviewedBy).toMatch(/^key_/);
    expect(r1.corrections).toHaveLength(1);
    expect(r1.corrections[0]).toMatchObject({ kind: "field", path: "/count", originalValue: 1, correctedValue: 2, label: "Count", note: "" });

    // Omitted note/correctedOutput/corrections stay; correct defaults to closed and records who closed.
    const r2 = (await json(await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "correct" }))).review;
    expect(r2).toMatchObject({ id: r1.id, verdict: "correct", status: "closed", note: "count is wrong", correctedOutput: { count: 2 } });
    expect(r2.closedAt).not.toBeNull();
    expect(r2.closedBy).toBe(r1.reviewedBy);
    expect(r2.corrections.map((c: Json) => c.id)).toEqual([r1.corrections[0].id]);

    // Reopen clears the close; null clears correctedOutput; [] clears corrections; null verdict is a nit.
    const r3 = (await json(await call("PUT", `/v1/runs/${id}/reviews`, { verdict: null, status: "open", correctedOutput: null, corrections: [] }))).review;
    expect(r3).toMatchObject({ verdict: null, status: "open", closedAt: null, correctedOutput: null, corrections: [] });
    const wont = (await json(await call("PUT", `/v1/runs/${id}/reviews`, { status: "wont_fix" }))).review;
    expect(wont.status).toBe("wont_fix");
    expect(wont.closedAt).not.toBeNull();

    expect(await json(await call("GET", `/v1/runs/${id}/reviews`))).toEqual({ review: wont });
    expect(await json(await call("DELETE", `/v1/runs/${id}/reviews`))).toEqual({ review: null });
    expect(await json(await call("GET", `/v1/runs/${id}/reviews`))).toEqual({ review: null });
  });

  test("bad input and unfinished runs", async () => {
    const { h, t, call, run } = await setup();
    const id = await run();
    expect((await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "maybe" })).status).toBe(400);
    expect((await call("PUT", `/v1/runs/${id}/reviews`, { status: "done" })).status).toBe(400);
    expect((await call("PUT", `/v1/runs/${id}/reviews`, { corrections: [{ kind: "field" }] })).status).toBe(400);
    expect((await call("PUT", `/v1/runs/${id}/reviews`, { extra: 1 })).status).toBe(400);
    expect((await call("PUT", `/v1/runs/${id}/reviews`, [1])).status).toBe(400);
    expect((await h.req("PUT", `/v1/runs/${id}/reviews`, { key: t.key, body: "{x", headers: { "content-type": "application/json" } })).status).toBe(400);
    expect((await call("PUT", `/v1/runs/exec_nope/reviews`, {})).status).toBe(404);
    // A run that is not finished cannot be reviewed.
    await createAutomation(h.ctx.storage.automations, h.clock, t.id, "name: slow\nsteps:\n  - {name: w, type: control.wait, duration: 5000}\n");
    const slow = await json(await call("POST", "/v1/runs", { target: "workflows.slow" }));
    const early = await call("PUT", `/v1/runs/${slow.id}/reviews`, { verdict: "correct" });
    expect(early.status).toBe(409);
    expect((await json(early)).issues[0].code).toBe("run_not_terminal");
    await call("POST", `/v1/runs/${slow.id}/cancel`);
  });

  test("corrected files: upload, copy an output, bytes, rename, delete, review ZIP bundle", async () => {
    const { call, run } = await setup();
    const id = await run();
    const up = await call("POST", `/v1/runs/${id}/reviews/expected`, upload("fixed/summary.txt", "local.txt", "corrected text"));
    expect(up.status).toBe(201);
    expect(await json(up)).toEqual({ name: "fixed/summary.txt" });
    const copy = await call("POST", `/v1/runs/${id}/reviews/expected`, { outputFileName: "hours.xlsx", expectedName: "hours-fixed.xlsx" });
    expect(copy.status).toBe(201);
    expect((await json(await call("GET", `/v1/runs/${id}/reviews/expected`))).files).toEqual([{ name: "fixed/summary.txt" }, { name: "hours-fixed.xlsx" }]);

    const bytes = await call("GET", `/v1/runs/${id}/reviews/expected/fixed/summary.txt`);
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get("content-type")).toBe("text/plain");
    expect(await bytes.text()).toBe("corrected text");
    const original = new Uint8Array(await (await call("GET", `/v1/runs/${id}/artifacts/hours.xlsx`)).arrayBuffer());
    const copied = new Uint8Array(await (await call("GET", `/v1/runs/${id}/reviews/expected/hours-fixed.xlsx`)).arrayBuffer());
    expect(copied).toEqual(original);

    const zip = await call("GET", `/v1/runs/${id}/artifacts?zip=1&bundle=review`);
    expect(zip.status).toBe(200);
    const entries = unzipSync(new Uint8Array(await zip.arrayBuffer()));
    expect(Object.keys(entries).sort()).toEqual(["expected/fixed/summary.txt", "expected/hours-fixed.xlsx", "output/hours.xlsx"]);
    expect(new TextDecoder().decode(entries["expected/fixed/summary.txt"])).toBe("corrected text");

    const renamed = await call("PATCH", `/v1/runs/${id}/reviews/expected/fixed/summary.txt`, { name: "summary.txt" });
    expect(await json(renamed)).toEqual({ name: "summary.txt" });
    expect((await call("PATCH", `/v1/runs/${id}/reviews/expected/summary.txt`, { name: "hours-fixed.xlsx" })).status).toBe(409);
    expect((await call("PATCH", `/v1/runs/${id}/reviews/expected/summary.txt`, { name: "../x" })).status).toBe(400);
    expect((await call("GET", `/v1/runs/${id}/reviews/expected/fixed/summary.txt`)).status).toBe(404);
    const del = await call("DELETE", `/v1/runs/${id}/reviews/expected/summary.txt`);
    expect(del.status).toBe(204);
    expect((await json(await call("GET", `/v1/runs/${id}/reviews/expected`))).files).toEqual([{ name: "hours-fixed.xlsx" }]);
    expect((await call("DELETE", `/v1/runs/${id}/reviews/expected/summary.txt`)).status).toBe(404);

    expect((await call("POST", `/v1/runs/${id}/reviews/expected`, { outputFileName: "nope.xlsx" })).status).toBe(404);
    expect((await call("POST", `/v1/runs/${id}/reviews/expected`, upload("../evil", "a.txt", "x"))).status).toBe(400);
    expect((await call("POST", `/v1/runs/${id}/reviews/expected`, "text")).status).toBe(415);

    // DELETE of the review removes the corrected files too.
    await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "incorrect" });
    await call("DELETE", `/v1/runs/${id}/reviews`);
    expect((await json(await call("GET", `/v1/runs/${id}/reviews/expected`))).files).toEqual([]);
  });

  test("run list: review summary on rows and every review filter", async () => {
    const { h, call, run } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1000);
      ids.push(await run());
    }
    const [a, b, c, d, e] = ids;
    h.clock.advance(1000);
    await call("PUT", `/v1/runs/${a}/reviews`, { verdict: "correct", note: "Looks GOOD" });
    h.clock.advance(1000);
    const closedAt = (await json(await call("PUT", `/v1/runs/${b}/reviews`, { verdict: "incorrect", corrections: [{ kind: "field", path: "/count", correctedValue: 3 }] }))).review;
    h.clock.advance(1000);
    await call("PUT", `/v1/runs/${c}/reviews`, { note: "nit only" });
    await call("POST", `/v1/runs/${d}/reviews/expected`, upload(null, "x.txt", "x"));
    h.clock.advance(1000);
    const closeB = (await json(await call("PUT", `/v1/runs/${b}/reviews`, { verdict: "incorrect", status: "closed" }))).review;
    expect(closeB.corrections).toHaveLength(1);
    expect(closedAt.closedAt).toBeNull();

    const list = async (q: string) => ((await json(await call("GET", `/v1/runs?limit=100&${q}`))).runs as Json[]).map((r) => r.id).sort();
    const sorted = (xs: string[]) => [...xs].sort();
    const rows = (await json(await call("GET", "/v1/runs?limit=100"))).runs as Json[];
    expect(rows.find((r) => r.id === a)!.execution.review).toEqual({ verdict: "correct", status: "closed", hasNote: true, correctionCount: 0 });
    expect(rows.find((r) => r.id === b)!.execution.review).toEqual({ verdict: "incorrect", status: "closed", hasNote: false, correctionCount: 1 });
    expect(rows.find((r) => r.id === e)!.execution.review).toBeNull();

    expect(await list("has_review=true")).toEqual(sorted([a, b, c]));
    expect(await list("hasReview=false")).toEqual(sorted([d, e]));
    expect(await list("no_review=true")).toEqual(sorted([d, e]));
    expect(await list("review_status=open")).toEqual([c]);
    expect(await list("review_status=closed")).toEqual(sorted([a, b]));
    expect(await list("review_verdict=correct")).toEqual([a]);
    expect(await list("review_verdict=null")).toEqual([c]);
    expect(await list("has_corrections=true")).toEqual(sorted([b, d]));
    expect(await list("has_corrections=false")).toEqual(sorted([a, c, e]));
    expect(await list("review_note_contains=good")).toEqual([a]);
    expect(await list("review_note_contains=%25")).toEqual([]);
    expect(await list(`review_closed_after=${encodeURIComponent(closeB.closedAt)}`)).toEqual([]);
    expect(await list(`review_closed_before=${encodeURIComponent(closeB.closedAt)}`)).toEqual([a]);
    expect(await list(`review_updated_after=${encodeURIComponent(closedAt.updatedAt)}`)).toEqual(sorted([b, c]));
    expect(await list(`review_created_before=${encodeURIComponent(closedAt.createdAt)}`)).toEqual([a]);
    expect(await list(`review_created_after=${encodeURIComponent(closedAt.createdAt)}`)).toEqual([c]);
    // Runs created after the latest closed review of their automation: nothing yet, then the new one.
    expect(await list("since_last_closed=true")).toEqual([]);
    h.clock.advance(1000);
    const f = await run();
    expect(await list("since_last_closed=true")).toEqual([f]);
    expect((await call("GET", "/v1/runs?review_status=bogus")).status).toBe(400);
  });

  test("promote: a dataset example from the input files and the corrected output and files", async () => {
    const { call, run } = await setup();
    const id = await run({ scan: { $inline: { filename: "scan.txt", mimeType: "text/plain", base64: Buffer.from("scan").toString("base64") } } });
    await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "incorrect", correctedOutput: { count: 7 } });
    await call("POST", `/v1/runs/${id}/reviews/expected`, upload("fixed.txt", "f.txt", "fixed bytes"));
    const res = await call("POST", `/v1/runs/${id}/promote`, { name: "from-review" });
    expect(res.status).toBe(200);
    const p = await json(res);
    expect(p).toMatchObject({ automationType: "workflow", name: "from-review" });
    expect(p.exampleId).toMatch(/^ex_/);
    const ex = await json(await call("GET", `/v1/automations/${p.automationId}/examples/${p.exampleId}`));
    expect(ex.expected).toEqual({ count: 7 });
    expect(JSON.stringify(ex)).toContain("fixed.txt");
    const bytes = await call("GET", `/v1/automations/${p.automationId}/examples/${p.exampleId}/expected/fixed.txt`);
    expect(await bytes.text()).toBe("fixed bytes");

    const plain = await json(await call("POST", `/v1/runs/${id}/promote`, { name: "as-ran", useCorrections: false }));
    const ex2 = await json(await call("GET", `/v1/automations/${plain.automationId}/examples/${plain.exampleId}`));
    expect(ex2.expected).toEqual({ count: 1 });
    expect((await call("POST", `/v1/runs/${id}/promote`, { name: "as-ran" })).status).toBe(409);
    expect((await call("POST", `/v1/runs/${id}/promote`, { useCorrections: "yes" })).status).toBe(400);
  });

  test("tenant isolation and scopes", async () => {
    const { h, t, call, run } = await setup();
    const id = await run();
    await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "correct" });
    const other = (await h.tenant(`o${Math.random().toString(36).slice(2, 8)}`)).key;
    expect((await call("GET", `/v1/runs/${id}/reviews`, undefined, other)).status).toBe(404);
    expect((await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "incorrect" }, other)).status).toBe(404);
    expect((await call("DELETE", `/v1/runs/${id}/reviews`, undefined, other)).status).toBe(404);
    expect((await call("GET", `/v1/runs/${id}/reviews/expected`, undefined, other)).status).toBe(404);
    expect((await call("POST", `/v1/runs/${id}/promote`, {}, other)).status).toBe(404);
    const auto = (await json(await call("GET", "/v1/automations"))).data[0].id;
    expect((await call("GET", `/v1/automations/${auto}/reviews/health`, undefined, other)).status).toBe(404);
    const reader = await h.key(t.slug, ["reviews:read"]);
    expect((await call("GET", `/v1/runs/${id}/reviews`, undefined, reader)).status).toBe(200);
    expect((await call("PUT", `/v1/runs/${id}/reviews`, { verdict: "incorrect" }, reader)).status).toBe(403);
    const noDatasets = await h.key(t.slug, ["reviews:write"]);
    expect((await call("POST", `/v1/runs/${id}/promote`, {}, noDatasets)).status).toBe(403);
  });
});
