// Typed errors of the client library, one per status family, each carrying the HTTP status, the
// server's request id and the raw `issues` envelope.

export interface ApiIssue {
  field: string;
  message: string;
  code: string;
  severity: "error" | "warning";
}

export interface ApiErrorEnvelope {
  issues: ApiIssue[];
  requestId: string;
  hint?: string;
}

export class AutomationError extends Error {
  /** HTTP status; 0 when no response arrived (timeout, network, configuration). */
  readonly status: number;
  readonly requestId?: string;
  /** The server's error body, when it sent one. */
  readonly envelope?: ApiErrorEnvelope;
  readonly issues: ApiIssue[];

  constructor(message: string, opts: { status: number; requestId?: string; envelope?: ApiErrorEnvelope }) {
    super(message);
    this.name = "AutomationError";
    this.status = opts.status;
    this.envelope = opts.envelope;
    this.requestId = opts.requestId ?? opts.envelope?.requestId;
    this.issues = opts.envelope?.issues ?? [];
  }
}

type Opts = { requestId?: string; envelope?: ApiErrorEnvelope };
const first = (o: Opts, fallback: string) => {
  const i = o.envelope?.issues?.[0];
  return i ? (i.field && i.field !== "<root>" ? `${i.field}: ${i.message}` : i.message) : fallback;
};

/** 400: the request did not validate; `issues` name the fields. */
export class ValidationError extends AutomationError {
  constructor(o: Opts = {}) {
    super(first(o, "validation error"), { status: 400, ...o });
    this.name = "ValidationError";
  }
}
/** 401: missing, unknown or revoked API key. */
export class AuthenticationError extends AutomationError {
  constructor(o: Opts = {}) {
    super(first(o, "missing or invalid API key"), { status: 401, ...o });
    this.name = "AuthenticationError";
  }
}
/** 403: the key lacks a scope (or a signed URL is invalid). */
export class ForbiddenError extends AutomationError {
  constructor(o: Opts = {}) {
    super(first(o, "forbidden"), { status: 403, ...o });
    this.name = "ForbiddenError";
  }
}
export class NotFoundError extends AutomationError {
  constructor(o: Opts = {}) {
    super(first(o, "not found"), { status: 404, ...o });
    this.name = "NotFoundError";
  }
}
export class ConflictError extends AutomationError {
  constructor(o: Opts = {}) {
    super(first(o, "conflict"), { status: 409, ...o });
    this.name = "ConflictError";
  }
}
/** 429 after the retries ran out; `retryAfter` in seconds from the last `Retry-After`. */
export class RateLimitError extends AutomationError {
  readonly retryAfter?: number;
  constructor(o: Opts & { retryAfter?: number } = {}) {
    super(first(o, "rate limit exceeded"), { status: 429, ...o });
    this.name = "RateLimitError";
    this.retryAfter = o.retryAfter;
  }
}
/** 5xx after the retries ran out. */
export class ServerError extends AutomationError {
  constructor(status: number, o: Opts = {}) {
    super(first(o, `server error ${status}`), { status, ...o });
    this.name = "ServerError";
  }
}
/** No answer within the per-request timeout (after retries). */
export class TimeoutError extends AutomationError {
  constructor(message = "request timed out") {
    super(message, { status: 0 });
    this.name = "TimeoutError";
  }
}

export function errorFor(status: number, o: Opts & { retryAfter?: number }): AutomationError {
  if (status === 400) return new ValidationError(o);
  if (status === 401) return new AuthenticationError(o);
  if (status === 403) return new ForbiddenError(o);
  if (status === 404) return new NotFoundError(o);
  if (status === 409) return new ConflictError(o);
  if (status === 429) return new RateLimitError(o);
  if (status >= 500) return new ServerError(status, o);
  return new AutomationError(first(o, `unexpected status ${status}`), { status, ...o });
}
