// The real automation app on a loopback port with real workers, a tenant, and our client pointed at it:
// the set-up the client tests share. `close` stops the workers and the server and removes the data.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/automation/app";
import { AutomationClient } from "../../../src/automation/client";
import type { AutomationConfig } from "../../../src/automation/config";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { runsOf } from "../../../src/automation/runs/service";
import { testContext } from "../app/harness";
import { createTenant } from "../../../src/automation/tenancy/service";
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";

export async function clientOnLoopback(name: string, over: Partial<AutomationConfig> = {}): Promise<{ client: AutomationClient; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `client-${name}-`));
  const clock = new ManualClock(Date.now());
  const ctx = await testContext({ workers: 2, ...over }, { clock, log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
  const app = buildApp(ctx);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => app.handle(req) });
  const t = await createTenant(ctx.storage.tenancy, clock, { name: "acme", slug: "acme" });
  runsOf(ctx).startWorkers();
  const close = async () => {
    await runsOf(ctx).stopWorkers(1000);
    server.stop(true);
    rmSync(dir, { recursive: true, force: true });
  };
  return { client: new AutomationClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: t.key, retryBaseMs: 1 }), close };
}
