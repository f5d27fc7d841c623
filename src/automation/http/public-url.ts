/**
 * The base of signed URLs the server hands out (upload sessions, artifact ZIP links): --public-url when
 * given, else the origin this request reached (its Host, and https when a proxy says so), so a remote
 * SDK is not sent to localhost, and a server started with --port 0 names the port it really has.
 */
export function publicUrlFor(config: { publicUrl: string; publicUrlFromRequest?: boolean }, request: Request): string {
  if (!config.publicUrlFromRequest) return config.publicUrl;
  const url = new URL(request.url);
  if (request.headers.get("x-forwarded-proto")?.split(",")[0].trim() === "https") url.protocol = "https:";
  return url.origin;
}
