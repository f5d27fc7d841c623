// End to end: what every refresh does besides cache.json. History and `pace` in --json, `%pace` in the
// statusline, the pre-rendered statusline files, threshold alerts (once per window), `quotas daemon` and
// `quotas install-timer`. A fake Claude API on loopback whose usage the test moves between runs.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openHistory } from "../../src/quotas/fetch/history";
import { homeWithCredentials, runEnv } from "../quotas/fakes";
import type { TempHome } from "../quotas/helpers";
import type { Report } from "../../src/quotas/model/types";
import { ensureBuilt } from "./support";

let bin: string;
let h: TempHome | undefined;
let server: ReturnType<typeof Bun.serve> | undefined;
beforeAll(async () => {
  bin = await ensureBuilt("quotas");
});
afterEach(() => {
  server?.stop(true);
  server = undefined;
  h?.cleanup();
  h = undefined;
});

/** A fake Claude usage API answering with `usage.five` % of the 5 h window, reset at `usage.reset`. */
function claudeApi(usage: { five: number; reset: string }): string {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => Response.json({ five_hour: { utilization: usage.five, resets_at: usage.reset }, seven_day: { utilization: 5, resets_at: "2099-01-01T00:00:00Z" } }),
  });
  return `http://127.0.0.1:${server.port}`;
}

async function run(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([bin, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/**
 * A reset time `hours` from now whose milliseconds are never zero: quotas writes a whole second without
 * its ".000" (src/quotas/providers/provider.ts), so a time that fell on one failed the comparison (1 in 1,000).
 */
const resetIn = (hours: number) => new Date(Math.floor((Date.now() + hours * 3_600_000) / 1000) * 1000 + 250).toISOString();

function setup(config = ""): { env: Record<string, string>; usage: { five: number; reset: string }; notified: () => string[] } {
  h = homeWithCredentials();
  const usage = { five: 0, reset: resetIn(3) };
  const url = claudeApi(usage);
  h.write(".config/quotas/config.toml", `[providers]\nenabled = ["claude"]\n\n${config}`);
  // a notify-send on PATH that records its arguments
  const binDir = join(h.home, "bin");
  mkdirSync(binDir);
  const log = join(h.home, "notify.log");
  writeFileSync(join(binDir, "notify-send"), `#!/bin/sh\nprintf '%s\\n' "$*" >> "${log}"\n`);
  chmodSync(join(binDir, "notify-send"), 0o755);
  const env = runEnv(h, [], { QUOTAS_ENDPOINT_CLAUDE: url, PATH: `${binDir}:${process.env.PATH ?? "/usr/bin:/bin"}` });
  return { env, usage, notified: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []) };
}

const five = (rep: Report) => rep.providers[0].windows.find((w) => w.window === "5h")!;

describe("alerts", () => {
  test("usage moving 70 → 85 → 90 with thresholds 80 and 95 alerts once, at 85; a new window alerts again", async () => {
    const { env, usage, notified } = setup("[alerts]\nthresholds = [95, 80]\n");
    const seen: string[] = [];
    for (const u of [70, 85, 90]) {
      usage.five = u;
      const r = await run(["--json"], env);
      expect(r.code).toBe(0);
      seen.push(r.stderr);
    }
    expect(seen).toEqual(["", `quotas: alert: Claude 5h at 85% (alert threshold 80%), resets ${usage.reset}\n`, ""]);
    expect(notified()).toEqual([`--app-name=quotas quotas: Claude 5h at 85% Claude 5h at 85% (alert threshold 80%), resets ${usage.reset}`]);
    // the window resets (usage drops, reset moves on); crossing again alerts again, jumping over both
    // thresholds alerts once, for the higher
    usage.reset = resetIn(8);
    usage.five = 3;
    expect((await run(["--json"], env)).stderr).toBe("");
    usage.five = 97;
    expect((await run(["--json"], env)).stderr).toBe(`quotas: alert: Claude 5h at 97% (alert threshold 95%), resets ${usage.reset}\n`);
    expect((await run(["--json"], env)).stderr).toBe("");
    expect(notified()).toHaveLength(2);
  });

  test("no [alerts] thresholds: no alert, no notification", async () => {
    const { env, usage, notified } = setup();
    usage.five = 99;
    expect((await run(["--json"], env)).stderr).toBe("");
    expect(notified()).toEqual([]);
  });
});

describe("history and pace", () => {
  test("--json carries pace per window from the stored history; the statusline's %pace uses it", async () => {
    const { env, usage } = setup();
    const now = Date.now();
    // 5 h window resetting in 3 h; history: 10 % an hour ago rising 2 points per 5 minutes to 32 %
    // five minutes ago; now 50 %. The hour back from "now" (not on a minute boundary) starts after the
    // sample at -60 min, so the rate runs from the -55 min sample (12 %) over 55-56 minutes:
    // 38 / (55/60) = 41.45/h down to 38 / (56/60) = 40.71/h.
    const minute = Math.floor(now / 60_000) * 60_000;
    usage.reset = new Date(minute + 3 * 3_600_000).toISOString();
    const store = openHistory(join(h!.home, ".local/share/quotas/history.db"));
    for (let k = 12; k >= 1; k--) {
      const t = minute - k * 5 * 60_000;
      store.append("claude:default", [{ window: "5h", sample: { t, used: 32 - (k - 1) * 2, limit: 100, reset: Date.parse(usage.reset) } }], t);
    }
    store.close();
    usage.five = 50;
    const r = await run(["--json"], env);
    const w = five(JSON.parse(r.stdout));
    expect(w.pace).not.toBeNull();
    const p = w.pace!;
    expect(p.since).toBe(new Date(minute - 55 * 60_000).toISOString());
    expect(p.rate_per_hour).toBeGreaterThanOrEqual(40.7);
    expect(p.rate_per_hour).toBeLessThanOrEqual(41.46);
    // 50 left at 40.71-41.45/h: 72.4-73.7 minutes, well before the reset in 3 h
    const eta = (Date.parse(p.exhausts_at!) - now) / 60_000;
    expect(eta).toBeGreaterThan(72);
    expect(eta).toBeLessThan(74.5);
    expect(p.before_reset).toBe(true);
    expect(p.projected_used).toBeGreaterThan(50 + 40.7 * 2.98);
    expect(p.projected_used).toBeLessThan(50 + 41.46 * 3);
    // the weekly window has only this one sample: no pace yet
    expect(JSON.parse(r.stdout).providers[0].windows.find((x: { window: string }) => x.window === "weekly").pace).toBeNull();
    const line = await run(["--statusline", "--no-update-check", "--no-icons", "--format=%provider %window %pace"], env);
    expect(line.stdout).toMatch(/^Claude 5h 100% in 1h1[1-4]m\n$/);
  });

  test("a first run: history.db is created, every window has pace null", async () => {
    const { env, usage } = setup();
    usage.five = 10;
    const rep = JSON.parse((await run(["--json"], env)).stdout) as Report;
    expect(rep.providers[0].windows.map((w) => w.pace)).toEqual([null, null]);
    expect(existsSync(join(h!.home, ".local/share/quotas/history.db"))).toBe(true);
  });
});

describe("pre-rendered statusline files, daemon, install-timer", () => {
  test("daemon --once refreshes and writes statusline.txt, the named formats and statusline.due", async () => {
    const { env, usage } = setup('[statusline]\nicons = false\n\n[statusline.formats.short]\nformat = "%percent"\nicons = false\n');
    usage.five = 42;
    const before = Math.floor(Date.now() / 1000);
    const r = await run(["daemon", "--once"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\S+Z refreshed 1 provider \(1 available\)\n$/);
    const dir = join(h!.home, ".cache/quotas");
    expect(readFileSync(join(dir, "statusline.txt"), "utf8")).toBe("Claude 58/100\n");
    expect(readFileSync(join(dir, "statusline-short.txt"), "utf8")).toBe("42%\n");
    const due = Number(readFileSync(join(dir, "statusline.due"), "utf8"));
    expect(due).toBeGreaterThanOrEqual(before + 1800);
    expect(due).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1800);
    // the same line as --statusline prints
    expect((await run(["--statusline", "--no-update-check", "--no-icons"], env)).stdout).toBe("Claude 58/100\n");
    // a format removed from the config takes its file with it; the next refresh rewrites the line
    h!.write(".config/quotas/config.toml", '[providers]\nenabled = ["claude"]\n[statusline]\nicons = false\n');
    usage.five = 60;
    await run(["--json"], env);
    expect(existsSync(join(dir, "statusline-short.txt"))).toBe(false);
    expect(readFileSync(join(dir, "statusline.txt"), "utf8")).toBe("Claude 40/100\n");
  });

  test("daemon refreshes at once, then every interval, and stops cleanly on SIGTERM", async () => {
    const { env, usage } = setup();
    usage.five = 7;
    const p = Bun.spawn([bin, "daemon", "--interval=60"], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const file = join(h!.home, ".cache/quotas/statusline.txt");
    const end = Date.now() + 15_000;
    while (!existsSync(file) && Date.now() < end) await Bun.sleep(25);
    expect(existsSync(file)).toBe(true);
    p.kill("SIGTERM");
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    expect(out).toMatch(/^quotas daemon: refreshing every 60 s \(Ctrl-C stops\)\n\S+Z refreshed 1 provider \(1 available\)\n$/);
    expect(existsSync(join(h!.home, ".cache/quotas/refresh.lock"))).toBe(false);
  });

  test("install-timer writes a systemd user timer or a launchd agent running `daemon --once`, enabling nothing", async () => {
    const { env } = setup();
    const sd = await run(["install-timer", "--interval=600"], { ...env, XDG_CACHE_HOME: "/tmp/my cache" });
    expect(sd.code).toBe(0);
    expect(sd.stdout).toBe("wrote ~/.config/systemd/user/quotas.service and ~/.config/systemd/user/quotas.timer\nenable with: systemctl --user daemon-reload && systemctl --user enable --now quotas.timer\n");
    const service = readFileSync(join(h!.home, ".config/systemd/user/quotas.service"), "utf8");
    expect(service).toContain(`\nExecStart=${bin} daemon --once\n`);
    expect(service).toContain('\nEnvironment="XDG_CACHE_HOME=/tmp/my cache"\n');
    expect(service).toContain(`\nEnvironment=XDG_DATA_HOME=${h!.home}/.local/share\n`);
    const timer = readFileSync(join(h!.home, ".config/systemd/user/quotas.timer"), "utf8");
    expect(timer).toContain("\nOnUnitActiveSec=600s\n");
    expect(timer).toContain("\nWantedBy=timers.target\n");
    const verify = Bun.which("systemd-analyze");
    if (verify) {
      const v = Bun.spawnSync([verify, "--user", "verify", join(h!.home, ".config/systemd/user/quotas.timer")], { env });
      expect(v.stderr.toString()).not.toContain("Unknown");
    }
    const ld = await run(["install-timer", "--kind=launchd"], env);
    expect(ld.code).toBe(0);
    const plist = readFileSync(join(h!.home, "Library/LaunchAgents/dev.quotas.refresh.plist"), "utf8");
    expect(plist).toContain(`<string>${bin}</string>\n    <string>daemon</string>\n    <string>--once</string>`);
    expect(plist).toContain("<key>StartInterval</key><integer>300</integer>");
    expect(ld.stdout).toContain("launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/dev.quotas.refresh.plist");
    const bad = await run(["install-timer", "--kind=cron"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toStartWith('quotas: --kind must be systemd or launchd (got "cron")\n');
    expect((await run(["daemon", "--interval=5"], env)).code).toBe(2);
    expect((await run(["nonsense"], env)).stderr).toStartWith('quotas: unexpected argument "nonsense" (commands: daemon, install-timer)\n');
  });
});
