/**
 * Typed domain errors. Services throw these; each app's single `onError` maps them to its wire
 * envelope (Spring-style for orders, `issues` for automation). They never carry HTTP details beyond
 * the status a kind implies.
 */
export type ErrorKind =
  | "invalid"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "timeout"
  | "too_large"
  | "rate_limited"
  | "unavailable";

const statusOf: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  timeout: 408,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

export class DomainError extends Error {
  readonly kind: ErrorKind;
  /** Dotted path of the offending field, when one input field is to blame. */
  readonly field?: string;
  /** Machine-readable code for APIs that expose one (e.g. `artifacts_zip_too_large`). */
  readonly code?: string;
  /** Seconds, for `rate_limited`. */
  readonly retryAfter?: number;
  /** Further per-field problems (validation). */
  readonly issues?: { field: string; message: string; code?: string }[];

  constructor(
    kind: ErrorKind,
    message: string,
    opts: { field?: string; code?: string; retryAfter?: number; issues?: DomainError["issues"] } = {},
  ) {
    super(message);
    this.name = "DomainError";
    this.kind = kind;
    this.field = opts.field;
    this.code = opts.code;
    this.retryAfter = opts.retryAfter;
    this.issues = opts.issues;
  }

  get status(): number {
    return statusOf[this.kind];
  }
}

export const Invalid = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("invalid", message, opts);
export const Unauthorized = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("unauthorized", message, opts);
export const Forbidden = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("forbidden", message, opts);
export const NotFound = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("not_found", message, opts);
export const Conflict = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("conflict", message, opts);
export const TooLarge = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("too_large", message, opts);
/** The client stopped sending the body it announced (`--body-timeout`). */
export const TimedOut = (message: string, opts?: ConstructorParameters<typeof DomainError>[2]) =>
  new DomainError("timeout", message, opts);
export const RateLimited = (message: string, retryAfter: number) =>
  new DomainError("rate_limited", message, { retryAfter });

/** A mistake in how a command was invoked (unknown flag, bad value): one line, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** An expected failure at startup or in a command (port in use, bad config): one line, exit 1. */
export class FatalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FatalError";
  }
}
