// The automation API's single error shape: every non-2xx body is
// {issues: [{field, message, code, severity}], requestId, hint?}.
import { DomainError } from "../../kernel/errors";

export interface Issue {
  field: string;
  message: string;
  code: string;
  severity: "error" | "warning";
}

export interface Envelope {
  issues: Issue[];
  requestId: string;
  hint?: string;
}

const defaultCode: Record<DomainError["kind"], string> = {
  invalid: "invalid_value",
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  not_found: "not_found",
  conflict: "conflict",
  timeout: "timeout",
  too_large: "too_large",
  rate_limited: "rate_limited",
  unavailable: "unavailable",
};

/** An HTTP-level refusal that is not a domain rule (405, 415): thrown by the app's own guards. */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly hint?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function issue(field: string, message: string, code: string): Issue {
  return { field: field || "<root>", message, code, severity: "error" };
}

/** Issues for a domain error: its own per-field list when it has one, else one issue. */
export function domainIssues(err: DomainError): Issue[] {
  const code = err.code ?? defaultCode[err.kind];
  if (err.issues?.length) return err.issues.map((i) => issue(i.field, i.message, i.code ?? code));
  return [issue(err.field ?? "<root>", err.message, code)];
}

/** More issues than this help nobody (a pathological YAML can yield thousands): the rest are counted. */
export const MAX_ISSUES = 100;

export function envelopeResponse(status: number, requestId: string, issues: Issue[], extra: { hint?: string; headers?: Record<string, string> } = {}): Response {
  const seen = new Set<string>();
  const distinct = issues.filter((i) => {
    const key = `${i.field}\u0000${i.code}\u0000${i.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  const body: Envelope = { issues: distinct.slice(0, MAX_ISSUES), requestId };
  const hidden = distinct.length - body.issues.length;
  const hint = [extra.hint, hidden > 0 ? `${hidden} more issue(s) not shown; fix these first` : undefined].filter(Boolean).join("; ");
  if (hint) body.hint = hint;
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId, ...extra.headers },
  });
}

/** The envelope as an OpenAPI (JSON) schema, for the routes' documented error answers. */
export const envelopeSchema: Record<string, unknown> = {
  type: "object",
  required: ["issues", "requestId"],
  properties: {
    issues: {
      type: "array",
      items: {
        type: "object",
        required: ["field", "message", "code", "severity"],
        properties: { field: { type: "string" }, message: { type: "string" }, code: { type: "string" }, severity: { type: "string", enum: ["error", "warning"] } },
      },
    },
    requestId: { type: "string" },
    hint: { type: "string" },
  },
};
