import { Elysia } from "elysia";
import { authRoutes } from "./auth/routes";
import { AuthService } from "./auth/service";
import type { OrderConfig } from "./config";
import type { OrderStorage } from "./db/storage";
import { CORS_HEADERS, preflight } from "./cors";
import { handleError } from "./errors";
import { refuseUnstorable } from "./body";
import { observeHttp } from "../kernel/observe";
import { openApiDocument } from "./openapi";
import { orderRoutes } from "./orders/routes";
import { OrderService } from "./orders/service";
import { userRoutes } from "./users/routes";
import { UserService } from "./users/service";

/** The services behind the HTTP app, over one storage (either backend). */
export function orderServices(config: OrderConfig, storage: OrderStorage) {
  return {
    users: new UserService(storage.users, config.clock, config.password),
    auth: new AuthService(config, storage.users, storage.tokens, storage.throttle),
    tokens: storage.tokens,
    orders: new OrderService(storage.orders, config.clock, config.events),
  };
}

const HEALTH = JSON.stringify({ status: "ok" });
const HEALTH_HEADERS = { "content-type": "application/json;charset=utf-8", ...CORS_HEADERS };
const healthy = () => new Response(HEALTH, { headers: HEALTH_HEADERS });

export type OrderServices = ReturnType<typeof orderServices>;

/** The order server's HTTP app over an open database (and the services over it, when the caller needs them too). */
export function createOrderApp(config: OrderConfig, storage: OrderStorage, s: OrderServices = orderServices(config, storage)) {
  const doc = JSON.stringify(openApiDocument());
  const routes: { method: string; pattern: RegExp }[] = [];
  /** Methods that do have a route at `path` (for 405 vs 404). */
  const allowed = (path: string) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];

  // Elysia defaults to SO_REUSEPORT, which would let a second server silently share a busy port.
  // Bun's own router finds the route (observeHttp wraps each route's handler and the fallback fetch);
  // standardHostname off so Elysia's fallback still finds the path behind a short Host ("x").
  const app = new Elysia({ serve: { reusePort: false, development: false }, handler: { standardHostname: false } })
    .options("/*", () => preflight())
    // Replies built as Response objects (lists, errors, OpenAPI) carry CORS_HEADERS themselves: merging
    // headers into a finished Response is Elysia's slow path.
    .onAfterHandle(({ response, set }) => {
      if (!(response instanceof Response)) Object.assign(set.headers, CORS_HEADERS);
    })
    .onError(({ code, error, request }) => handleError(code, error, request, { clock: config.clock, logger: config.logger, bodyLimit: config.bodyLimit, allowed }))
    // A finished Response (body and headers made once): no serialization, no header merge per request.
    // SQLite answers its ping synchronously, and so does the route then (no promise on its path).
    .get("/health", () => {
      const pinged = storage.ping();
      return pinged ? pinged.then(healthy) : healthy();
    })
    .get("/openapi/json", () => new Response(doc, { headers: { "content-type": "application/json", ...CORS_HEADERS } }))
    // Before every route that takes input (after /health and the document, which take none): NUL in
    // the query (a `%00` in the URL: one string search per request) or in a parsed body is a 400
    // naming the field, not a 500 from PostgreSQL. A function with a block body:
    // Elysia awaits a hook whose source looks like it returns a call, an extra turn on every request.
    .onTransform({ as: "global" }, function refuseUnstorableInput({ request, body }) {
      refuseUnstorable(request.url, body);
    })
    .use(authRoutes(s.auth, config.bodyLimit))
    .use(userRoutes(s.auth, s.users, config.bodyLimit))
    .use(orderRoutes(s.auth, s.orders, config.bodyLimit));

  for (const r of app.routes) {
    if (r.method === "OPTIONS") continue;
    const pattern = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}/?$`);
    routes.push({ method: r.method, pattern });
  }
  return observeHttp(app, { log: config.logger, metrics: config.metrics, serveMetrics: config.serveMetrics });
}

export type OrderApp = ReturnType<typeof createOrderApp>;
