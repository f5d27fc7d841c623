import { Elysia } from "elysia";
import { Invalid } from "../../kernel/errors";
import type { AuthService } from "../auth/service";
import { CORS_HEADERS } from "../cors";
import type { OrderService } from "./service";
import type { OrderFilter } from "./store";
import { linkHeader, parsePage } from "./paging";

/** A path id: a positive integer, else 400 naming the parameter. */
export function pathId(raw: string, field = "id"): number {
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw Invalid(`${field} must be a positive integer (got "${raw}")`, { field });
  return Number(raw);
}

interface CachedList {
  version: number;
  json: string;
  total: string;
  link: string;
}

/**
 * The list endpoints cache their serialized reply per filter and URL until the data version moves (any
 * write here, or a commit by another process on the same file): a repeated page costs no SQL.
 */
function listReplies(orders: OrderService) {
  const cache = new Map<string, CachedList>();
  return (filter: OrderFilter, request: Request): Response => {
    const key = `${JSON.stringify(filter)}|${request.url}`;
    const version = orders.dataVersion();
    let hit = cache.get(key);
    if (!hit || hit.version !== version) {
      const url = new URL(request.url);
      const page = parsePage(url.searchParams);
      const p = orders.page(filter, page);
      hit = { version, json: JSON.stringify(p.items), total: String(p.total), link: linkHeader(url, page, p.total) };
      if (cache.size >= 1000) cache.clear();
      cache.set(key, hit);
    }
    return new Response(hit.json, {
      headers: { "content-type": "application/json;charset=utf-8", "x-total-count": hit.total, link: hit.link, ...CORS_HEADERS },
    });
  };
}

export const orderRoutes = (auth: AuthService, orders: OrderService) => {
  const list = listReplies(orders);
  return new Elysia({ name: "orders.orders" })
    .get("/orders", ({ request }) => list(orders.waitingFilter(auth.authenticate(request.headers.get("authorization"))), request))
    .get("/users/:id/orders", ({ request, params }) => {
      const caller = auth.authenticate(request.headers.get("authorization"));
      return list(orders.userFilter(caller, pathId(params.id)), request);
    })
    .get("/orders/:id", ({ request, params }) => orders.get(auth.authenticate(request.headers.get("authorization")), pathId(params.id)))
    .post("/orders", ({ request, body, set }) => {
      const order = orders.create(auth.authenticate(request.headers.get("authorization")), body);
      set.status = 201;
      set.headers.location = `/orders/${order.id}`;
      return order;
    })
    .patch("/orders/:id/take", ({ request, params }) => orders.take(auth.authenticate(request.headers.get("authorization")), pathId(params.id)))
    .patch("/orders/:id/pass", ({ request, params }) => orders.pass(auth.authenticate(request.headers.get("authorization")), pathId(params.id)))
    .patch("/orders/:id/accept", ({ request, params }) =>
      orders.accept(auth.authenticate(request.headers.get("authorization")), pathId(params.id)),
    );
};
