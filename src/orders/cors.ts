// CORS for the browser web client, which may be served from another origin than the API. Tokens travel
// in the Authorization header, never in cookies, so allowing any origin exposes nothing.
export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "X-Total-Count, Link, Location, WWW-Authenticate, Retry-After",
};

/** The answer to a preflight `OPTIONS` request. */
export function preflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      "access-control-allow-methods": "GET, POST, PATCH, OPTIONS",
      "access-control-allow-headers": "Authorization, Content-Type",
      "access-control-max-age": "86400",
    },
  });
}
