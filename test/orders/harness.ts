// A fresh order app over an in-memory database, with a settable clock and cheap password hashing.
import { ManualClock } from "../../src/kernel/clock";
import { createOrderApp } from "../../src/orders/app";
import { DEMO_CLIENT, type OrderConfig, orderConfig } from "../../src/orders/config";
import { openOrdersDb, type OrdersDb } from "../../src/orders/db/open";

export const CLIENT = DEMO_CLIENT;
/** Argon2id at its cheapest: tests measure behaviour, not hashing cost. */
export const CHEAP = { memoryCost: 64, timeCost: 1 };

export interface Reply {
  status: number;
  headers: Headers;
  // biome-ignore lint: test code reads arbitrary JSON
  body: any;
  text: string;
}

export function harness(over: Partial<OrderConfig> = {}) {
  const clock = new ManualClock("2026-11-22T09:30:12Z");
  const db: OrdersDb = openOrdersDb(":memory:");
  const config = orderConfig({ clients: [CLIENT], clock, password: CHEAP, ...over });
  const app = createOrderApp(config, db);

  async function call(method: string, path: string, opts: { token?: string; json?: unknown; body?: RequestInit["body"]; headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] ??= "application/json";
    }
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  async function register(username: string, userType: "Customer" | "Performer", password = "pass") {
    const r = await call("POST", "/users", { json: { username, password, userType } });
    if (r.status !== 201) throw new Error(`register ${username}: ${r.status} ${r.text}`);
    return r.body as { id: number; username: string; money: number };
  }

  async function token(username: string, password = "pass"): Promise<string> {
    const q = new URLSearchParams({ grant_type: "password", username, password, client_id: CLIENT.id, client_secret: CLIENT.secret });
    const r = await call("POST", `/oauth/token?${q}`);
    if (r.status !== 200) throw new Error(`token ${username}: ${r.status} ${r.text}`);
    return r.body.access_token as string;
  }

  /** Registers and logs in; returns id and token. */
  async function user(username: string, userType: "Customer" | "Performer") {
    const u = await register(username, userType);
    return { id: u.id, token: await token(username) };
  }

  return { app, db, clock, config, call, register, token, user };
}

/** Asserts the Spring-Boot error envelope and returns its message. */
export function springError(r: Reply, status: number, path: string): string {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  const b = r.body;
  if (!b || b.status !== status || typeof b.timestamp !== "string" || Number.isNaN(Date.parse(b.timestamp)) || b.path !== path || typeof b.message !== "string" || typeof b.error !== "string") {
    throw new Error(`not a Spring-style error body: ${r.text}`);
  }
  return b.message as string;
}
