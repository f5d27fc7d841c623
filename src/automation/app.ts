// The automation server's HTTP app: every feature's routes under /v1 and /api/v1, one error handler
// producing the `issues` envelope, `x-request-id` on every response, snake_case query aliases.
import { type AnyElysia, Elysia } from "elysia";
import { DomainError, Invalid } from "../kernel/errors";
import { databaseUnavailable } from "../kernel/pg";
import { observeHttp, requestIdOf } from "../kernel/observe";
import type { AutomationContext } from "./context";
import { refuseUnstorable } from "./http/body";
import { domainIssues, envelopeResponse, HttpRefusal, issue } from "./http/envelope";
import { openApiDocument } from "./http/openapi";
import { aliasQuery } from "./http/query";
import { forOfficialSdk } from "./http/sdk-compat";
import { tenancyRoutes } from "./tenancy/routes";
import { peopleRoutes } from "./people/routes";
import { ssoRoutes } from "./sso/routes";
import { automationRoutes } from "./automations/routes";
import { inboundOf } from "./inbound/service";
import { filesRoutes } from "./files/routes";
import { runsRoutes } from "./runs/routes";
import { datasetRoutes } from "./datasets/routes";
import { modelsRoutes } from "./catalog/routes";
import { templateRoutes } from "./templates/routes";
import { agentRoutes } from "./agents/routes";
import { backtestRoutes } from "./backtests/routes";
import { experimentRoutes } from "./experiments/routes";
import { humanReviewRoutes } from "./human-review/routes";
import { emailRoutes } from "./email/routes";
import { reviewRoutes } from "./reviews/routes";
import { scheduleRoutes } from "./schedules/routes";
import { auditRoutes } from "./audit/routes";
import { auditHttp, noteAnswer } from "./audit/http";
import { consoleCsp, consoleResponse, cspOrigin } from "./console/serve";

/** The same routes are served under both prefixes (the SDKs use either). */
export const API_PREFIXES = ["/v1", "/api/v1"] as const;

const api = (ctx: AutomationContext, prefix: string) =>
  new Elysia({ prefix })
    .use(tenancyRoutes(ctx))
    .use(peopleRoutes(ctx))
    .use(ssoRoutes(ctx))
    .use(automationRoutes(ctx, (a, yaml) => inboundOf(ctx).inboundEmail(a, yaml)))
    .use(scheduleRoutes(ctx))
    .use(filesRoutes(ctx))
    .use(runsRoutes(ctx))
    .use(datasetRoutes(ctx))
    .use(modelsRoutes(ctx))
    .use(templateRoutes(ctx))
    .use(agentRoutes(ctx))
    .use(experimentRoutes(ctx))
    .use(backtestRoutes(ctx))
    .use(humanReviewRoutes(ctx))
    .use(emailRoutes(ctx))
    .use(reviewRoutes(ctx))
    .use(auditRoutes(ctx));

export function buildApp(ctx: AutomationContext) {
  const methodsByPath: { pattern: RegExp; method: string }[] = [];
  const allowedMethods = (path: string): string[] => {
    return [...new Set(methodsByPath.filter((r) => r.pattern.test(path)).map((r) => r.method))];
  };

  // Blobs on S3: upload sessions hand the browser presigned URLs of the endpoint, which the page must reach.
  const csp = consoleCsp(cspOrigin(ctx.blobs.direct?.origin));
  let doc: ReturnType<typeof openApiDocument> | undefined;
  let whole: AnyElysia | undefined;
  // Elysia defaults to SO_REUSEPORT, which would let a second server silently share a busy port.
  // Bun's own router finds the route (observeHttp wraps each route's handler and the fallback fetch);
  // standardHostname off so Elysia's fallback still finds the path behind a short Host ("x").
  const app = new Elysia({ serve: { reusePort: false, development: false }, handler: { standardHostname: false } })
    // The web console owns `/` and its hashed assets; every other path falls through to the API.
    .onRequest(({ request }) => (ctx.config.console === false ? undefined : consoleResponse(request, csp)))
    .onTransform({ as: "global" }, ({ query, params }) => {
      // Elysia hands a path parameter it cannot percent-decode (`%ED%A0%80`, `%zz`) to the route as
      // null: refuse it here, once, rather than in every route (the fuzzer found a 500 on /sync).
      // A NUL (`%00`) in a parameter reached PostgreSQL, which refuses it (a 500): refused here too, as
      // every JSON body is in parseJsonText. Query decoding never yields a lone surrogate (Bun puts
      // U+FFFD for `%ED%A0%80`); an undecodable path parameter is null.
      for (const [name, value] of Object.entries((params ?? {}) as Record<string, unknown>)) {
        if (value === null) throw Invalid(`path parameter ${name} is not valid percent-encoded UTF-8`, { field: name, code: "invalid_path" });
        if (typeof value === "string" && value.includes("\0")) refuseUnstorable(value, name);
      }
      for (const name in query) {
        const value = (query as Record<string, unknown>)[name];
        if (name.includes("\0")) refuseUnstorable(name, "<query>");
        if (typeof value === "string" ? value.includes("\0") : Array.isArray(value)) refuseUnstorable(Array.isArray(value) ? value.join("") : value, name);
      }
      aliasQuery(query as Record<string, unknown>);
    })
    .onAfterHandle({ as: "global" }, ({ request, responseValue }) => noteAnswer(request, responseValue))
    .onAfterHandle({ as: "global" }, ({ request, responseValue }) => forOfficialSdk(request, responseValue))
    .onError({ as: "global" }, ({ request, error: raised, code, path }) => {
      const requestId = requestIdOf(request);
      // Elysia wraps whatever a parse hook throws in a ParseError; the cause is the real refusal.
      const cause = code === "PARSE" ? (raised as Error).cause : undefined;
      const sqliteCause = typeof (cause as { code?: unknown } | undefined)?.code === "string" && String((cause as { code: string }).code).startsWith("SQLITE_");
      const error = cause instanceof DomainError || cause instanceof HttpRefusal || sqliteCause ? (cause as Error) : raised;
      if (error instanceof DomainError) {
        const headers: Record<string, string> = {};
        if (error.retryAfter !== undefined) headers["retry-after"] = String(error.retryAfter);
        return envelopeResponse(error.status, requestId, domainIssues(error), { headers });
      }
      if (error instanceof HttpRefusal) {
        return envelopeResponse(error.status, requestId, [issue("<root>", error.message, error.code)], {
          hint: error.hint,
          headers: error.headers,
        });
      }
      if (outOfSpace(error) || outOfSpace(cause)) {
        // Blob puts write a temp file and remove it when a write fails: nothing half-written remains.
        ctx.log.warn("out of storage space", { requestId, path, error: ((outOfSpace(error) ? error : cause) as Error).message });
        return envelopeResponse(507, requestId, [issue("<root>", "the server is out of storage space; nothing was stored", "insufficient_storage")]);
      }
      if (code === "NOT_FOUND") {
        const allowed = allowedMethods(path);
        if (allowed.length > 0) {
          return envelopeResponse(405, requestId, [issue("<root>", `${request.method} is not allowed on ${path}`, "method_not_allowed")], {
            headers: { allow: allowed.join(", ") },
          });
        }
        return envelopeResponse(404, requestId, [issue("<root>", `no route ${request.method} ${path}`, "not_found")], {
          hint: "automation API paths start with /v1 or /api/v1",
        });
      }
      if (code === "PARSE") {
        return envelopeResponse(400, requestId, [issue("<root>", "the request body could not be parsed", "invalid_body")]);
      }
      if (code === "VALIDATION") {
        return envelopeResponse(400, requestId, [issue("<root>", "the request did not match the expected shape", "invalid_value")]);
      }
      if (code === "INVALID_COOKIE_SIGNATURE") {
        return envelopeResponse(400, requestId, [issue("<root>", "invalid cookie signature", "invalid_value")]);
      }
      // Safety nets for races the services' own checks cannot see (another process writing the same
      // data dir): a unique index refusing a row is a conflict, a lock held too long a retryable 503.
      const sqliteCode = (error as { code?: unknown }).code;
      if (typeof sqliteCode === "string" && sqliteCode.startsWith("SQLITE_CONSTRAINT")) {
        return envelopeResponse(409, requestId, [issue("<root>", "conflicts with a concurrent change; retry", "conflict")]);
      }
      // PostgreSQL down, restarting or unreachable: the same retryable 503 (the pool reconnects by itself).
      if (sqliteCode === "SQLITE_BUSY" || sqliteCode === "SQLITE_BUSY_SNAPSHOT" || databaseUnavailable(error)) {
        return envelopeResponse(503, requestId, [issue("<root>", "the database is busy; retry", "unavailable")], { headers: { "retry-after": "1" } });
      }
      const loose = error as unknown as { status?: unknown };
      const status = typeof loose.status === "number" ? loose.status : 500;
      if (status >= 400 && status < 500) {
        return envelopeResponse(status, requestId, [issue("<root>", (error as Error).message || "bad request", "bad_request")]);
      }
      ctx.log.error("unhandled error", { requestId, path, error: (error as Error)?.stack ?? String(error) });
      return envelopeResponse(500, requestId, [issue("<root>", "internal server error", "internal_error")]);
    })
    // The document is built on first request, when every route is registered (routes never change after).
    // Its `servers` names --public-url when one was given, else `/` (see http/openapi.ts).
    .get("/openapi/json", () => (doc ??= openApiDocument(whole as AnyElysia, { publicUrl: ctx.config.publicUrlFromRequest ? undefined : ctx.config.publicUrl })), { detail: { hide: true } })
    .get("/health", () => ({ ok: true }), { detail: { summary: "Liveness", security: [] } });

  for (const prefix of API_PREFIXES) app.use(api(ctx, prefix));

  whole = app;
  for (const r of app.routes) {
    const source = r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*");
    methodsByPath.push({ pattern: new RegExp(`^${source}/?$`), method: r.method });
  }
  // Every state-changing API request goes to the audit trail (audit/http.ts), written after its answer.
  auditHttp(app, ctx);
  return observeHttp(app, { log: ctx.log, metrics: ctx.metrics?.kernel, serveMetrics: ctx.config.ops?.metrics.where === "api" });
}

export type AutomationApp = ReturnType<typeof buildApp>;

/** A write refused for lack of space: a full filesystem or quota (ENOSPC, EDQUOT), a file-size limit (EFBIG), SQLite's SQLITE_FULL. */
export function outOfSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^(ENOSPC|EDQUOT|EFBIG|SQLITE_FULL)$/.test(code);
}
