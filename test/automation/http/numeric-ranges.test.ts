// Every integer a body carries into SQL has a range checked at the edge (issue 36.3): values JavaScript
// calls integers but the database does not hold (1e20, 1e308, 2^31, 2^53 + 2) are a 400 naming the
// field and its range, never a 500, and the refused request leaves nothing behind.
import { expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { harness, json, type Json } from "../app/harness";
import { sql } from "../app/sql";

const flow = `
name: sum
version: 1.0.0
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: s, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
output: {n: "{{ input.n }}"}
`;

const OUT_OF_RANGE = [1e20, 1e308, -1e20, 2 ** 31, 2 ** 53 + 2];

test("experiments: batchConcurrency out of range is a 400 naming it, and no experiment or run is left behind", async () => {
  const h = await harness();
  const t = await h.tenant("ranges");
  const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, flow);
  const req = (method: string, path: string, body?: unknown) => h.req(method, path, { key: t.key, body });
  expect((await req("POST", `/v1/automations/${wf.id}/examples`, { name: "one", input: { n: 1 } })).status).toBe(201);
  for (const n of [...OUT_OF_RANGE, 0, -1, 10_001, 1.5]) {
    const r = await req("POST", `/v1/automations/${wf.id}/experiments`, { batchConcurrency: n });
    expect(r.status).toBe(400);
    const body = await json(r);
    expect(body.issues[0].field).toBe("batchConcurrency");
    expect(body.issues[0].message).toMatch(/batchConcurrency must be (between 1 and 10000|a whole number)/);
  }
  const left = await sql(h.ctx, "SELECT CAST((SELECT COUNT(*) FROM experiments) AS INTEGER) AS e, CAST((SELECT COUNT(*) FROM runs) AS INTEGER) AS r");
  expect(left[0]).toEqual({ e: 0, r: 0 });
  // The bound itself is accepted.
  const ok = await req("POST", `/v1/automations/${wf.id}/experiments`, { batchConcurrency: 10_000 });
  expect([ok.status, ok.status === 202 ? null : await ok.text()]).toEqual([202, null]);
});

test("datasets, human-review versions, uploads: out-of-range numbers are 400s naming the field", async () => {
  const h = await harness();
  const t = await h.tenant("ranges2");
  const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, flow);
  const req = (method: string, path: string, body?: unknown) => h.req(method, path, { key: t.key, body });
  const cases: [string, string, (n: number) => Json, string][] = [
    ["POST", `/v1/automations/${wf.id}/examples`, (n) => ({ name: `x${Math.abs(n) % 97}`, input: { n: 1 }, rowOrder: n }), "rowOrder"],
    ["PUT", `/v1/human-reviews/hrt_nope/fields`, (n) => ({ path: "/a", value: 1, expectedVersion: n, idempotencyKey: "k" }), "expectedVersion"],
    ["POST", `/v1/human-reviews/hrt_nope/approve`, (n) => ({ expectedVersion: n }), "expectedVersion"],
    ["POST", "/v1/files/uploads", (n) => ({ filename: "a.bin", size: n }), "size"],
  ];
  for (const [method, path, body, field] of cases) {
    for (const n of OUT_OF_RANGE) {
      if (field === "size" && n > 0 && n <= Number.MAX_SAFE_INTEGER) continue; // a size in range: 413 from the file limit
      const r = await req(method, path, body(n));
      expect([method, path, n, r.status]).toEqual([method, path, n, 400]);
      const issues = (await json(r)).issues as { field: string }[];
      expect(issues.map((i) => i.field)).toContain(field);
    }
  }
  const rows = await sql(h.ctx, "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM dataset_examples");
  expect(rows[0].n).toBe(0);
});
