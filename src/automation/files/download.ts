// Answering a download with stored bytes. By default the bytes stream through the server; with
// --s3-redirect (S3 store) the answer is a 302 to a short-lived presigned GET carrying the same
// content type and disposition, so big files never pass through the API.
import type { AutomationContext } from "../context";

/** Presigned download URLs work this long: enough to start the GET, short enough not to be shared. */
export const REDIRECT_TTL_S = 300;

/**
 * What `new Response` can stream. Bun answers `new Response(s3File)` with a redirect of its own to a
 * presigned URL; an S3File is recognised by its `presign` method and sent as a stream instead.
 */
export function responseBody(blob: Blob): Blob | ReadableStream<Uint8Array> {
  return typeof (blob as { presign?: unknown }).presign === "function" ? blob.stream() : blob;
}

/** A 302 to a presigned GET when the operator asked for redirects and the store can presign, else null. */
export function redirectTo(ctx: Pick<AutomationContext, "config" | "blobs">, sha256: string, headers: Record<string, string>): Response | null {
  const direct = ctx.blobs.direct;
  if (!ctx.config.s3Redirect || !direct) return null;
  const location = direct.getUrl(sha256, {
    expiresInS: REDIRECT_TTL_S,
    ...(headers["content-type"] ? { contentType: headers["content-type"] } : {}),
    ...(headers["content-disposition"] ? { disposition: headers["content-disposition"] } : {}),
  });
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
}

/** The whole blob as a 200 (or the redirect). */
export function blobResponse(ctx: Pick<AutomationContext, "config" | "blobs">, sha256: string, blob: Blob, headers: Record<string, string>): Response {
  return redirectTo(ctx, sha256, headers) ?? new Response(responseBody(blob), { headers });
}
