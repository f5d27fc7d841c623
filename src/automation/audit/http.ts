// The one mechanism that feeds the audit trail: a wrap around every request of the app (as observeHttp
// is) that, once a state-changing API request (POST, PUT, PATCH, DELETE under /v1 or /api/v1 that
// matched a route) has its answer, queues an entry: who (the request's principal, or what the route
// noted), the action and resource from the route, the outcome from the final status (errors included).
// The entry is written after the response by the context's AuditWriter; the response never waits.
// Nothing here rejects: an entry that cannot be gathered would be lost.
import type { AnyElysia } from "elysia";
import { once, pathOf, requestIdOf, routeTemplates } from "../../kernel/observe";
import type { AutomationContext } from "../context";
import { authOf, settledAuthOf, type Auth } from "../tenancy/auth";
import { actionOf, auditOf, outcomeOf, resourceOf } from "./service";
import { type ActorType, type AuditInput, NO_TENANT } from "./store";
import { newId } from "../../kernel/ids";
import { andThen } from "../../kernel/maybe";

/** What a route knows that the principal does not say (the sign-in route: who tried, who got in). */
export interface AuditNote {
  tenantId?: string | null;
  actor?: { type: ActorType; id: string | null; name: string | null };
  /** An attempted e-mail: when no tenant is noted, the entry goes to that user's first tenant (none when unknown). */
  email?: string;
}

// What a route noted and the id a create's handler answered with (its resource, noted before the
// answer is serialized) ride on the request itself: a symbol-keyed property costs less on every request
// than a WeakMap entry (as observe.ts keeps the request id).
const NOTE = Symbol("auditNote");
const CREATED = Symbol("auditCreated");
type Noted = Request & { [NOTE]?: AuditNote; [CREATED]?: string };

/**
 * An onAfterHandle hook (app.ts): remembers the `id` of what a POST's handler returned, so the entry of
 * a create names what it made without reading the serialized answer again.
 */
export function noteAnswer(request: Request, value: unknown): void {
  if (request.method !== "POST" || value === null || typeof value !== "object") return;
  const id = (value as { id?: unknown }).id;
  if (typeof id === "string") (request as Noted)[CREATED] = id;
}

/** Adds to what the request's audit entry says (later notes win field by field). */
export function noteAudit(request: Request, note: AuditNote): void {
  const had = (request as Noted)[NOTE];
  (request as Noted)[NOTE] = had ? { ...had, ...note } : note;
}

const CHANGES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const apiPath = (path: string) => path.startsWith("/v1/") || path.startsWith("/api/v1/");

/**
 * Wraps `app` so every state-changing API request is recorded. Call it once every route is
 * registered (it reads the route table), before observeHttp (which then wraps this).
 */
export function auditHttp<A extends AnyElysia>(app: A, ctx: AutomationContext): A {
  const template = routeTemplates(app.routes);
  const writer = auditOf(ctx);
  /** Queues the entry of an answered request, when it is one the trail records. */
  const answered = (request: Request, response: Response): Response => {
    // A GET is recorded only when its route asked to be (the demo's sign-in link, a GET that signs in).
    if (!CHANGES.has(request.method) && (request as Noted)[NOTE] === undefined) return response;
    const path = pathOf(request.url);
    if (!apiPath(path)) return response;
    // No route, nothing attempted on anything: an unknown path is not an act (and would let anyone flood the trail).
    const route = template(request.method, path);
    if (!route) return response;
    const at = ctx.clock.now().toISOString();
    let address: string | null = null;
    try {
      address = app.server?.requestIP(request)?.address ?? null;
    } catch {
      address = null;
    }
    writer.push(gather(ctx, request, response.status, route, path, at, address));
    return response;
  };
  // Not an async function (as observeHttp's): an answer given synchronously is passed on synchronously,
  // a later one costs one `then`. A handler that throws is observeHttp's to see (Elysia answers errors
  // itself, so that is a fault in the app, not a request to record).
  const wrap = (inner: (request: Request) => unknown) => (request: Request): Response | Promise<Response> => {
    return andThen(inner(request) as Response | Promise<Response>, (response) => answered(request, response));
  };
  app.wrap(once(wrap) as unknown as Parameters<A["wrap"]>[0]);
  return app;
}

function actorOf(auth: Auth | undefined): NonNullable<AuditNote["actor"]> {
  if (!auth) return { type: "anonymous", id: null, name: null };
  if (auth.person) return { type: "user", id: auth.person.userId, name: auth.person.email };
  return { type: "key", id: auth.keyId, name: auth.keyName };
}

/**
 * The entry of an answered request. Synchronous when nothing is left to wait for (the principal, when
 * asked for, has settled: the usual case once the answer is out), else a promise (a principal still
 * resolving, a sign-in's tried e-mail to look up).
 */
function gather(ctx: AutomationContext, request: Request, status: number, route: string, path: string, at: string, address: string | null): AuditInput | Promise<AuditInput> {
  const note = (request as Noted)[NOTE];
  const asked = authOf(request);
  const settled = asked ? settledAuthOf(request) : null;
  if (settled === undefined) return gatherLater(ctx, request, status, route, path, at, address, note, asked);
  const auth = settled ?? undefined;
  if (note?.tenantId === undefined && !auth && note?.email) return gatherLater(ctx, request, status, route, path, at, address, note, undefined);
  return entry(request, status, route, path, at, address, note, auth, note?.tenantId ?? auth?.tenantId ?? NO_TENANT);
}

async function gatherLater(
  ctx: AutomationContext,
  request: Request,
  status: number,
  route: string,
  path: string,
  at: string,
  address: string | null,
  note: AuditNote | undefined,
  asked: Promise<Auth> | undefined,
): Promise<AuditInput> {
  let auth: Auth | undefined;
  if (asked) {
    try {
      auth = await asked;
    } catch {
      auth = undefined; // refused: the entry is anonymous
    }
  }
  let tenantKey = note?.tenantId ?? auth?.tenantId ?? NO_TENANT;
  if (note?.tenantId === undefined && !auth && note?.email) {
    // Never rejects (the writer would lose the entry): a failed lookup leaves it in the chain without tenant.
    try {
      const user = await ctx.storage.people.findUser(note.email);
      if (user) tenantKey = (await ctx.storage.people.memberships(user.id))[0]?.tenantId ?? NO_TENANT;
    } catch {
      tenantKey = NO_TENANT;
    }
  }
  return entry(request, status, route, path, at, address, note, auth, tenantKey);
}

/**
 * A text field as the trail keeps it: a NUL (which a path id such as `/v1/automations/a%00b/versions`
 * carries; such a request is refused, and recorded) becomes U+FFFD. PostgreSQL refuses NUL in text,
 * and one such value failed its whole batch, losing the other requests' entries. Both backends store
 * and hash the same value.
 */
const kept = (s: string | null): string | null => (s !== null && s.includes("\0") ? s.replaceAll("\0", "\uFFFD") : s);

function entry(request: Request, status: number, route: string, path: string, at: string, address: string | null, note: AuditNote | undefined, auth: Auth | undefined, tenantKey: string | null): AuditInput {
  // A create without an id in its path: the id its answer carries is the resource.
  const createdId = status < 300 && !route.includes(":") ? (request as Noted)[CREATED] : undefined;
  const actor = note?.actor ?? actorOf(auth);
  const resource = resourceOf(route, path, createdId);
  return {
    id: newId("aud"),
    at,
    tenantKey: tenantKey ?? NO_TENANT,
    actorType: actor.type,
    actorId: actor.id,
    actorName: kept(actor.name),
    action: actionOf(request.method, route),
    resourceType: kept(resource.type),
    resourceId: kept(resource.id),
    requestId: requestIdOf(request),
    address,
    outcome: outcomeOf(status),
    status,
  };
}
