// HTTP of dataset examples: CRUD, input/expected file folders, and `…/run` (an evaluation run).
// Reads need automations:read, writes automations:write; running an example needs runs:write too.
import { Elysia } from "elysia";
import { Invalid } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { contentDisposition } from "../files/filename";
import { multipartBoundary, readMultipart } from "../files/multipart";
import { jsonParser } from "../http/body";
import { decodePathParam, parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { ExampleBody, ListExamplesQuery, RenameBody } from "./model";
import { exportDataset, importDataset } from "./archive";
import { startExampleRun } from "./run";
import {
  automationOf,
  createExample,
  deleteExample,
  exampleView,
  fileBytes,
  findExample,
  listExamples,
  listFiles,
  removeFile,
  renameFile,
  updateExample,
  uploadFiles,
} from "./service";
import type { Folder } from "./store";
import { startedBy } from "../runs/service";
import { streamResponse } from "../files/download";

const detail = (summary: string) => ({ detail: { summary, tags: ["Evaluation"] } });
const keepBody = () => ({});
const MAX_FILE_PARTS = 100;

/** The multipart stream of an upload request, or a 400 naming what is wrong. */
export function multipartOf(request: Request): { body: ReadableStream<Uint8Array>; boundary: string } {
  const boundary = multipartBoundary(request.headers.get("content-type"));
  if (!boundary) throw Invalid("expected a multipart/form-data body with one or more `file` parts", { field: "file", code: "invalid_body" });
  if (!request.body) throw Invalid("the request has no body", { field: "file", code: "required" });
  return { body: request.body, boundary };
}

const pathParam = (raw: string) => decodePathParam(raw);

export const datasetRoutes = (ctx: AutomationContext) => {
  const parse = jsonParser(8 * 1024 * 1024, (request) => authenticateRequest(ctx, request));
  const folderRoutes = (folder: Folder) =>
    new Elysia()
      .use(authPlugin(ctx))
      .get(
        `/automations/:id/examples/:exampleId/${folder}`,
        ({ auth, params }) => {
          requireScope(auth, "automations:read");
          return listFiles(ctx, auth.tenantId, params.id, params.exampleId, folder);
        },
        detail(`List ${folder} files`),
      )
      .post(
        `/automations/:id/examples/:exampleId/${folder}`,
        async ({ auth, params, request, set }) => {
          requireScope(auth, "automations:write");
          await findExample(ctx, auth.tenantId, params.id, params.exampleId);
          const { body, boundary } = multipartOf(request);
          const out = await uploadFiles(ctx, auth.tenantId, params.id, params.exampleId, folder, readMultipart(body, boundary, MAX_FILE_PARTS));
          set.status = 201;
          return out;
        },
        { parse: keepBody, ...detail(`Upload ${folder} files`) },
      )
      .get(
        `/automations/:id/examples/:exampleId/${folder}/*`,
        async ({ auth, params }) => {
          requireScope(auth, "automations:read");
          const { file, blob } = await fileBytes(ctx, auth.tenantId, params.id, params.exampleId, folder, pathParam(params["*"]));
          // Never redirected (--s3-redirect): the official spec does not let these redirect, and the
          // Python SDK's generated client does not follow redirects.
          return streamResponse(blob, {
            "content-type": file.contentType,
            "content-length": String(file.size),
            "content-disposition": contentDisposition(file.path.split("/").pop()!),
            "x-content-type-options": "nosniff",
          });
        },
        detail(`Download ${folder} file`),
      )
      .patch(
        `/automations/:id/examples/:exampleId/${folder}/*`,
        ({ auth, params, body }) => {
          requireScope(auth, "automations:write");
          const { newFilename } = parseWith(RenameBody, body);
          return renameFile(ctx, auth.tenantId, params.id, params.exampleId, folder, pathParam(params["*"]), newFilename);
        },
        { parse, ...detail(`Rename ${folder} file`) },
      )
      .delete(
        `/automations/:id/examples/:exampleId/${folder}/*`,
        ({ auth, params }) => {
          requireScope(auth, "automations:write");
          return removeFile(ctx, auth.tenantId, params.id, params.exampleId, folder, pathParam(params["*"]));
        },
        detail(`Delete ${folder} file`),
      );

  return new Elysia()
    .use(folderRoutes("input"))
    .use(folderRoutes("expected"))
    .use(authPlugin(ctx))
    .get(
      "/automations/:id/examples",
      ({ auth, params, query }) => {
        requireScope(auth, "automations:read");
        return listExamples(ctx, auth.tenantId, params.id, parseWith(ListExamplesQuery, query));
      },
      detail("List dataset examples"),
    )
    .post(
      "/automations/:id/examples",
      async ({ auth, params, body, set }) => {
        requireScope(auth, "automations:write");
        const input = parseWith(ExampleBody, body);
        const view = await createExample(ctx, auth.tenantId, params.id, input);
        set.status = 201;
        return view;
      },
      { parse, ...detail("Create dataset example") },
    )
    .get(
      "/automations/:id/examples/:exampleId",
      async ({ auth, params }) => {
        requireScope(auth, "automations:read");
        return exampleView(ctx, await findExample(ctx, auth.tenantId, params.id, params.exampleId));
      },
      detail("Get dataset example"),
    )
    .patch(
      "/automations/:id/examples/:exampleId",
      ({ auth, params, body }) => {
        requireScope(auth, "automations:write");
        return updateExample(ctx, auth.tenantId, params.id, params.exampleId, parseWith(ExampleBody, body));
      },
      { parse, ...detail("Update dataset example") },
    )
    .delete(
      "/automations/:id/examples/:exampleId",
      ({ auth, params }) => {
        requireScope(auth, "automations:write");
        return deleteExample(ctx, auth.tenantId, params.id, params.exampleId);
      },
      detail("Delete dataset example"),
    )
    .get(
      "/automations/:id/dataset/export",
      async ({ auth, params, query }) => {
        requireScope(auth, "automations:read");
        const raw = (query as Record<string, string | undefined>).exampleIds;
        const ids = raw ? raw.split(",").map((s) => s.trim()).filter(Boolean) : undefined;
        const { stream, filename } = await exportDataset(ctx, auth.tenantId, params.id, ids);
        return new Response(stream, { headers: { "content-type": "application/zip", "content-disposition": contentDisposition(filename), "cache-control": "no-store" } });
      },
      detail("Export automation dataset"),
    )
    .post(
      "/automations/:id/dataset/import",
      async ({ auth, params, request }) => {
        requireScope(auth, "automations:write");
        await automationOf(ctx, auth.tenantId, params.id);
        const { body, boundary } = multipartOf(request);
        return importDataset(ctx, auth.tenantId, params.id, readMultipart(body, boundary, 5));
      },
      { parse: keepBody, ...detail("Import automation dataset") },
    )
    .post(
      "/automations/:id/examples/:exampleId/run",
      async ({ auth, params, set }) => {
        requireScope(auth, "runs:write");
        const ex = await findExample(ctx, auth.tenantId, params.id, params.exampleId);
        const run = await startExampleRun(ctx, startedBy(auth), ex);
        set.status = 201;
        return { id: run.id, type: run.type, batchId: run.batchId, finished: false as const };
      },
      { parse: keepBody, ...detail("Run dataset example") },
    );
};
