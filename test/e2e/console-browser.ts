// The console's browser tests start the same way: a copy of the compiled automation-server in a temp
// dir (its own data dir, no inherited AUTOMATION_* settings), and a headless Chromium with a profile of
// its own; `close` ends both and removes every temp dir.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import { ensureBuilt, startServer, type Server } from "./support";

export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);

export interface ConsoleBrowser {
  dir: string;
  server: Server;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * `args` go to the server after the copy's path (`--host`, `--data-dir` and the port are set here);
 * `env` is added to its environment (the S3 credentials of an S3-backed server).
 */
export async function startConsoleBrowser(prefix: string, args: string[], env: Record<string, string | undefined> = {}): Promise<ConsoleBrowser> {
  if (!CHROMIUM) throw new Error("chromium is not installed (apt-get install chromium)");
  const built = await ensureBuilt("automation-server");
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  const server = await startServer([bin, ...args, "--host", "127.0.0.1", "--data-dir", join(dir, "data")], {
    cwd: dir,
    env: { AUTOMATION_DATA_DIR: undefined, AUTOMATION_CONSOLE: undefined, ...env },
  });
  const profile = mkdtempSync(join(tmpdir(), `${prefix}-chromium-`));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  return {
    dir,
    server,
    base: server.url,
    browser,
    async close() {
      await browser.close().catch(() => {});
      if (server.proc.exitCode === null) await server.kill("SIGKILL");
      rmSync(profile, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
