// The fuzz generators (test/fuzz/) against the compiled binaries over real sockets, a smaller run than
// in-process: no 5xx, every error in the server's envelope, and the process still up and answering.
// In the PostgreSQL pass (AUTOMATION_TEST_DB=postgres, `bun run test:pg`) both binaries run on
// PostgreSQL (startServer gives the automation server a database; the order server gets one here):
// NUL bytes in parameters and bodies were 500s only there (issue 36 part 4).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { DEMO_CLIENT } from "../../src/orders/config";
import { openApiDocument } from "../../src/orders/openapi";
import { fuzzParams, operationsOf, requestArb, type FuzzRequest } from "../fuzz/requests";
import { hostileZips, isIssuesEnvelope, isOrdersEnvelope } from "../fuzz/support";
import { freshPostgresDb } from "../support/postgres";
import { ensureBuilt, startServer, type Server } from "./support";

setDefaultTimeout(180_000);

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let orders: Server | undefined;
let automation: Server | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "fuzz-bin-"));
  const [ob, ab] = await Promise.all([ensureBuilt("order-server"), ensureBuilt("automation-server")]);
  const ordersDb = process.env.AUTOMATION_TEST_DB === "postgres" ? await freshPostgresDb() : ":memory:";
  [orders, automation] = await Promise.all([
    startServer([ob, "--profile", "demo", "--db", ordersDb, "--host", "127.0.0.1"]),
    startServer([ab, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, "data")]),
  ]);
});

afterAll(async () => {
  for (const s of [orders, automation]) if (s && s.proc.exitCode === null) await s.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function send(base: string, r: FuzzRequest): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}${r.url}`, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(10_000) });
  const reader = res.body?.getReader();
  let text = "";
  const until = Date.now() + 1000;
  while (reader) {
    const next = await Promise.race([reader.read(), Bun.sleep(Math.max(0, until - Date.now())).then(() => null)]);
    if (!next || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  await reader?.cancel().catch(() => {});
  return { status: res.status, text };
}

/**
 * Bun's HTTP parser answers a request head (request line + headers) over 16 KiB with a bare 431 before
 * any route sees it (docs/robustness.md, known limits). Only reachable over real sockets: two 5,000-
 * character path parameters plus an 8 KB header.
 */
const headTooLarge = (r: { status: number; text: string }, req: FuzzRequest) =>
  r.status === 431 && r.text === "" && req.url.length + Object.values(req.headers).join("").length > 16 * 1024 - 2048;

describe("fuzz: compiled binaries over HTTP", () => {
  test("automation-server", async () => {
    const doc = await (await fetch(`${automation!.url}/openapi/json`)).json();
    const ops = operationsOf(doc as Parameters<typeof operationsOf>[0]);
    const ctx = { ids: ["workflows.hello", "hello", "exec_0", "file_0"], auth: [`Bearer ${KEY}`, `Bearer ${KEY}`, "Bearer eak_nope", undefined], zips: hostileZips() };
    await fc.assert(
      fc.asyncProperty(requestArb(ops, ctx), async (req) => {
        const r = await send(automation!.url, req);
        if (r.status >= 500) throw new Error(`${r.status} for ${req.describe}: ${r.text.slice(0, 300)}`);
        if (r.status >= 400 && !isIssuesEnvelope(r.text) && !headTooLarge(r, req)) throw new Error(`no envelope (${r.status}) for ${req.describe}: ${r.text.slice(0, 300)}`);
      }),
      fuzzParams("automation-server binary", 300),
    );
    expect(automation!.proc.exitCode).toBeNull();
    expect((await fetch(`${automation!.url}/health`)).status).toBe(200);
  });

  test("order-server", async () => {
    const q = new URLSearchParams({ grant_type: "password", username: "anna", password: "pass", client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret });
    const token = ((await (await fetch(`${orders!.url}/oauth/token?${q}`, { method: "POST" })).json()) as { access_token: string }).access_token;
    const ops = operationsOf(openApiDocument() as unknown as Parameters<typeof operationsOf>[0]);
    const ctx = { ids: ["1", "2", "3", "999999"], auth: [`Bearer ${token}`, `Bearer ${token}`, "Bearer nope", undefined], zips: [] };
    await fc.assert(
      fc.asyncProperty(requestArb(ops, ctx), async (req) => {
        const r = await send(orders!.url, req);
        if (r.status >= 500) throw new Error(`${r.status} for ${req.describe}: ${r.text.slice(0, 300)}`);
        if (r.status >= 400 && !isOrdersEnvelope(r.text) && !headTooLarge(r, req)) throw new Error(`no envelope (${r.status}) for ${req.describe}: ${r.text.slice(0, 300)}`);
      }),
      fuzzParams("order-server binary", 300),
    );
    expect(orders!.proc.exitCode).toBeNull();
    expect((await fetch(`${orders!.url}/health`)).status).toBeLessThan(500);
  });
});
