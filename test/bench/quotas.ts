// Benchmark of `quotas` (run: bun test/bench/quotas.ts). Prints absolute figures and ratios measured in
// the same run:
//  1. `quotas --statusline` (warm cache, nothing to fork; without and with a config.toml) against a
//     compiled Bun program that only prints a line. Aim: ratio ≤ 1.5.
//  2. `quotas --json` with all twelve fake providers each answering after 300 ms. Aim: ≤ 1.5 × 300 ms.
// Both executables are compiled fresh in the run: a 100 MB executable that has sat in the page cache for a
// while was seen to start ~20% slower than a fresh copy of itself, so compare like with like.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt } from "../e2e/support";
import { allProviders, fakeProvider, runEnv } from "../quotas/fakes";
import { compileHello, warmHome } from "./quotas-support";

const DELAY_MS = 300;
const bin = await ensureBuilt("quotas");
const work = mkdtempSync(join(tmpdir(), "quotas-bench-"));
const hello = compileHello(work);
const { h, env } = await warmHome(bin);

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], mean: s.reduce((a, b) => a + b, 0) / s.length, min: s[0] };
}
const fmt = (x: number) => `${x.toFixed(1)} ms`;

// Interleaved rounds (reference, statusline, reference, ...) so that load from other processes on the
// machine falls on both alike; hyperfine's runs of one command after the other would not.
async function interleaved(a: string[], b: string[], e: Record<string, string>, rounds: number): Promise<[number[], number[]]> {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < rounds + 10; i++) {
    for (const [cmd, out] of (i % 2 ? [[b, tb], [a, ta]] : [[a, ta], [b, tb]]) as [string[], number[]][]) {
      const t = performance.now();
      Bun.spawnSync(cmd, { env: e, stdout: "ignore", stderr: "ignore" });
      if (i >= 10) out.push(performance.now() - t); // first ten rounds are warm-up
    }
  }
  return [ta, tb];
}

async function statuslineVsHello(label: string, e: Record<string, string>) {
  console.log(`   ${label}`);
  const hyperfine = Bun.which("hyperfine");
  if (hyperfine) {
    const report = join(work, "hyperfine.json");
    const p = Bun.spawnSync([hyperfine, "-N", "--warmup", "10", "--runs", "100", "--export-json", report, hello, `${bin} --statusline`], {
      env: e, stdout: "ignore", stderr: "inherit",
    });
    if (p.exitCode !== 0) throw new Error("hyperfine failed");
    const r = (await Bun.file(report).json()) as { results: { mean: number; median: number; min: number; user: number }[] };
    const [ref, ql] = r.results;
    console.log(`     hyperfine   reference  median ${fmt(ref.median * 1000)}  mean ${fmt(ref.mean * 1000)}  min ${fmt(ref.min * 1000)}  user ${fmt(ref.user * 1000)}`);
    console.log(`                 statusline median ${fmt(ql.median * 1000)}  mean ${fmt(ql.mean * 1000)}  min ${fmt(ql.min * 1000)}  user ${fmt(ql.user * 1000)}`);
    console.log(`                 ratio (median) ${(ql.median / ref.median).toFixed(2)}  (mean) ${(ql.mean / ref.mean).toFixed(2)}  (min) ${(ql.min / ref.min).toFixed(2)}`);
  }
  const [ta, tb] = await interleaved([hello], [bin, "--statusline"], e, 150);
  const ref = stats(ta);
  const ql = stats(tb);
  const ratio = ql.median / ref.median;
  console.log(`     interleaved reference  median ${fmt(ref.median)}  mean ${fmt(ref.mean)}  min ${fmt(ref.min)}   (150 rounds)`);
  console.log(`                 statusline median ${fmt(ql.median)}  mean ${fmt(ql.mean)}  min ${fmt(ql.min)}`);
  console.log(`                 ratio (median) ${ratio.toFixed(2)}  (min) ${(ql.min / ref.min).toFixed(2)}   aim ≤ 1.5`);
}

console.log("1. statusline vs a compiled Bun program printing one line");
await statuslineVsHello("twelve providers cached, no config file", env);
// With a config file the statusline must still honour it ([providers] filters, profile names).
h.write(".config/quotas/config.toml", '[providers]\ndisabled = ["grok"]\n\n[quota_preferences.claude]\nhidden = ["extra_credits"]\n\n[profiles.entries."claude:work"]\nname = "Work"\n');
const check = Bun.spawnSync([bin, "--statusline", "--no-icons"], { env, stdout: "pipe" }).stdout.toString();
if (check.includes("Grok") || !check.includes("Claude")) throw new Error(`config not honoured: ${check}`);
await statuslineVsHello("the same with a config.toml", env);
rmSync(join(h.home, ".config/quotas/config.toml"));

console.log(`\n2. --json with twelve providers each answering after ${DELAY_MS} ms`);
const slow = allProviders.map((p) => fakeProvider(p, { kind: "ok", delayMs: DELAY_MS }));
const slowEnv = runEnv(h, slow);
const times: number[] = [];
for (let i = 0; i < 7; i++) {
  const t = performance.now();
  const p = Bun.spawn([bin, "--json"], { env: slowEnv, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const dt = performance.now() - t;
  const statuses = (JSON.parse(out) as { providers: { status: string }[] }).providers.map((x) => x.status);
  if (statuses.length !== 12 || statuses.some((s) => s !== "available")) throw new Error(`unexpected statuses: ${statuses}`);
  if (i > 0) times.push(dt); // first run warms the page cache
}
for (const f of slow) f.stop();
const js = stats(times);
console.log(`   total       median ${fmt(js.median)}  mean ${fmt(js.mean)}  min ${fmt(js.min)}   (6 runs, 14 requests each)`);
console.log(`   ratio to ${DELAY_MS} ms (median) ${(js.median / DELAY_MS).toFixed(2)}   aim ≤ 1.5   (sequential would be ≥ ${(14 * DELAY_MS / 1000).toFixed(1)} s)`);

h.cleanup();
rmSync(work, { recursive: true, force: true });
