// HTTP of run reviews: review metadata, corrected files (multipart upload or copy of an output file,
// bytes, rename, delete), promotion to a dataset example, and an automation's review health. Reads
// need reviews:read (reviews:write implies it), writes reviews:write; promotion also datasets:write.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { contentDisposition } from "../files/filename";
import { multipartBoundary, readMultipart } from "../files/multipart";
import { isJsonType, jsonParser, parseJsonText, readLimited } from "../http/body";
import { HttpRefusal } from "../http/envelope";
import { decodePathParam, parseWith } from "../http/validate";
import { Invalid } from "../../kernel/errors";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { CopyBody, HealthQuery, PromoteBody, RenameBody, ReviewBody } from "./model";
import {
  copyExpected,
  deleteExpected,
  deleteReview,
  expectedBytes,
  getReview,
  health,
  listExpected,
  promote,
  putReview,
  renameExpected,
  uploadExpected,
} from "./service";
import { streamResponse } from "../files/download";

const detail = (summary: string) => ({ detail: { summary, tags: ["Reviews"] } });
/** Leaves the body unread for the handler (multipart streams, JSON is capped there). */
const keepBody = () => ({});
const fileName = (raw: string) => decodePathParam(raw);

export const reviewRoutes = (ctx: AutomationContext) => {
  const parse = jsonParser(8 * 1024 * 1024, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .use(authPlugin(ctx))
    .get(
      "/runs/:id/reviews",
      ({ auth, params }) => {
        requireScope(auth, "reviews:read");
        return getReview(ctx, auth.tenantId, params.id);
      },
      detail("Get a run's review"),
    )
    .put(
      "/runs/:id/reviews",
      ({ auth, params, body }) => {
        requireScope(auth, "reviews:write");
        return putReview(ctx, auth, params.id, parseWith(ReviewBody, body));
      },
      { parse, ...detail("Create or replace a run's review") },
    )
    .delete(
      "/runs/:id/reviews",
      ({ auth, params }) => {
        requireScope(auth, "reviews:write");
        return deleteReview(ctx, auth.tenantId, params.id);
      },
      detail("Delete a run's review, corrections and corrected files"),
    )
    .get(
      "/runs/:id/reviews/expected",
      ({ auth, params }) => {
        requireScope(auth, "reviews:read");
        return listExpected(ctx, auth.tenantId, params.id);
      },
      detail("List corrected files"),
    )
    .post(
      "/runs/:id/reviews/expected",
      async ({ auth, params, request, set }) => {
        requireScope(auth, "reviews:write");
        const type = request.headers.get("content-type");
        const boundary = multipartBoundary(type);
        let created: { name: string };
        if (boundary && request.body) {
          created = await uploadExpected(ctx, auth, params.id, readMultipart(request.body, boundary, 5));
        } else if (isJsonType(type)) {
          const body = parseJsonText(new TextDecoder().decode(await readLimited(request, 64 * 1024)));
          created = await copyExpected(ctx, auth, params.id, parseWith(CopyBody, body));
        } else {
          throw new HttpRefusal(415, `expected multipart/form-data (file, name) or application/json (outputFileName), got ${type ?? "none"}`, "unsupported_media_type");
        }
        set.status = 201;
        return created;
      },
      { parse: keepBody, ...detail("Add a corrected file (upload or copy of an output file)") },
    )
    .get(
      "/runs/:id/reviews/expected/*",
      async ({ auth, params }) => {
        requireScope(auth, "reviews:read");
        const { file, blob } = await expectedBytes(ctx, auth.tenantId, params.id, fileName(params["*"]));
        // Never redirected (--s3-redirect): the Python SDK's download_expected does not follow redirects.
        return streamResponse(blob, { "content-type": file.contentType, "content-disposition": contentDisposition(file.name.split("/").pop()!), "x-content-type-options": "nosniff" });
      },
      detail("Download a corrected file"),
    )
    .patch(
      "/runs/:id/reviews/expected/*",
      ({ auth, params, body }) => {
        requireScope(auth, "reviews:write");
        return renameExpected(ctx, auth.tenantId, params.id, fileName(params["*"]), parseWith(RenameBody, body).name);
      },
      { parse, ...detail("Rename a corrected file") },
    )
    .delete(
      "/runs/:id/reviews/expected/*",
      async ({ auth, params, set }) => {
        requireScope(auth, "reviews:write");
        await deleteExpected(ctx, auth.tenantId, params.id, fileName(params["*"]));
        set.status = 204;
        return null;
      },
      detail("Delete a corrected file"),
    )
    .post(
      "/runs/:id/promote",
      ({ auth, params, body }) => {
        requireScope(auth, "reviews:write");
        requireScope(auth, "datasets:write");
        return promote(ctx, auth, params.id, parseWith(PromoteBody, body));
      },
      { parse, ...detail("Promote a run to a dataset example") },
    )
    .get(
      "/automations/:id/reviews/health",
      ({ auth, params, query }) => {
        requireScope(auth, "reviews:read");
        return health(ctx, auth.tenantId, params.id, parseWith(HealthQuery, query));
      },
      detail("Review health of an automation"),
    );
};
