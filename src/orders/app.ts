import { Elysia } from "elysia";
import { authRoutes } from "./auth/routes";
import { AuthService } from "./auth/service";
import { TokenStore } from "./auth/store";
import type { OrderConfig } from "./config";
import { type OrdersDb, pingOrdersDb } from "./db/open";
import { DataVersion } from "./db/version";
import { CORS_HEADERS, preflight } from "./cors";
import { handleError } from "./errors";
import { openApiDocument } from "./openapi";
import { orderRoutes } from "./orders/routes";
import { OrderService } from "./orders/service";
import { OrderStore } from "./orders/store";
import { userRoutes } from "./users/routes";
import { UserService } from "./users/service";
import { UserStore } from "./users/store";

/** The stores and services behind the HTTP app, wired over one database. */
export function orderServices(config: OrderConfig, db: OrdersDb) {
  const version = new DataVersion(db.$client);
  const userStore = new UserStore(db, version);
  const orderStore = new OrderStore(db, version);
  const tokens = new TokenStore(db, version);
  return {
    users: new UserService(userStore, config.clock, config.password),
    auth: new AuthService(config, userStore, tokens),
    tokens,
    orders: new OrderService(orderStore, config.clock),
    userStore,
    orderStore,
  };
}

export type OrderServices = ReturnType<typeof orderServices>;

/** The order server's HTTP app over an open database (and the services over it, when the caller needs them too). */
export function createOrderApp(config: OrderConfig, db: OrdersDb, s: OrderServices = orderServices(config, db)) {
  const doc = JSON.stringify(openApiDocument());
  const routes: { method: string; pattern: RegExp }[] = [];
  /** Methods that do have a route at `path` (for 405 vs 404). */
  const allowed = (path: string) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];

  // Elysia defaults to SO_REUSEPORT, which would let a second server silently share a busy port.
  const app = new Elysia({ serve: { reusePort: false, development: false } })
    .options("/*", () => preflight())
    // Replies built as Response objects (lists, errors, OpenAPI) carry CORS_HEADERS themselves: merging
    // headers into a finished Response is Elysia's slow path.
    .onAfterHandle(({ response, set }) => {
      if (!(response instanceof Response)) Object.assign(set.headers, CORS_HEADERS);
    })
    .onError(({ code, error, request }) => handleError(code, error, request, { clock: config.clock, logger: config.logger, bodyLimit: config.bodyLimit, allowed }))
    .get("/health", () => {
      pingOrdersDb(db);
      return { status: "ok" };
    })
    .get("/openapi/json", () => new Response(doc, { headers: { "content-type": "application/json", ...CORS_HEADERS } }))
    .use(authRoutes(s.auth, config.bodyLimit))
    .use(userRoutes(s.auth, s.users, config.bodyLimit))
    .use(orderRoutes(s.auth, s.orders, config.bodyLimit));

  for (const r of app.routes) {
    if (r.method === "OPTIONS") continue;
    const pattern = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}/?$`);
    routes.push({ method: r.method, pattern });
  }
  return app;
}

export type OrderApp = ReturnType<typeof createOrderApp>;
