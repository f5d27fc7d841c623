// The runs API of the compiled automation-server (alone in an empty dir, --demo), driven through the
// project's TypeScript client as a user would: runAndWait, waits, file parts, rerun, list paging,
// artifacts ZIP and the signed download link, cancel; then a graceful restart keeps everything.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { unzipSync } from "fflate";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutomationClient } from "../../src/automation/client";
import { ensureBuilt, startServer, type Server } from "./support";

// Compiling and spawning the binary is slow on a loaded machine; timing never decides these tests.
setDefaultTimeout(60_000);

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";
/** The running server's port; each (re)start gets a new one, and a client for it. */
let port = 0;
let server: Server | undefined;
let client: AutomationClient;

async function boot(): Promise<Server> {
  const p = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "2"], {
    cwd: dir,
    env: { AUTOMATION_DATA_DIR: undefined },
  });
  port = p.port;
  client = new AutomationClient({ baseUrl: p.url, apiKey: DEMO_KEY, maxRetries: 0 });
  return p;
}

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-runs-e2e-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  server = await boot();
});

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("runs on the compiled server through the client", () => {
  test("runAndWait on a demo workflow returns the finished run with its output", async () => {
    const run = await client.runAndWait("workflows.order-routing", { order: { id: "o1", country: "US", items: [{ sku: "A", qty: 3, price: 10 }] } }, { pollIntervalMs: 50 });
    expect(run.execution?.status).toBe("completed");
    expect(run.output).toMatchObject({ order: "o1", net: 30, region: { warehouse: "Reno", vat: 0 } });
    const steps = await client.runs.steps(run.id);
    expect(steps.map((s) => s.name)).toContain("auto-approved");
  });

  test("run with waitForCompletion and a file part; rerun with version=original links both ways", async () => {
    const run = await client.run(
      "workflows.invoice-summary",
      { invoice: { lines: [{ amount: 700 }, { amount: 800 }] }, attachment: new File(["%PDF-1.4 fake"], "scan.pdf", { type: "application/pdf" }) },
      { waitForCompletion: 30 },
    );
    expect(run.execution?.status).toBe("completed");
    expect(run.output).toEqual({ total: 1500 });
    const detail = await client.runs.get(run.id, { expand: ["input"] });
    expect((detail as unknown as { input: { files: { name: string }[] } }).input.files.map((f) => f.name)).toEqual(["scan.pdf"]);
    expect((await client.runs.artifacts(run.id)).map((a) => [a.role, a.path])).toEqual([["input", "input/attachment/scan.pdf"]]);
    const again = await client.rerun(run.id, { version: "original", waitForCompletion: 30 });
    expect(again.execution?.status).toBe("completed");
    expect(again.execution?.retry).toMatchObject({ number: 1, previousRunId: run.id });
    const retry = (await client.runs.get(run.id)).execution?.retry as { nextRun: { id: string } | null };
    expect(retry.nextRun?.id).toBe(again.id);
  });

  test("artifacts: list, one file, the ZIP, and the signed link without a key", async () => {
    const run = await client.run("workflows.spreadsheet-report", {}, { waitForCompletion: 30 });
    const artifacts = await client.runs.artifacts(run.id);
    expect(artifacts.map((a) => a.path)).toEqual(["hours.xlsx"]);
    const one = await client.runs.artifact(run.id, "hours.xlsx");
    expect(one.headers.get("content-type")).toContain("spreadsheetml");
    const zip = unzipSync(new Uint8Array(await (await client.runs.artifactsZip(run.id)).arrayBuffer()));
    expect(Object.keys(zip)).toEqual(["hours.xlsx"]);
    const link = (await (await fetch(`http://127.0.0.1:${port}/v1/runs/${run.id}/artifacts/token`, { method: "POST", headers: { authorization: `Bearer ${DEMO_KEY}` } })).json()) as { token: string; url: string };
    // The link itself, as handed out: on a server started with --port 0 it names the port it really has.
    expect(link.url).toBe(`http://127.0.0.1:${port}/v1/runs/${run.id}/artifacts?zip=1&token=${link.token}`);
    const anonymous = await fetch(link.url);
    expect(anonymous.status).toBe(200);
    expect(Object.keys(unzipSync(new Uint8Array(await anonymous.arrayBuffer())))).toEqual(["hours.xlsx"]);
  });

  test("cancel a running run; list pages with the cursor; a graceful restart keeps every run", async () => {
    const slow = await client.run("workflows.spreadsheet-report", {});
    const c = await client.runs.cancel(slow.id);
    expect(["cancelled", "requested"]).toContain(c.cancellation.state);
    const ids: string[] = [];
    for await (const r of client.runs.iterate({ limit: 2 })) ids.push(r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(5);

    expect(await server!.kill("SIGTERM")).toBe(0);
    server = await boot();
    const after: string[] = [];
    for await (const r of client.runs.iterate({ limit: 100 })) after.push(r.id);
    expect(after.sort()).toEqual([...ids].sort());
    const final = await client.runs.get(slow.id);
    expect(final.execution?.status).toBe("cancelled");
  });
});
