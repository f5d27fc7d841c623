// HTTP of backtests (ours): create, list, detail with the report, cancel, NDJSON progress. Scopes as
// experiments: starting and cancelling need runs:write, reading runs:read.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { ndjsonResponse } from "../http/ndjson";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { CreateBody, ListQuery, ReportQuery } from "./model";
import { startedBy } from "../runs/service";
import { backtestsOf, type ProgressLine } from "./service";

const detail = (summary: string) => ({ detail: { summary, tags: ["Evaluation"] } });
const keepBody = () => ({});

export const backtestRoutes = (ctx: AutomationContext) => {
  const svc = backtestsOf(ctx);
  const parse = jsonParser(1024 * 1024, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .use(authPlugin(ctx))
    .post(
      "/automations/:id/backtests",
      async ({ auth, params, body, set }) => {
        requireScope(auth, "runs:write");
        const b = parseWith(CreateBody, body);
        const out = await svc.create(startedBy(auth), params.id, b);
        set.status = 202;
        return out;
      },
      { parse, ...detail("Start a backtest: replay past runs of the active version on a candidate version") },
    )
    .get(
      "/automations/:id/backtests",
      ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(ListQuery, query);
        return svc.list(auth.tenantId, params.id, { limit: q.limit, offset: q.offset });
      },
      detail("List backtests"),
    )
    .get(
      "/automations/:id/backtests/:backtestId",
      async ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(ReportQuery, query);
        return svc.detail(await svc.find(auth.tenantId, params.id, params.backtestId), { resamples: q.resamples });
      },
      detail("Get a backtest: progress, and when completed the changed runs and the paired statistics"),
    )
    .get(
      "/automations/:id/backtests/:backtestId/progress",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        const b = await svc.find(auth.tenantId, params.id, params.backtestId);
        return ndjsonResponse<ProgressLine>((emit, done) => svc.follow(b.id, emit, done), { "x-backtest-id": b.id });
      },
      detail("Follow a backtest as NDJSON: a line per replayed run, then the summary"),
    )
    .post(
      "/automations/:id/backtests/:backtestId/cancel",
      ({ auth, params }) => {
        requireScope(auth, "runs:write");
        return svc.cancel(auth.tenantId, params.id, params.backtestId);
      },
      { parse: keepBody, ...detail("Cancel a backtest") },
    );
};
