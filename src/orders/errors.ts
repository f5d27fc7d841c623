// The order server's one error envelope. Spring-Boot style `{timestamp,status,error,message,path}` for
// the API; OAuth 2.0 (RFC 6749 §5.2) `{error,error_description}` for /oauth/token; and for 401/403 on
// protected routes both at once, because the web client reads Spring Security OAuth's `error` code there.
import { DomainError } from "../kernel/errors";
import type { Clock } from "../kernel/clock";
import { CORS_HEADERS } from "./cors";

const reasons: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
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
