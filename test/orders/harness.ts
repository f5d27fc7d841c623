// A fresh order app over a fresh database — in-memory SQLite, or a new database on the test PostgreSQL
// server (test/support/postgres.ts) — with a settable clock and cheap password hashing.
import { afterEach, beforeAll, describe } from "bun:test";
import { ManualClock } from "../../src/kernel/clock";
import { createOrderApp } from "../../src/orders/app";
import { DEMO_CLIENT, type OrderConfig, orderConfig } from "../../src/orders/config";
import { openOrdersDb, sqliteStorage } from "../../src/orders/db/sqlite";
import { openOrderStorage } from "../../src/orders/db/open";
import type { OrderStorage } from "../../src/orders/db/storage";
import { freshPostgresDb } from "../support/postgres";

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

export type Backend = "sqlite" | "postgres";
/** Every order test runs on both backends. */
export const BACKENDS: Backend[] = ["sqlite", "postgres"];
let current: Backend = "sqlite";
const open: OrderStorage[] = [];

/** `describe(name, fn)` once per backend; `harness()` inside it opens that backend. */
export function forEachBackend(name: string, fn: (backend: Backend) => void): void {
  describe.each(BACKENDS)(`${name} [%s]`, (backend) => {
    beforeAll(() => {
      current = backend;
    });
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });
    fn(backend);
  });
}

/** A new, empty, migrated storage on `backend`: in-memory SQLite or a new PostgreSQL database. */
export async function freshStorage(backend: Backend = current): Promise<OrderStorage> {
  const storage = backend === "sqlite" ? sqliteStorage(openOrdersDb(":memory:")) : await openOrderStorage(await freshPostgresDb(), { max: 4 });
  open.push(storage);
  return storage;
}

export type Harness = Awaited<ReturnType<typeof harness>>;

export async function harness(over: Partial<OrderConfig> = {}, backend: Backend = current) {
  const clock = new ManualClock("2026-11-22T09:30:12Z");
  const storage = await freshStorage(backend);
  const config = orderConfig({ clients: [CLIENT], clock, password: CHEAP, ...over });
  const app = createOrderApp(config, storage);
  /** Rows of a read query in SQL both backends speak; bigint columns come back as numbers. */
  const sql = async <T = Record<string, number>>(text: string): Promise<T[]> => (await storage.query<Record<string, unknown>>(text)).map(numbers) as T[];

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

  return { app, storage, backend, sql, clock, config, call, register, token, user };
}

/** PostgreSQL returns int8 and numeric as strings: turn numeric-looking strings back into numbers. */
function numbers(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : typeof v === "bigint" ? Number(v) : v;
  return out;
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
