// HTTP of the files API: upload (streaming multipart), metadata, content with Range, delete, upload
// sessions, and the signed PUT that receives a session's bytes (authorised by its URL, not a key).
import { Elysia } from "elysia";
import { Invalid } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { jsonParser, readLimited, refuseUnstorable } from "../http/body";
import { jsonMayHoldUnstorable } from "../../kernel/text";
import { HttpRefusal } from "../http/envelope";
import { parseWith } from "../http/validate";
import { authPlugin, requireScope } from "../tenancy/auth";
import { contentDisposition } from "./filename";
import { CompleteUploadBody, CreateUploadBody, ListFilesQuery } from "./model";
import { multipartBoundary, readMultipart } from "./multipart";
import { docs } from "./openapi";
import { redirectTo, responseBody } from "./download";
import { parseRange } from "./range";
import { deleteFile, getFile, listFiles, openFile, uploadParts } from "./service";
import { abortUpload, completeUpload, createUpload, getUpload, receiveUpload } from "./uploads";
import { publicUrlFor } from "../http/public-url";


/** Multipart `file` (+ optional `purpose`) → a stored file, streamed by the service into the blob store. */
function uploadMultipart(ctx: AutomationContext, tenantId: string, request: Request) {
  const boundary = multipartBoundary(request.headers.get("content-type"));
  if (!boundary) {
    throw new HttpRefusal(415, "expected Content-Type multipart/form-data with a boundary and a `file` part", "unsupported_media_type");
  }
  if (!request.body) throw Invalid("the request has no body", { field: "file", code: "required" });
  return uploadParts(ctx, tenantId, readMultipart(request.body, boundary));
}

async function content(ctx: AutomationContext, tenantId: string, id: string, request: Request): Promise<Response> {
  const { file, blob } = await openFile(ctx, tenantId, id);
  const headers: Record<string, string> = {
    "content-type": file.contentType,
    "content-disposition": contentDisposition(file.filename),
    "accept-ranges": "bytes",
    etag: `"${file.sha256}"`,
    "x-content-type-options": "nosniff",
    "cache-control": "private, no-cache",
  };
  if (request.headers.get("if-none-match") === headers.etag) return new Response(null, { status: 304, headers });
  // With --s3-redirect the storage answers, Range included.
  const redirect = redirectTo(ctx, request, file.sha256, headers);
  if (redirect) return redirect;
  // If-Range (RFC 9110 13.1.5): a Range only applies while the client's copy is current. We validate by
  // ETag only; a date is not a strong validator here, so it also means "send it all".
  const ifRange = request.headers.get("if-range");
  const rangeHeader = ifRange === null || ifRange === headers.etag ? request.headers.get("range") : null;
  const range = parseRange(rangeHeader, file.size);
  if (range === "unsatisfiable") {
    throw new HttpRefusal(416, `range ${request.headers.get("range")} is outside the file's ${file.size} bytes`, "range_not_satisfiable", undefined, {
      "content-range": `bytes */${file.size}`,
    });
  }
  if (range) {
    headers["content-range"] = `bytes ${range.start}-${range.end}/${file.size}`;
    headers["content-length"] = String(range.end - range.start + 1);
    return new Response(responseBody(blob.slice(range.start, range.end + 1)), { status: 206, headers });
  }
  headers["content-length"] = String(file.size);
  return new Response(responseBody(blob), { status: 200, headers });
}

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw Invalid("the request body is not valid JSON", { code: "invalid_json" });
  }
  if (jsonMayHoldUnstorable(text)) refuseUnstorable(value);
  return value;
}

function contentLength(request: Request): number | undefined {
  const v = request.headers.get("content-length");
  return v && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
}

/** `/files/uploads` is the sessions collection (POST only), not a file id: say so instead of "file uploads not found". */
function refuseSessionsCollection(id: string, method: string): void {
  if (id !== "uploads") return;
  throw new HttpRefusal(405, `${method} is not allowed on /files/uploads (POST creates an upload session)`, "method_not_allowed", undefined, { allow: "POST" });
}

/** The signed PUT of upload sessions. No Bearer key: the URL's signature is the credential. */
const signedPutRoutes = (ctx: AutomationContext) =>
  new Elysia().put(
    "/files/uploads/:uploadId/content",
    async ({ params, query, request }) =>
      receiveUpload(ctx, params.uploadId, { expires: query.expires, signature: query.signature }, request.body, contentLength(request)),
    { parse: "none", detail: docs.put },
  );

export const filesRoutes = (ctx: AutomationContext) =>
  new Elysia()
    .use(signedPutRoutes(ctx))
    .use(authPlugin(ctx))
    .post(
      "/files",
      ({ auth, request }) => {
        requireScope(auth, "files:write");
        return uploadMultipart(ctx, auth.tenantId, request);
      },
      { parse: "none", detail: docs.upload },
    )
    .get(
      "/files",
      ({ auth, query }) => {
        requireScope(auth, "files:read");
        return listFiles(ctx, auth.tenantId, parseWith(ListFilesQuery, query));
      },
      { detail: docs.list },
    )
    .post(
      "/files/uploads",
      async ({ auth, request }) => {
        requireScope(auth, "files:write");
        // Read after the key check, so anonymous callers get 401 before any body error.
        const body = await jsonParser(64 * 1024)({ request });
        return createUpload(ctx, auth.tenantId, parseWith(CreateUploadBody, body), publicUrlFor(ctx.config, request));
      },
      { parse: "none", detail: docs.createUpload },
    )
    .get(
      "/files/uploads/:uploadId",
      ({ auth, params }) => {
        requireScope(auth, "files:read");
        return getUpload(ctx, auth.tenantId, params.uploadId);
      },
      { detail: docs.getUpload },
    )
    .post(
      "/files/uploads/:uploadId/complete",
      async ({ auth, params, request }) => {
        requireScope(auth, "files:write");
        // The SDKs send no body; presigned-multipart sends its parts (and may send the sha256).
        const text = new TextDecoder().decode(await readLimited(request, 2 * 1024 * 1024));
        const body = text.trim() === "" ? {} : parseJson(text);
        return completeUpload(ctx, auth.tenantId, params.uploadId, parseWith(CompleteUploadBody, body));
      },
      { parse: "none", detail: docs.complete },
    )
    .delete(
      "/files/uploads/:uploadId",
      ({ auth, params }) => {
        requireScope(auth, "files:write");
        return abortUpload(ctx, auth.tenantId, params.uploadId);
      },
      { detail: docs.abort },
    )
    .get(
      "/files/:id",
      ({ auth, params, request }) => {
        refuseSessionsCollection(params.id, request.method);
        requireScope(auth, "files:read");
        return getFile(ctx, auth.tenantId, params.id);
      },
      { detail: docs.get },
    )
    .get(
      "/files/:id/content",
      ({ auth, params, request }) => {
        requireScope(auth, "files:read");
        return content(ctx, auth.tenantId, params.id, request);
      },
      { detail: docs.content },
    )
    .delete(
      "/files/:id",
      async ({ auth, params, request }) => {
        refuseSessionsCollection(params.id, request.method);
        requireScope(auth, "files:write");
        await deleteFile(ctx, auth.tenantId, params.id);
        return { deleted: true as const };
      },
      { detail: docs.delete },
    );
