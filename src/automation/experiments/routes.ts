// HTTP of experiments (create, NDJSON stream, list, detail, cancel, exports, resolve by id), of
// evaluator files and of run scores. Experiments need runs:write to start and runs:read to read;
// evaluator files automations:read / automations:write.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { ndjsonResponse } from "../http/ndjson";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { MAX_EVALUATOR_YAML_BYTES, PutBody } from "../evaluators/model";
import { getEvaluators, putEvaluators } from "../evaluators/service";
import { runsOf, startedBy } from "../runs/service";
import { automationOf } from "../datasets/service";
import { exportCsv, exportJson } from "./export";
import { CompareQuery, CreateBody, dateBound, ExportQuery, ListQuery } from "./model";
import { compareExperiments, experimentPair } from "./comparison";
import { prepareYaml } from "../workflow/offthread";
import { experimentsOf, type ProgressLine } from "./service";

const detail = (summary: string) => ({ detail: { summary, tags: ["Evaluation"] } });
const keepBody = () => ({});
const yes = (s: string | undefined) => s === "1" || s === "true";

export const experimentRoutes = (ctx: AutomationContext) => {
  const svc = experimentsOf(ctx);
  const parse = jsonParser(1024 * 1024, (request) => authenticateRequest(ctx, request));
  // JSON escaping can double a YAML's size on the wire; the 1 MiB rule is checked on the decoded YAML.
  const parseYaml = jsonParser(3 * MAX_EVALUATOR_YAML_BYTES, (request) => authenticateRequest(ctx, request));
  const exportResponse = (format: "csv" | "json", body: string | object, name: string) =>
    new Response(typeof body === "string" ? body : JSON.stringify(body), {
      headers: {
        "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/json",
        "content-disposition": `attachment; filename="${name}.${format}"`,
      },
    });
  return new Elysia()
    .use(authPlugin(ctx))
    .get(
      "/automations/:id/evaluators",
      ({ auth, params }) => {
        requireScope(auth, "automations:read");
        return getEvaluators(ctx, auth.tenantId, params.id);
      },
      detail("Get evaluators"),
    )
    .put(
      "/automations/:id/evaluators",
      async ({ auth, params, body }) => {
        requireScope(auth, "automations:write");
        const { yaml } = parseWith(PutBody, body);
        await prepareYaml(yaml);
        return putEvaluators(ctx, auth.tenantId, params.id, yaml);
      },
      { parse: parseYaml, ...detail("Replace evaluators") },
    )
    .get(
      "/runs/:id/scores",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        const run = await runsOf(ctx).get(auth.tenantId, params.id);
        return { scores: await ctx.storage.evaluators.results(run.id) };
      },
      detail("List run evaluator scores"),
    )
    .get(
      "/experiments/:experimentId",
      ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return svc.resolve(auth.tenantId, params.experimentId);
      },
      detail("Resolve experiment by id"),
    )
    .post(
      "/automations/:id/experiments",
      async ({ auth, params, body, set }) => {
        requireScope(auth, "runs:write");
        const b = parseWith(CreateBody, body);
        const out = await svc.create(startedBy(auth), params.id, { ...b, version: b.version ?? b.sourceRef });
        set.status = 202;
        return out;
      },
      { parse, ...detail("Create experiment") },
    )
    .post(
      "/automations/:id/experiments/stream",
      async ({ auth, params, body }) => {
        requireScope(auth, "runs:write");
        const b = parseWith(CreateBody, body);
        const created = await svc.create(startedBy(auth), params.id, { ...b, version: b.version ?? b.sourceRef });
        return ndjsonResponse<ProgressLine>((emit, done) => svc.follow(created.id, emit, done), { "x-experiment-id": created.id });
      },
      { parse, ...detail("Create automation experiment with NDJSON progress") },
    )
    .get(
      "/automations/:id/experiments",
      ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(ListQuery, query);
        const now = ctx.clock.now();
        return svc.list(auth.tenantId, params.id, { limit: q.limit, offset: q.offset, from: dateBound(q.fromDate, now), to: dateBound(q.toDate, now, true) });
      },
      detail("List experiments"),
    )
    .get(
      "/automations/:id/experiments/export",
      async ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(ExportQuery, query);
        const a = await automationOf(ctx, auth.tenantId, params.id);
        const all = await svc.store.ofAutomation(auth.tenantId, a.id);
        const body = q.format === "csv" ? await exportCsv(ctx, svc, all) : await exportJson(ctx, svc, all, yes(q.includeTrace));
        return exportResponse(q.format, body, `${a.slug}-experiments`);
      },
      detail("Export all experiment eval results"),
    )
    .get(
      "/automations/:id/experiments/compare",
      async ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(CompareQuery, query);
        const a = await automationOf(ctx, auth.tenantId, params.id);
        const stores = { experiments: svc.store, evaluators: ctx.storage.evaluators };
        const [base, candidate] = await experimentPair(stores, { tenantId: auth.tenantId, automationId: a.id }, q.base, q.candidate);
        return compareExperiments(stores, base, candidate, { seed: q.seed, resamples: q.resamples });
      },
      {
        detail: {
          summary: "Compare two experiments (paired bootstrap, permutation test, Holm, McNemar)",
          tags: ["Evaluation"],
          parameters: [
            { name: "base", in: "query", required: true, schema: { type: "string" }, description: "the experiment compared against" },
            { name: "candidate", in: "query", required: true, schema: { type: "string" }, description: "the experiment under test (same automation)" },
            { name: "seed", in: "query", required: false, schema: { type: "integer", minimum: 0, maximum: 4294967295 }, description: "seed of the resampling (default: random, returned)" },
            { name: "resamples", in: "query", required: false, schema: { type: "integer", minimum: 10000, maximum: 1000000, default: 10000 } },
          ],
        },
      },
    )
    .get(
      "/automations/:id/experiments/:experimentId",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return svc.detail(await svc.find(auth.tenantId, params.id, params.experimentId));
      },
      detail("Get experiment"),
    )
    .get(
      "/automations/:id/experiments/:experimentId/trials",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return svc.trials(await svc.find(auth.tenantId, params.id, params.experimentId));
      },
      detail("Trial statistics of an experiment (mean, spread and pass rate per example and evaluator)"),
    )
    .post(
      "/automations/:id/experiments/:experimentId/cancel",
      ({ auth, params }) => {
        requireScope(auth, "runs:write");
        return svc.cancel(auth.tenantId, params.id, params.experimentId);
      },
      { parse: keepBody, ...detail("Cancel experiment") },
    )
    .get(
      "/automations/:id/experiments/:experimentId/export",
      async ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(ExportQuery, query);
        const e = await svc.find(auth.tenantId, params.id, params.experimentId);
        const body = q.format === "csv" ? await exportCsv(ctx, svc, [e]) : await exportJson(ctx, svc, [e], yes(q.includeTrace));
        return exportResponse(q.format, body, e.id);
      },
      detail("Export experiment eval results"),
    );
};
