// An upgrade that replaces the executable under a running server (a rename over it, as installers and
// `bun build --compile` do) must not break it until the restart: script steps run in child processes
// of the same executable, which were started from a path that no longer exists.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "./support";

setDefaultTimeout(90_000);
const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const dir = mkdtempSync(join(tmpdir(), "automation-upgrade-"));
let server: Server | undefined;
afterAll(async () => {
  await server?.kill();
  rmSync(dir, { recursive: true, force: true });
});

test("the executable replaced on disk while serving: script steps still run", async () => {
  const built = await ensureBuilt("automation-server");
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--data-dir", join(dir, "data")]);
  const run = async () => {
    const r = await fetch(`${server!.url}/v1/runs?wait_for_completion=30`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ target: "workflows.invoice-summary", input: { invoice: { lines: [{ amount: 700 }, { amount: 500 }] } } }),
    });
    return (await r.json()) as { execution: { status: string }; output: { total: number } | null; error: unknown };
  };
  // The upgrade: a new file renamed over the old one (the running one is unlinked).
  copyFileSync(built, `${bin}.new`);
  renameSync(`${bin}.new`, bin);
  const after = await run();
  expect(after.error ?? null).toBeNull();
  expect(after.execution.status).toBe("completed");
  expect(after.output).toEqual({ total: 1200 });
});
