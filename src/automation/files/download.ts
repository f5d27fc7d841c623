// Answering a download with stored bytes. By default the bytes stream through the server; with
// --s3-redirect (S3 store) a route that allows it answers a 302 to a short-lived presigned GET, so big
// files never pass through the API. The storage's answer must carry what the proxied answer would:
// the same Content-Disposition, and the Content-Type this client would have got from us (official SDKs
// get non-JSON bodies as octet-stream, http/sdk-compat.ts), passed as `response-content-type` and
// `response-content-disposition`. Only routes whose official clients follow redirects may redirect:
// the Python SDK's `runs.reviews.download_expected` does not follow one, and would read the empty 302.
import type { AutomationContext } from "../context";
import { forOfficialSdk } from "../http/sdk-compat";

/** Presigned download URLs work this long: enough to start the GET, short enough not to be shared. */
export const REDIRECT_TTL_S = 300;

/**
 * What `new Response` can stream. Bun answers `new Response(s3File)` with a redirect of its own to a
 * presigned URL; an S3File is recognised by its `presign` method and sent as a stream instead.
 */
export function responseBody(blob: Blob): Blob | ReadableStream<Uint8Array> {
  return typeof (blob as { presign?: unknown }).presign === "function" ? blob.stream() : blob;
}

/** The Content-Type and Content-Disposition a proxied 200 with `headers` would reach this client with. */
export function proxiedHeaders(request: Request, headers: Record<string, string>): { contentType?: string; disposition?: string } {
  // The app-wide hook relabels answers for the SDKs; run it on a stand-in 200 so both paths share one rule.
  const probe = new Response(null, { headers });
  forOfficialSdk(request, probe);
  const contentType = probe.headers.get("content-type") ?? undefined;
  const disposition = probe.headers.get("content-disposition") ?? undefined;
  return { ...(contentType ? { contentType } : {}), ...(disposition ? { disposition } : {}) };
}

/**
 * A 302 to a presigned GET when the operator asked for redirects and the store can presign, else null.
 * Call it only from routes whose official clients follow redirects (files content, run artifacts).
 */
export function redirectTo(ctx: Pick<AutomationContext, "config" | "blobs">, request: Request, sha256: string, headers: Record<string, string>): Response | null {
  const direct = ctx.blobs.direct;
  if (!ctx.config.s3Redirect || !direct) return null;
  const location = direct.getUrl(sha256, { expiresInS: REDIRECT_TTL_S, ...proxiedHeaders(request, headers) });
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
}

/** The whole blob as a 200, or the redirect (for routes whose clients follow one). */
export function blobResponse(ctx: Pick<AutomationContext, "config" | "blobs">, request: Request, sha256: string, blob: Blob, headers: Record<string, string>): Response {
  return redirectTo(ctx, request, sha256, headers) ?? streamResponse(blob, headers);
}

/** The whole blob as a 200 through the server, whatever --s3-redirect says (routes a client does not follow). */
export function streamResponse(blob: Blob, headers: Record<string, string>): Response {
  return new Response(responseBody(blob), { headers });
}
