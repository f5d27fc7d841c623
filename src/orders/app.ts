import { Elysia } from "elysia";
import { DomainError, TooLarge } from "../kernel/errors";
import { authRoutes } from "./auth/routes";
import { AuthService } from "./auth/service";
import { TokenStore } from "./auth/store";
import type { OrderConfig } from "./config";
import type { OrdersDb } from "./db/open";
import { DataVersion } from "./db/version";
import { CORS_HEADERS, preflight } from "./cors";
import { errorResponse, replyFor } from "./errors";
import { openApiDocument } from "./openapi";
import { orderRoutes } from "./orders/routes";
import { OrderService } from "./orders/service";
import { OrderStore } from "./orders/store";
import { userRoutes } from "./users/routes";
import { UserService } from "./users/service";
import { UserStore } from "./users/store";

/** The services behind the HTTP app (the demo seeder and tests use them directly). */
export function orderServices(config: OrderConfig, db: OrdersDb) {
  const version = new DataVersion(db.$client);
  const userStore = new UserStore(db, version);
  const orderStore = new OrderStore(db, version);
  return {
    users: new UserService(userStore, config.clock, config.password),
    auth: new AuthService(config, userStore, new TokenStore(db)),
    orders: new OrderService(orderStore, config.clock),
    userStore,
    orderStore,
  };
}

/** The order server's HTTP app over an open database. */
export function createOrderApp(config: OrderConfig, db: OrdersDb) {
  const s = orderServices(config, db);
  const doc = JSON.stringify(openApiDocument());
  const routes: { method: string; pattern: RegExp }[] = [];

  // Elysia defaults to SO_REUSEPORT, which would let a second server silently share a busy port.
  const app = new Elysia({ serve: { reusePort: false, development: false } })
    .options("/*", () => preflight())
    // Replies built as Response objects (lists, errors, OpenAPI) carry CORS_HEADERS themselves: merging
    // headers into a finished Response is Elysia's slow path.
    .onAfterHandle(({ response, set }) => {
      if (!(response instanceof Response)) Object.assign(set.headers, CORS_HEADERS);
    })
    // Only requests that carry a body reach the parse hook, so GETs pay nothing for the size check.
    .onParse(({ request }) => {
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > config.bodyLimit) throw TooLarge(`Request body is ${length} bytes; the limit is ${config.bodyLimit}`);
    })
    .onError(({ code, error, request }) => {
      const path = new URL(request.url).pathname;
      if (error instanceof DomainError) return errorResponse(replyFor(error), path, config.clock);
      if (code === "NOT_FOUND") {
        const allow = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
        if (allow.length > 0) {
          return errorResponse(
            { status: 405, message: `Request method '${request.method}' is not supported`, headers: { Allow: allow.join(", ") } },
            path,
            config.clock,
          );
        }
        return errorResponse({ status: 404, message: `No endpoint ${request.method} ${path}` }, path, config.clock);
      }
      if (code === "PARSE") {
        // Elysia reports anything thrown while parsing (our size check included) as a parse error.
        const cause = (error as { cause?: unknown }).cause;
        if (cause instanceof DomainError) return errorResponse(replyFor(cause), path, config.clock);
        const length = Number(request.headers.get("content-length") ?? 0);
        if (length > config.bodyLimit) {
          return errorResponse({ status: 413, message: `Request body is ${length} bytes; the limit is ${config.bodyLimit}` }, path, config.clock);
        }
        return errorResponse({ status: 400, message: "Malformed request body: not valid JSON or form data" }, path, config.clock);
      }
      if (code === "INVALID_COOKIE_SIGNATURE" || code === "VALIDATION" || code === "INVALID_FILE_TYPE") {
        return errorResponse({ status: 400, message: describe(error) }, path, config.clock);
      }
      if (typeof code === "number" && code < 500) {
        return errorResponse({ status: code, message: describe(error) }, path, config.clock);
      }
      config.logger.error("unexpected error", { path, method: request.method, error: error instanceof Error ? (error.stack ?? error.message) : describe(error) });
      return errorResponse({ status: 500, message: "Internal error; it has been logged" }, path, config.clock);
    })
    .get("/health", () => {
      db.$client.query("SELECT 1").get();
      return { status: "ok" };
    })
    .get("/openapi/json", () => new Response(doc, { headers: { "content-type": "application/json", ...CORS_HEADERS } }))
    .use(authRoutes(s.auth))
    .use(userRoutes(s.auth, s.users))
    .use(orderRoutes(s.auth, s.orders));

  for (const r of app.routes) {
    if (r.method === "OPTIONS") continue;
    const pattern = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}/?$`);
    routes.push({ method: r.method, pattern });
  }
  return app;
}

export type OrderApp = ReturnType<typeof createOrderApp>;

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && "response" in error) return String((error as { response: unknown }).response);
  return String(error);
}
