// Fault: the PostgreSQL server behind a compiled order-server is stopped under a steady load, then
// started again. While it is down every request that needs it answers 503 with Retry-After in the
// Spring-style envelope (never a 500, never a hang); once it is back the same order-server process
// serves again, with no restart. Afterwards money is conserved and no order changed state twice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { DEMO_CLIENT, invariantProblems, type Remote, remote, sqlQuery } from "../orders/remote";
import { startPostgres, type TestPostgres } from "../support/postgres";
import { ensureBuilt, type Server, startServer } from "./support";

let pg: TestPostgres;
let server: Server | undefined;
let db: SQL | undefined;
const env = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`, ORDER_PROFILE: undefined, ORDER_DB: undefined, LOG_LEVEL: "warn" };

beforeAll(async () => {
  pg = await startPostgres();
  const bin = await ensureBuilt("order-server");
  server = await startServer([bin, "--host", "127.0.0.1", "--db", pg.url()], { env });
});
afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  await db?.close();
  await pg?.stop();
});

interface Reply {
  at: number;
  ms: number;
  status: number;
  retryAfter: string | null;
  // biome-ignore lint: arbitrary JSON
  body: any;
}

/** One call, timed; a request the server never answers within 15 s counts as status 0. */
async function timed(api: Remote, replies: Reply[], method: string, path: string, opts: { token?: string; json?: unknown } = {}): Promise<Reply> {
  const at = Date.now();
  const r = await Promise.race([
    api.call(method, path, opts),
    Bun.sleep(15_000).then(() => ({ status: 0, headers: new Headers(), body: "no answer within 15 s" })),
  ]);
  const reply = { at, ms: Date.now() - at, status: r.status, retryAfter: r.headers.get("retry-after"), body: r.body };
  replies.push(reply);
  return reply;
}

/**
 * A customer/performer pair running create → take → pass → accept as a client that honours 503 +
 * Retry-After would: a step answered 503 is sent again after a pause; 409 on a retried step means the
 * first attempt did commit (the answer was lost), which the check at the end accounts for.
 */
async function cycles(api: Remote, c: string, p: string, replies: Reply[], stop: { now: boolean }, accepted: number[]): Promise<void> {
  const step = async (method: string, path: string, opts: { token: string; json?: unknown }) => {
    for (let attempt = 0; ; attempt++) {
      const r = await timed(api, replies, method, path, opts);
      if (r.status !== 503 || stop.now) return { ...r, retried: attempt > 0 };
      await Bun.sleep(100);
    }
  };
  let n = 0;
  while (!stop.now) {
    const o = await step("POST", "/orders", { token: c, json: { description: `pg-fault ${n++}`, price: 1.25 } });
    if (o.status !== 201) continue;
    const id = o.body.id as number;
    for (const [who, action] of [[p, "take"], [p, "pass"], [c, "accept"]] as const) {
      const r = await step("PATCH", `/orders/${id}/${action}`, { token: who });
      if (r.status === 200 && action === "accept") accepted.push(id);
      if (r.status !== 200 && !(r.status === 409 && r.retried)) break;
    }
  }
}

test("PostgreSQL stopped under load: 503 + Retry-After while down, served again without a restart, money conserved", async () => {
  const api = remote(server!.url);
  const pairs: { c: string; p: string }[] = [];
  for (let i = 0; i < 4; i++) {
    await api.register(`pgf-c${i}`, "Customer");
    await api.register(`pgf-p${i}`, "Performer");
    pairs.push({ c: await api.token(`pgf-c${i}`), p: await api.token(`pgf-p${i}`) });
  }
  const replies: Reply[] = [];
  const accepted: number[] = [];
  const stop = { now: false };
  const load = pairs.map(({ c, p }) => cycles(api, c, p, replies, stop, accepted));

  await Bun.sleep(1500);
  const stoppedAt = Date.now();
  await pg.pause();
  const downAt = Date.now();
  await Bun.sleep(3000);
  // Logins and registrations need the database too.
  const login = await fetch(`${api.base}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", username: "pgf-c0", password: "pass", client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret }),
  });
  const register = await timed(api, [], "POST", "/users", { json: { username: "pgf-late", password: "pass", userType: "Customer" } });
  const upAt = Date.now();
  await pg.resume();
  const resumedAt = Date.now();
  // Served again by the same process: wait for the first success after the restart.
  let recoveredAt = 0;
  for (let i = 0; i < 200 && !recoveredAt; i++) {
    recoveredAt = replies.find((r) => r.at >= resumedAt && r.status >= 200 && r.status < 300)?.at ?? 0;
    if (!recoveredAt) await Bun.sleep(50);
  }
  await Bun.sleep(1500);
  stop.now = true;
  await Promise.all(load);

  const down = replies.filter((r) => r.at >= downAt && r.at + r.ms <= upAt);
  const statuses = (rs: Reply[]) => rs.reduce((m, r) => m.set(r.status, (m.get(r.status) ?? 0) + 1), new Map<number, number>());
  console.log(
    `pg fault: ${replies.length} requests; before ${JSON.stringify([...statuses(replies.filter((r) => r.at < stoppedAt))])}, ` +
      `down ${JSON.stringify([...statuses(down)])} (max ${Math.max(...down.map((r) => r.ms))} ms), ` +
      `after ${JSON.stringify([...statuses(replies.filter((r) => r.at >= resumedAt))])}; first success ${recoveredAt - resumedAt} ms after PostgreSQL was ready; ${accepted.length} orders completed`,
  );

  expect(server!.proc.exitCode).toBeNull();
  // Never a 500, never a request left hanging.
  expect(replies.filter((r) => r.status === 0 || r.status >= 500 && r.status !== 503)).toEqual([]);
  // While down: every request answered 503 + Retry-After in the envelope, quickly.
  expect(down.length).toBeGreaterThan(10);
  for (const r of down) {
    expect(r.status).toBe(503);
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(r.body).toMatchObject({ status: 503, error: "Service Unavailable" });
    expect(r.body.message).toContain("database");
  }
  expect(Math.max(...down.map((r) => r.ms))).toBeLessThan(5000);
  expect(register.status).toBe(503);
  expect(register.retryAfter).not.toBeNull();
  expect(login.status).toBe(503);
  expect(login.headers.get("retry-after")).not.toBeNull();
  // Back without restarting the server.
  expect(recoveredAt).toBeGreaterThan(0);
  expect(replies.filter((r) => r.at >= recoveredAt && r.status >= 500)).toEqual([]);
  expect(accepted.length).toBeGreaterThan(0);
  expect(server!.output()).not.toContain("unexpected error");

  // Money conserved, no partial transfer; every order the clients saw accepted is completed once
  // (exactly four ledger rows), none paid twice.
  db = new SQL({ url: pg.url(), max: 2 });
  expect(await invariantProblems(sqlQuery(db))).toEqual([]);
  const twice = await db.unsafe("SELECT order_id, COUNT(*) AS n FROM ledger WHERE order_id IS NOT NULL GROUP BY order_id HAVING COUNT(*) <> 4");
  expect([...twice]).toEqual([]);
  const done = await db.unsafe(`SELECT COUNT(*) AS n FROM orders WHERE status = 3 AND id IN (${accepted.join(",")})`);
  expect(Number(done[0].n)).toBe(accepted.length);
  expect(new Set(accepted).size).toBe(accepted.length);
}, 90_000);
