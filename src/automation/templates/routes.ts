// HTTP of templates: create (JSON with a fileId, or multipart), list, get, replace (new revision),
// delete, revisions and content. Reads need templates:read, writes templates:write.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { requestBody } from "../http/openapi-body";
import { parseWith } from "../http/validate";
import { contentDisposition } from "../files/filename";
import { multipartBoundary, readMultipart } from "../files/multipart";
import { authPlugin, requireScope } from "../tenancy/auth";
import { ContentQuery, CreateTemplateBody, ListTemplatesQuery, ReplaceTemplateBody, TemplateMeta } from "./model";
import { createTemplate, deleteTemplate, fromFileId, fromParts, getTemplate, listRevisions, listTemplates, replaceTemplate, templateContent } from "./service";
import { blobResponse } from "../files/download";

const tags = ["Templates"];
const doc = (summary: string, extra: Record<string, unknown> = {}) => ({ summary, tags, ...extra });

/** The body of POST/PUT: multipart (a `file` part) or JSON with a `fileId`. */
async function incoming(ctx: AutomationContext, tenantId: string, request: Request, create: boolean) {
  const boundary = multipartBoundary(request.headers.get("content-type"));
  if (boundary && request.body) {
    const { incoming, text } = await fromParts(ctx, readMultipart(request.body, boundary), create ? ["name", "description"] : []);
    return { incoming, meta: create ? parseWith(TemplateMeta, { name: text.name ?? "", description: text.description }) : undefined };
  }
  const body = await jsonParser(64 * 1024)({ request });
  if (create) {
    const b = parseWith(CreateTemplateBody, body);
    return { incoming: await fromFileId(ctx, tenantId, b.fileId), meta: { name: b.name, description: b.description } };
  }
  return { incoming: await fromFileId(ctx, tenantId, parseWith(ReplaceTemplateBody, body).fileId), meta: undefined };
}

export const templateRoutes = (ctx: AutomationContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .post(
      "/templates",
      async ({ auth, request, set }) => {
        requireScope(auth, "templates:write");
        const { incoming: input, meta } = await incoming(ctx, auth.tenantId, request, true);
        set.status = 201;
        return createTemplate(ctx, auth.tenantId, meta!, input);
      },
      { parse: "none", detail: doc("Create a template from an uploaded file id or a multipart file", { requestBody: requestBody(CreateTemplateBody, ["name", "description"]) }) },
    )
    .get(
      "/templates",
      ({ auth, query }) => {
        requireScope(auth, "templates:read");
        const q = parseWith(ListTemplatesQuery, query);
        return listTemplates(ctx, auth.tenantId, { limit: Number(q.limit), offset: Number(q.offset) });
      },
      { detail: doc("List templates") },
    )
    .get(
      "/templates/:id",
      ({ auth, params }) => {
        requireScope(auth, "templates:read");
        return getTemplate(ctx, auth.tenantId, params.id);
      },
      { detail: doc("Get a template") },
    )
    .put(
      "/templates/:id",
      async ({ auth, params, request }) => {
        requireScope(auth, "templates:write");
        const { incoming: input } = await incoming(ctx, auth.tenantId, request, false);
        return replaceTemplate(ctx, auth.tenantId, params.id, input);
      },
      { parse: "none", detail: doc("Replace a template's file (appends an immutable revision)", { requestBody: requestBody(ReplaceTemplateBody, []) }) },
    )
    .delete(
      "/templates/:id",
      ({ auth, params }) => {
        requireScope(auth, "templates:write");
        return deleteTemplate(ctx, auth.tenantId, params.id);
      },
      { detail: doc("Delete a template (pinned revisions keep working)") },
    )
    .get(
      "/templates/:id/revisions",
      ({ auth, params }) => {
        requireScope(auth, "templates:read");
        return listRevisions(ctx, auth.tenantId, params.id);
      },
      { detail: doc("List a template's revisions") },
    )
    .get(
      "/templates/:id/content",
      async ({ auth, params, query, request }) => {
        requireScope(auth, "templates:read");
        const { revision, blob } = await templateContent(ctx, auth.tenantId, params.id, parseWith(ContentQuery, query).revisionId);
        return blobResponse(ctx, request, revision.sha256, blob, {
          "content-type": revision.mimeType,
          "content-disposition": contentDisposition(revision.filename),
          "content-length": String(revision.size),
          etag: `"${revision.sha256}"`,
          "x-content-type-options": "nosniff",
        });
      },
      { detail: doc("Download a template revision's bytes (default: the current one)") },
    );
