import { Elysia } from "elysia";
import { Invalid } from "../../kernel/errors";
import type { AuthService } from "../auth/service";
import type { OrderService, Page } from "./service";
import { linkHeader, parsePage } from "./paging";

/** A path id: a positive integer, else 400 naming the parameter. */
export function pathId(raw: string, field = "id"): number {
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw Invalid(`${field} must be a positive integer (got "${raw}")`, { field });
  return Number(raw);
}

export const orderRoutes = (auth: AuthService, orders: OrderService) =>
  new Elysia({ name: "orders.orders" })
    .get("/orders", ({ request, headers, set }) => {
      const caller = auth.authenticate(headers.authorization);
      const url = new URL(request.url);
      const page = parsePage(url.searchParams);
      return paged(orders.waiting(caller, page), url, page, set.headers);
    })
    .get("/users/:id/orders", ({ request, headers, params, set }) => {
      const caller = auth.authenticate(headers.authorization);
      const userId = pathId(params.id);
      const url = new URL(request.url);
      const page = parsePage(url.searchParams);
      return paged(orders.ofUser(caller, userId, page), url, page, set.headers);
    })
    .get("/orders/:id", ({ headers, params }) => orders.get(auth.authenticate(headers.authorization), pathId(params.id)))
    .post("/orders", ({ headers, body, set }) => {
      const order = orders.create(auth.authenticate(headers.authorization), body);
      set.status = 201;
      set.headers.location = `/orders/${order.id}`;
      return order;
    })
    .patch("/orders/:id/take", ({ headers, params }) => orders.take(auth.authenticate(headers.authorization), pathId(params.id)))
    .patch("/orders/:id/pass", ({ headers, params }) => orders.pass(auth.authenticate(headers.authorization), pathId(params.id)))
    .patch("/orders/:id/accept", ({ headers, params }) =>
      orders.accept(auth.authenticate(headers.authorization), pathId(params.id)),
    );

function paged(p: Page, url: URL, page: ReturnType<typeof parsePage>, headers: Record<string, string | number>) {
  headers["x-total-count"] = String(p.total);
  headers.link = linkHeader(url, page, p.total);
  return p.items;
}
