import { Elysia } from "elysia";
import { callerOf } from "../auth/guard";
import type { AuthService } from "../auth/service";
import { readBody } from "../body";
import { CORS_HEADERS } from "../cors";
import { priceToKopecks } from "../money";
import { parseInput } from "../validate";
import { CreateOrderBody } from "./model";
import { linkHeader, parsePage } from "./paging";
import type { OrderService } from "./service";
import type { OrderFilter } from "./store";
import { pathId } from "./ids";
import { andThen } from "../../kernel/maybe";

interface CachedList {
  version: number;
  json: string;
  /** The reply's headers, made once per cached reply (a Response copies them: the echo of the request id does not reach them). */
  headers: Headers;
  /** What the entry counts against LIST_CACHE_BYTES. */
  size: number;
}

/** Bytes of serialized lists kept; a page of 100 orders with long descriptions is ~250 KB. */
const LIST_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The list endpoints cache their serialized reply per filter and URL until the data version moves (any
 * write here, or a commit by another process on the same file): a repeated page costs no SQL. Bounded
 * in bytes, not entries, because URLs are the client's to vary and a page can be large.
 */
function listReplies(orders: OrderService) {
  const cache = new Map<string, CachedList>();
  let bytes = 0;
  const fill = async (key: string, version: number, filter: OrderFilter, request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const page = parsePage(url.searchParams);
    const p = await orders.page(filter, page);
    const link = linkHeader(url, page, p.total);
    const headers = new Headers({ "content-type": "application/json;charset=utf-8", "x-total-count": String(p.total), link, ...CORS_HEADERS });
    const size = p.json.length + link.length + key.length;
    const hit = { version, json: p.json, headers, size };
    const old = cache.get(key);
    if (old) {
      cache.delete(key);
      bytes -= old.size;
    }
    // Over the bound, the oldest replies go first (a Map iterates in insertion order), one by one until
    // this one fits: the rest stay warm, where dropping them all would make the next pages all misses.
    for (const [k, e] of cache) {
      if (bytes + size <= LIST_CACHE_BYTES) break;
      cache.delete(k);
      bytes -= e.size;
    }
    cache.set(key, hit);
    bytes += size;
    return new Response(hit.json, { headers: hit.headers });
  };
  // A hit on SQLite answers synchronously (its data version is read without a promise).
  return (filter: OrderFilter, request: Request): Response | Promise<Response> => {
    const key = `${JSON.stringify(filter)}|${request.url}`;
    return andThen(orders.dataVersion(), (version) => {
      const hit = cache.get(key);
      return hit && hit.version === version ? new Response(hit.json, { headers: hit.headers }) : fill(key, version, filter, request);
    });
  };
}

/** Protected routes read their body themselves, after authentication (see readBody), or not at all. */
const noParse = () => ({ parse: "none" }) as const;

export const orderRoutes = (auth: AuthService, orders: OrderService, bodyLimit: number) => {
  const list = listReplies(orders);
  return new Elysia({ name: "orders.orders" })
    // No async frame: a cached page on SQLite is answered synchronously (no promise on its path).
    .get("/orders", ({ request, set }) => andThen(callerOf(auth, request, set), (caller) => list(orders.waitingFilter(caller), request)))
    .get("/users/:id/orders", ({ request, set, params }) => andThen(callerOf(auth, request, set), (caller) => list(orders.userFilter(caller, pathId(params.id)), request)))
    .get("/orders/:id", async ({ request, set, params }) => orders.get(await callerOf(auth, request, set), pathId(params.id)))
    .post(
      "/orders",
      async ({ request, set }) => {
        const caller = await callerOf(auth, request, set);
        orders.checkCanPublish(caller);
        const input = parseInput(CreateOrderBody, await readBody(request, bodyLimit));
        const order = await orders.create(caller, { description: input.description, price: priceToKopecks(input.price) });
        set.status = 201;
        set.headers.location = `/orders/${order.id}`;
        return order;
      },
      noParse(),
    )
    .patch("/orders/:id/take", async ({ request, set, params }) => orders.take(await callerOf(auth, request, set), pathId(params.id)), noParse())
    .patch("/orders/:id/pass", async ({ request, set, params }) => orders.pass(await callerOf(auth, request, set), pathId(params.id)), noParse())
    .patch("/orders/:id/accept", async ({ request, set, params }) => orders.accept(await callerOf(auth, request, set), pathId(params.id)), noParse());
};
