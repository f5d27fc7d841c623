// HTTP of the runs API: start (JSON or multipart), wait 200/201/202, read with expand, list, events,
// steps, trace, usage, cancel, rerun, artifacts (list, bytes, streaming ZIP with Bearer or a signed token).
import { Elysia } from "elysia";
import * as v from "valibot";
import { Invalid, Unauthorized } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { isJsonType, parseJsonText, readLimited, refuseUnstorable } from "../http/body";
import { jsonMayHoldUnstorable } from "../../kernel/text";
import { HttpRefusal } from "../http/envelope";
import { decodePathParam, parseWith } from "../http/validate";
import { contentDisposition } from "../files/filename";
import { multipartBoundary, readMultipart, readText } from "../files/multipart";
import { parseRange } from "../files/range";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { authenticate } from "../tenancy/service";
import { artifact, eventView, type Expand, listItem, runView, sourceView, stepView, traceView, usageView } from "./envelope";
import { INLINE_MAX_BYTES, type IncomingFile } from "./inputs";
import { ArtifactsQuery, FileValue, GetQuery, ListQuery, RerunQuery, StartBody, TokenBody, WaitQuery } from "./model";
import { type RunService, runsOf, startedBy, type StartRequest } from "./service";
import { isTerminal, type RunRow } from "./store";
import { checkZipToken } from "./token";
import { publicUrlFor } from "../http/public-url";
import type { CancelResult, RunStatus } from "./model";
import { blobResponse, redirectTo } from "../files/download";
import { requestIdOf } from "../../kernel/observe";

const detail = (summary: string) => ({ detail: { summary, tags: ["Runs"] } });
/** Leaves the body unread for the handler (which streams or caps it itself). */
const keepBody = () => ({});
/** JSON bodies carry base64 inline files: room for the inline budget plus base64 overhead. */
const JSON_MAX = Math.ceil(INLINE_MAX_BYTES * 1.4) + 1024 * 1024;

const parseJsonField = (text: string, field: string): Record<string, unknown> => {
  let val: unknown;
  try {
    val = JSON.parse(text);
  } catch {}
  if (!val || typeof val !== "object" || Array.isArray(val)) throw Invalid(`${field} must be a JSON object`, { field });
  if (jsonMayHoldUnstorable(text)) refuseUnstorable(val, field);
  return val as Record<string, unknown>;
};

/** Multipart: `target`, `input`/`overrides`/`metadata` as JSON, files as `files.<field>` parts. */
async function readMultipartStart(request: Request, boundary: string): Promise<Omit<StartRequest, "version" | "trigger">> {
  if (!request.body) throw Invalid("the request has no body", { code: "required" });
  const fields: Record<string, unknown> = {};
  const files: Record<string, IncomingFile | IncomingFile[]> = {};
  let budget = INLINE_MAX_BYTES;
  const add = (field: string, f: IncomingFile) => {
    const prev = files[field];
    files[field] = prev === undefined ? f : Array.isArray(prev) ? [...prev, f] : [prev, f];
  };
  for await (const part of readMultipart(request.body, boundary, 200)) {
    const m = /^files?\.(.+)$/.exec(part.name);
    if (m) {
      if (part.filename !== null) {
        const bytes = await readLimited(new Request("http://x", { method: "POST", body: part.body }), budget);
        budget -= bytes.byteLength;
        add(m[1], new File([bytes], part.filename, { type: part.contentType ?? "application/octet-stream" }));
      } else {
        const text = await readText(part, 64 * 1024);
        add(m[1], parseWith(FileValue, parseJsonField(text, part.name), part.name));
      }
      continue;
    }
    if (!["target", "input", "overrides", "metadata"].includes(part.name)) {
      throw Invalid(`unknown field "${part.name}" (expected target, input, overrides, metadata, files.<field>)`, { field: part.name, code: "unrecognized_keys" });
    }
    const text = await readText(part, 4 * 1024 * 1024);
    fields[part.name] = part.name === "target" ? text.trim() : parseJsonField(text, part.name);
  }
  const body = parseWith(v.omit(StartBody, ["files"]), fields);
  return { ...body, files };
}

async function readStart(request: Request): Promise<Omit<StartRequest, "version" | "trigger">> {
  const type = request.headers.get("content-type");
  const boundary = multipartBoundary(type);
  if (boundary) return readMultipartStart(request, boundary);
  if (!isJsonType(type)) {
    throw new HttpRefusal(415, `expected application/json or multipart/form-data, got ${type ?? "none"}`, "unsupported_media_type");
  }
  const text = new TextDecoder().decode(await readLimited(request, JSON_MAX));
  return parseWith(StartBody, parseJsonText(text));
}

const triggerOf = (request: Request) => {
  const t = request.headers.get("x-eigenpal-trigger")?.trim().toLowerCase();
  // `manual`: a person started it from the console's run form.
  return t === "cli" || t === "manual" ? t : "api";
};

/** 200 with the full run when it finished within the wait, 202 when the wait expired, 201 without a wait. */
async function answerStarted(svc: RunService, run: RunRow, wait: number | undefined, set: { status?: number | string }) {
  if (!wait) {
    set.status = 201;
    return { id: run.id, type: run.type, finished: false as const, source: sourceView(run) };
  }
  const latest = await svc.waitForView(run.id, wait, run);
  set.status = isTerminal(latest.run.status) ? 200 : 202;
  return runView(svc.ctx.storage, latest.run, undefined, latest.has);
}

/** The ZIP download: Bearer (runs:read) or a signed `token`, so the link can be handed to a browser. */
const zipRoutes = (ctx: AutomationContext, svc: RunService) =>
  new Elysia().get(
    "/runs/:id/artifacts",
    async ({ params, query, request }) => {
      const q = parseWith(ArtifactsQuery, query);
      let tenantId: string;
      if (q.token !== undefined && !request.headers.get("authorization")) {
        if (!q.zip) throw Invalid("token only authorises the ZIP download (zip=1)", { field: "token" });
        const check = checkZipToken(ctx.config.signingSecret, params.id, q.token, Date.now());
        if (check !== "ok") throw Unauthorized(check === "expired" ? "the download token has expired" : "the download token is not valid", { code: `token_${check}` });
        const run = await svc.store.byId(params.id);
        if (!run) throw Unauthorized("the download token is not valid", { code: "token_invalid" });
        tenantId = run.tenantId;
      } else {
        // A person's session (no Authorization header) resolves like every route's; keys as they always did here.
        const header = request.headers.get("authorization");
        const auth = header === null ? await authenticateRequest(ctx, request) : await authenticate(ctx.storage.tenancy, ctx.clock, header);
        requireScope(auth, "runs:read");
        tenantId = auth.tenantId;
      }
      if (!q.zip) return { artifacts: (await svc.artifacts(tenantId, params.id)).map(artifact) };
      await svc.get(tenantId, params.id);
      return new Response(await svc.zip(params.id, q.bundle), {
        headers: {
          "content-type": "application/zip",
          "content-disposition": contentDisposition(`${params.id}-artifacts.zip`),
          "cache-control": "private, no-store",
        },
      });
    },
    detail("List run artifacts or download them as a ZIP"),
  );

export const runsRoutes = (ctx: AutomationContext) => {
  const svc = runsOf(ctx);
  return new Elysia()
    .use(zipRoutes(ctx, svc))
    .use(authPlugin(ctx))
    .post(
      "/runs",
      async ({ auth, request, query, set }) => {
        requireScope(auth, "runs:write");
        const q = parseWith(WaitQuery, query);
        const body = await readStart(request);
        const run = await svc.start(startedBy(auth), { ...body, version: q.version, trigger: triggerOf(request), requestId: requestIdOf(request) });
        return answerStarted(svc, run, q.waitForCompletion, set);
      },
      { parse: keepBody, ...detail("Start a run") },
    )
    .get(
      "/runs",
      async ({ auth, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(ListQuery, query);
        const { rows, nextCursor } = await svc.list(auth.tenantId, q);
        const withRank = q.expand?.includes("sampleRank") ?? false;
        return { runs: await Promise.all(rows.map((r) => listItem(ctx.storage, r, withRank))), nextCursor };
      },
      detail("List runs"),
    )
    .get(
      "/runs/:id",
      async ({ auth, params, query }) => {
        requireScope(auth, "runs:read");
        const q = parseWith(GetQuery, query);
        const { run, has } = await svc.getSettled(auth.tenantId, params.id);
        return runView(ctx.storage, run, new Set<Expand>(q.expand ?? []), has);
      },
      detail("Get a run"),
    )
    .get(
      "/runs/:id/events",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return { events: (await svc.store.events((await svc.get(auth.tenantId, params.id)).id)).map(eventView) };
      },
      detail("Run events"),
    )
    .get(
      "/runs/:id/steps",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return { steps: (await svc.store.steps((await svc.get(auth.tenantId, params.id)).id)).map(stepView) };
      },
      detail("Run steps"),
    )
    .get(
      "/runs/:id/trace",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return { events: await traceView(ctx.storage, await svc.get(auth.tenantId, params.id)) };
      },
      detail("Run trace"),
    )
    .get(
      "/runs/:id/usage",
      async ({ auth, params }) => {
        requireScope(auth, "runs:read");
        return { usage: await usageView(ctx.storage, await svc.get(auth.tenantId, params.id)) };
      },
      detail("Run usage"),
    )
    .post(
      "/runs/:id/cancel",
      async ({ auth, params }): Promise<CancelResult> => {
        requireScope(auth, "runs:write");
        const r = await svc.cancel(auth.tenantId, params.id);
        return {
          id: r.run.id,
          type: r.run.type,
          finished: isTerminal(r.run.status),
          execution: { status: r.run.status as RunStatus },
          cancellation: { state: r.state, wasStatus: r.wasStatus as RunStatus },
        };
      },
      { parse: keepBody, ...detail("Cancel a run") },
    )
    .post(
      "/runs/:id/rerun",
      async ({ auth, params, query, set, request }) => {
        requireScope(auth, "runs:write");
        const q = parseWith(RerunQuery, query);
        const run = await svc.rerun(startedBy(auth), params.id, { version: q.version, requestId: requestIdOf(request) });
        return answerStarted(svc, run, q.waitForCompletion, set);
      },
      { parse: keepBody, ...detail("Rerun a run") },
    )
    .post(
      "/runs/:id/artifacts/token",
      async ({ auth, params, request }) => {
        requireScope(auth, "runs:read");
        const text = new TextDecoder().decode(await readLimited(request, 4096));
        const body = parseWith(TokenBody, text.trim() ? parseJsonField(text, "<root>") : {});
        return svc.zipToken(auth.tenantId, params.id, publicUrlFor(ctx.config, request), body.expiresIn);
      },
      { parse: keepBody, ...detail("Signed ZIP download link for a run's artifacts") },
    )
    .get(
      "/runs/:id/artifacts/*",
      async ({ auth, params, request }) => {
        requireScope(auth, "runs:read");
        const path = decodePathParam(params["*"]);
        const a = await svc.artifactBytes(auth.tenantId, params.id, path);
        const headers: Record<string, string> = {
          "content-type": a.contentType,
          "content-disposition": contentDisposition(a.name),
          "x-content-type-options": "nosniff",
        };
        // Ranges are answered here rather than by Bun, whose 416 had an empty body and the artifact's type.
        const range = request.headers.get("range") === null ? null : parseRange(request.headers.get("range"), a.blob.size);
        if (range === "unsatisfiable") {
          throw new HttpRefusal(416, `range ${request.headers.get("range")} is outside the artifact's ${a.blob.size} bytes`, "range_not_satisfiable", undefined, {
            "content-range": `bytes */${a.blob.size}`,
          });
        }
        if (range && !redirectTo(ctx, request, a.sha256, headers)) {
          return new Response(a.blob.slice(range.start, range.end + 1), {
            status: 206,
            headers: { ...headers, "accept-ranges": "bytes", "content-range": `bytes ${range.start}-${range.end}/${a.blob.size}` },
          });
        }
        return blobResponse(ctx, request, a.sha256, a.blob, headers);
      },
      detail("Download one run artifact"),
    );
};
