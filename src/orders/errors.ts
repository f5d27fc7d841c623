// The order server's one error envelope. Spring-Boot style `{timestamp,status,error,message,path}` for
// the API; OAuth 2.0 (RFC 6749 §5.2) `{error,error_description}` for /oauth/token; and for 401/403 on
// protected routes both at once, because the web client reads Spring Security OAuth's `error` code there.
import { DomainError } from "../kernel/errors";
import { databaseUnavailable } from "../kernel/pg";
import type { Clock } from "../kernel/clock";
import type { Logger } from "../kernel/logger";
import { CORS_HEADERS } from "./cors";

const reasons: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

export const TOKEN_PATH = "/oauth/token";

export interface ErrorReply {
  status: number;
  message: string;
  /** OAuth error code (`invalid_grant`, `invalid_token`, `access_denied`...). */
  code?: string;
  headers?: Record<string, string>;
}

/** A domain error → status, message, OAuth code and headers. */
export function replyFor(err: DomainError): ErrorReply {
  const headers: Record<string, string> = {};
  if (err.kind === "rate_limited" && err.retryAfter !== undefined) headers["Retry-After"] = String(err.retryAfter);
  if (err.kind === "unauthorized" && err.code !== "invalid_client") {
    headers["WWW-Authenticate"] =
      err.code === "unauthorized" || !err.code
        ? 'Bearer realm="orders"'
        : `Bearer realm="orders", error="${err.code}", error_description="${err.message.replace(/"/g, "'")}"`;
  }
  if (err.code === "invalid_client") headers["WWW-Authenticate"] = 'Basic realm="oauth"';
  return { status: err.status, message: err.message, code: err.code, headers };
}

/** Builds the JSON response for `reply` at `path`. */
export function errorResponse(reply: ErrorReply, path: string, clock: Clock): Response {
  const headers: Record<string, string> = { "Content-Type": "application/json", ...CORS_HEADERS, ...reply.headers };
  if (path === TOKEN_PATH) {
    const error = reply.code ?? oauthCode(reply.status);
    headers["Cache-Control"] = "no-store";
    return new Response(JSON.stringify({ error, error_description: reply.message }), { status: reply.status, headers });
  }
  const body: Record<string, unknown> = {
    timestamp: clock.now().toISOString(),
    status: reply.status,
    error: reasons[reply.status] ?? "Error",
    message: reply.message,
    path,
  };
  if ((reply.status === 401 || reply.status === 403) && reply.code) {
    body.error = reply.code;
    body.error_description = reply.message;
  }
  return new Response(JSON.stringify(body), { status: reply.status, headers });
}

function oauthCode(status: number): string {
  if (status === 405) return "method_not_allowed";
  if (status === 401) return "invalid_client";
  if (status === 429) return "too_many_requests";
  if (status >= 500) return "server_error";
  return "invalid_request";
}

/**
 * The app's one `onError`: domain errors, unknown routes (404, or 405 with `Allow` when the path exists
 * for other methods), unparsable bodies (400, or 413 over the limit). Anything else is a bug: logged,
 * and answered 500 without details.
 */
export function handleError(
  code: string | number,
  error: unknown,
  request: Request,
  ctx: { clock: Clock; logger: Logger; bodyLimit: number; allowed(path: string): string[] },
): Response {
  const path = new URL(request.url).pathname;
  const reply = (r: ErrorReply) => errorResponse(r, path, ctx.clock);
  if (error instanceof DomainError) return reply(replyFor(error));
  if (code === "NOT_FOUND") {
    const allow = ctx.allowed(path);
    if (allow.length > 0) {
      return reply({ status: 405, message: `Request method '${request.method}' is not supported`, headers: { Allow: allow.join(", ") } });
    }
    return reply({ status: 404, message: `No endpoint ${request.method} ${path}` });
  }
  if (code === "PARSE") {
    // Elysia reports anything thrown while parsing (the body size check included) as a parse error.
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof DomainError) return reply(replyFor(cause));
    const length = Number(request.headers.get("content-length") ?? 0);
    if (length > ctx.bodyLimit) return reply({ status: 413, message: `Request body is ${length} bytes; the limit is ${ctx.bodyLimit}` });
    return reply({ status: 400, message: "Malformed request body: not valid JSON or form data" });
  }
  if (code === "INVALID_COOKIE_SIGNATURE" || code === "VALIDATION" || code === "INVALID_FILE_TYPE") {
    return reply({ status: 400, message: describe(error) });
  }
  if (typeof code === "number" && code < 500) return reply({ status: code, message: describe(error) });
  if (databaseUnavailable(error)) {
    // PostgreSQL stopped, restarting or unreachable: the pool reconnects on its own, so a retry will do.
    ctx.logger.warn("database unavailable", { path, method: request.method, error: (error as Error).message });
    return reply({ status: 503, message: "The database is unavailable; retry shortly", headers: { "Retry-After": "1" } });
  }
  if ((error as { code?: unknown })?.code === "SQLITE_BUSY") {
    // Another process held the write lock past the busy timeout: a retry will do.
    return reply({ status: 503, message: "The database is busy; retry shortly", headers: { "Retry-After": "1" } });
  }
  ctx.logger.error("unexpected error", {
    path,
    method: request.method,
    error: error instanceof Error ? (error.stack ?? error.message) : describe(error),
  });
  return reply({ status: 500, message: "Internal error; it has been logged" });
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && "response" in error) return String((error as { response: unknown }).response);
  return String(error);
}

