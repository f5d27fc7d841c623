// HTTP of human-review tasks: list, detail, fields, approve, reject, file bytes. Reads need
// reviews:read (reviews:write implies it), writes reviews:write. A 409 carries, beside the issues,
// `{error, currentVersion, status}` so a client can reload and retry.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { contentDisposition } from "../files/filename";
import { jsonParser } from "../http/body";
import { domainIssues } from "../http/envelope";
import { requestIdOf } from "../../kernel/observe";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { ApproveBody, FieldBody, ListQuery, RejectBody } from "./model";
import { type Answer, approve, fileContent, getTask, listTasks, reject, setField, TaskConflict } from "./service";
import { blobResponse } from "../files/download";

const detail = (summary: string) => ({ detail: { summary, tags: ["Human reviews"] } });

/** The answer of a write, or the 409 body with the task's current version and status. */
async function reply(request: Request, set: { status?: number | string }, act: () => Promise<Answer>): Promise<unknown> {
  try {
    const a = await act();
    set.status = a.status;
    return a.body;
  } catch (e) {
    if (!(e instanceof TaskConflict)) throw e;
    set.status = 409;
    return { issues: domainIssues(e), requestId: requestIdOf(request), error: e.error, currentVersion: e.currentVersion, status: e.taskStatus };
  }
}

export const humanReviewRoutes = (ctx: AutomationContext) => {
  const parse = jsonParser(64 * 1024, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .use(authPlugin(ctx))
    .get(
      "/human-reviews",
      ({ auth, query }) => {
        requireScope(auth, "reviews:read");
        return listTasks(ctx, auth.tenantId, parseWith(ListQuery, query));
      },
      detail("List pending human-review tasks, oldest first"),
    )
    .get(
      "/human-reviews/:id",
      ({ auth, params }) => {
        requireScope(auth, "reviews:read");
        return getTask(ctx, auth.tenantId, params.id);
      },
      detail("Get a human-review task"),
    )
    .put(
      "/human-reviews/:id/fields",
      ({ auth, params, body, set, request }) => {
        requireScope(auth, "reviews:write");
        const b = parseWith(FieldBody, body);
        return reply(request, set, () => setField(ctx, auth, params.id, b));
      },
      { parse, ...detail("Set and confirm one field of a task") },
    )
    .post(
      "/human-reviews/:id/approve",
      ({ auth, params, body, set, request }) => {
        requireScope(auth, "reviews:write");
        const b = parseWith(ApproveBody, body);
        return reply(request, set, () => approve(ctx, auth, params.id, b));
      },
      { parse, ...detail("Approve a task: the run resumes with the reviewed data") },
    )
    .post(
      "/human-reviews/:id/reject",
      ({ auth, params, body, set, request }) => {
        requireScope(auth, "reviews:write");
        const b = parseWith(RejectBody, body);
        return reply(request, set, () => reject(ctx, auth, params.id, b));
      },
      { parse, ...detail("Reject a task: the run ends rejected") },
    )
    .get(
      "/human-reviews/:id/files/:fileId/content",
      async ({ auth, params, request }) => {
        requireScope(auth, "reviews:read");
        const { file, blob } = await fileContent(ctx, auth.tenantId, params.id, params.fileId);
        return blobResponse(ctx, request, file.sha256, blob, { "content-type": file.mimeType, "content-disposition": contentDisposition(file.filename), "x-content-type-options": "nosniff" });
      },
      detail("Download a file of a task"),
    );
};
