// Benchmark of the compiled `quotas` TUI in a real terminal (tmux):
//  1. time from typing the command to the first full frame with a warm cache (providers slowed down
//     to 2 s, so the frame can only come from the cache), against `cat` of a file holding the same
//     frame text in the same terminal (the shell + tmux + polling floor) and against `quotas --version`
//     (the compiled binary's own start-up floor);
//  2. CPU used over 10 s of idling on the dashboard (from /proc/<pid>/stat utime+stime), against an
//     idle Bun process blocked on stdin in the same terminal.
// Run: bun test/bench/quotas-tui.ts
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tmux } from "../quotas/tui/tmux.ts";
import { ensureBuilt } from "../e2e/support.ts";

const RUNS = 7;
const IDLE_S = 10;
const H = 3_600_000;
const bin = await ensureBuilt("quotas");
let delayMs = 0;
const resets = new Date(Date.now() + 3 * H).toISOString();
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (delayMs) await Bun.sleep(delayMs);
    const p = new URL(req.url).pathname;
    if (p === "/api/oauth/usage") return Response.json({ five_hour: { utilization: 42, resets_at: resets }, seven_day: { utilization: 10, resets_at: resets } });
    if (p === "/user/balance") return Response.json({ is_available: true, balance_infos: [{ currency: "CNY", total_balance: "37.20" }] });
    return Response.json({ code: 200, data: { level: "pro", limits: [{ type: "TOKENS_LIMIT", unit: 3, usage: 100, currentValue: 25, nextResetTime: Date.parse(resets) }] } });
  },
});

const dir = mkdtempSync(join(tmpdir(), "qtui-bench-"));
for (const d of ["home/.claude", "config/quotas", "cache", "data"]) mkdirSync(join(dir, d), { recursive: true });
writeFileSync(join(dir, "home/.claude/.credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: "t", expiresAt: Date.now() + 24 * H } }));
writeFileSync(join(dir, "config/quotas/config.toml"), `[providers]\nenabled = ["claude", "zai", "deepseek"]\n`);
const base = `http://127.0.0.1:${server.port}`;
const t = await Tmux.start({
  width: 120,
  height: 40,
  cwd: dir,
  env: {
    HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config"), XDG_CACHE_HOME: join(dir, "cache"), XDG_DATA_HOME: join(dir, "data"),
    ZAI_API_KEY: "k", DEEPSEEK_API_KEY: "k", QUOTAS_ENDPOINT_CLAUDE: base, QUOTAS_ENDPOINT_ZAI: base, QUOTAS_ENDPOINT_DEEPSEEK: base,
  },
});

const full = (s: string) => s.includes("3 of 3 providers loaded") && s.includes("42/100%") && s.includes("37.20 CNY");

try {
  // Warm the cache.
  t.type(`${bin} --no-update-check`);
  await t.waitFor((s) => full(s) && !s.includes("refreshing"), "warm-up", 20_000);
  const frameText = t.text();
  t.keys("q");
  await t.waitForPrompt();
  writeFileSync(join(dir, "frame.txt"), frameText + "\n");

  const measure = async (cmd: string, done: (s: string) => boolean, after: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      t.type("clear");
      await t.waitFor((s) => !s.includes("providers loaded"), "clear");
      const t0 = performance.now();
      t.type(cmd);
      await t.waitFor(done, cmd, 20_000, false);
      times.push(performance.now() - t0);
      await after();
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  };

  delayMs = 2000; // the first frame can only come from the cache
  const tui = await measure(`${bin} --no-update-check`, full, async () => {
    t.keys("q");
    await t.waitForPrompt(15_000);
  });
  const cat = await measure(`cat frame.txt`, full, () => t.waitForPrompt());
  // The process-start floor: the same binary printing its version and exiting.
  const version = Bun.spawnSync([bin, "--version"]).stdout.toString().trim();
  const startup = await measure(`${bin} --version`, (s) => s.split("\n").some((l) => l.trim() === version), () => t.waitForPrompt());

  // Idle CPU: dashboard loaded, refresh finished.
  delayMs = 0;
  const ticks = (pid: number) => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14 and 15)
  };
  const idle = async (cmd: string, ready: (s: string) => boolean) => {
    t.type(cmd);
    await t.waitFor(ready, cmd, 20_000);
    await Bun.sleep(500);
    const pid = t.foregroundPid()!;
    const a = ticks(pid);
    await Bun.sleep(IDLE_S * 1000);
    const b = ticks(pid);
    return { pid, ticks: b - a };
  };
  const tuiIdle = await idle(`${bin} --no-update-check`, (s) => full(s) && !s.includes("refreshing"));
  t.keys("q");
  await t.waitForPrompt();
  const refIdle = await idle(`${process.execPath} -e 'process.stdin.resume(); console.log("idle-ref")'`, (s) => s.includes("idle-ref\n") || s.trimEnd().endsWith("idle-ref"));
  t.keys("C-c");
  await t.waitForPrompt();

  const hz = 100; // USER_HZ on Linux
  const pct = (x: number) => ((x / hz / IDLE_S) * 100).toFixed(2);
  console.log(`quotas TUI benchmark (tmux 120×40, median of ${RUNS})`);
  console.log(`first full frame, warm cache: ${tui.toFixed(0)} ms   reference cat of the same frame: ${cat.toFixed(0)} ms   ratio ${(tui / cat).toFixed(2)}×`);
  console.log(`                              reference \`quotas --version\` (process start): ${startup.toFixed(0)} ms   ratio ${(tui / startup).toFixed(2)}×`);
  console.log(`idle CPU over ${IDLE_S} s: quotas ${tuiIdle.ticks} ticks (${pct(tuiIdle.ticks)} %)   reference idle bun on stdin: ${refIdle.ticks} ticks (${pct(refIdle.ticks)} %)   ratio ${refIdle.ticks ? (tuiIdle.ticks / refIdle.ticks).toFixed(2) : tuiIdle.ticks === 0 ? "1.00" : "∞"}×`);
} finally {
  t.stop();
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
}
