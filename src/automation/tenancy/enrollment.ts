// What a session may do while its tenant requires a second factor the person has not confirmed yet
// (SessionLookup.enrollTotp): enroll and confirm one, see who it is, and sign out. Everything else
// answers 403 `totp_enrollment_required`. Signing in still works, so nobody is locked out by the owner
// turning the requirement on; they are only held at the enrollment until it is done. Imports nothing:
// tenancy/session.ts, beside it, asks it on every cookie request.

const ALLOWED = new Set([
  "GET /v1/auth/check",
  // The console learns its CSRF token and role here after a reload, and lists the sessions it may end.
  "GET /v1/auth/sessions/current",
  "GET /v1/auth/sessions",
  "GET /v1/auth/totp",
  "POST /v1/auth/totp/enroll",
  "POST /v1/auth/totp/confirm",
  "DELETE /v1/auth/sessions/current",
  "DELETE /v1/auth/sessions",
]);

/** Whether a session held at enrollment may make this request (`path` without the query). */
export function allowedWhileEnrolling(method: string, path: string): boolean {
  // The same routes are served under /api/v1 (app.ts's API_PREFIXES).
  const route = path.replace(/\/+$/, "").replace(/^\/api\/v1\//, "/v1/");
  return ALLOWED.has(`${method} ${route}`);
}
