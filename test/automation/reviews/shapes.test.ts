// The review responses keep to the reference OpenAPI's keys (the SDKs reject unknown ones): every key
// of GET/PUT reviews, the corrected-file list, promotion and health, at any depth, is named there.
import { expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json } from "../app/harness";

type Schema = Record<string, unknown>;
const ref = (await Bun.file(new URL("../compat/eigenpal-openapi.json", import.meta.url)).json()) as { components: { schemas: Record<string, Schema> } };
const resolve = (s: Schema): Schema => (typeof s.$ref === "string" ? resolve(ref.components.schemas[s.$ref.split("/").pop()!]) : s);

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
/** Whether a branch could hold `value` by its JSON type (an untyped branch holds anything). */
const fits = (value: unknown, s: Schema) => {
  const t = resolve(s).type as string | undefined;
  return t === undefined || t === kind(value) || (t === "integer" && kind(value) === "number");
};

/** Keys of `value` the schema does not name; `anyOf` picks, among branches of its type, the one naming the most. */
function stray(value: unknown, schema: Schema, at = "$"): string[] {
  const s = resolve(schema);
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) {
    const typed = branches.filter((b) => fits(value, b));
    if (!typed.length) return [`${at} (${kind(value)} fits no branch)`];
    return typed.map((b) => stray(value, b, at)).reduce((a, b) => (a.length <= b.length ? a : b));
  }
  if (Array.isArray(value)) return s.items ? value.flatMap((x, i) => stray(x, s.items as Schema, `${at}[${i}]`)) : [];
  if (value === null || typeof value !== "object" || !s.properties) return [];
  const props = s.properties as Record<string, Schema>;
  return Object.entries(value).flatMap(([k, v]) => (props[k] ? stray(v, props[k], `${at}.${k}`) : [`${at}.${k}`]));
}

test("review, corrected files, promotion and health answer only the reference's keys", async () => {
  const h = await harness({ workers: 1 });
  const t = await h.tenant(`s${Math.random().toString(36).slice(2, 8)}`);
  runsOf(h.ctx).startWorkers();
  await createAutomation(h.ctx.storage.automations, h.clock, t.id, "name: shaped\nsteps:\n  - {name: a, type: transform.set, with: {fields: {x: 1}}}\n");
  const call = (method: string, path: string, body?: unknown) => h.req(method, path, { key: t.key, body });
  const run = await json(await call("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.shaped", input: {} }));
  const put = await json(await call("PUT", `/v1/runs/${run.id}/reviews`, { verdict: "incorrect", note: "n", correctedOutput: { x: 2 }, corrections: [{ kind: "field", path: "/x", correctedValue: 2 }] }));
  expect(stray(put, ref.components.schemas.RunReviewDetail)).toEqual([]);
  expect(stray(await json(await call("GET", `/v1/runs/${run.id}/reviews`)), ref.components.schemas.RunReviewDetail)).toEqual([]);
  const form = new FormData();
  form.append("file", new File(["x"], "x.txt"));
  expect(stray(await json(await call("POST", `/v1/runs/${run.id}/reviews/expected`, form)), ref.components.schemas.RunReviewExpectedFileMutationResponse)).toEqual([]);
  expect(stray(await json(await call("GET", `/v1/runs/${run.id}/reviews/expected`)), ref.components.schemas.RunReviewExpectedArtifacts)).toEqual([]);
  expect(stray(await json(await call("POST", `/v1/runs/${run.id}/promote`, {})), ref.components.schemas.PromoteRunResponse)).toEqual([]);
  const health = await json(await call("GET", `/v1/automations/workflows.shaped/reviews/health`));
  expect(health.rolling).toHaveLength(1);
  expect(stray(health, ref.components.schemas.RunReviewHealthResponse)).toEqual([]);
  const list = await json(await call("GET", "/v1/runs"));
  expect(list.runs[0].execution.review).toEqual({ verdict: "incorrect", status: "open", hasNote: true, correctionCount: 1 });
  expect(stray(list.runs[0].execution.review, ref.components.schemas.RunReviewSummary)).toEqual([]);
});
