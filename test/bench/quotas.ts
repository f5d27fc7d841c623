// Benchmark of `quotas` (run: bun test/bench/quotas.ts). Prints absolute figures and ratios measured in
// the same run:
//  1. `quotas --statusline` (warm cache, nothing to fork) against a compiled Bun program that only
//     prints a line. Aim: ratio ≤ 1.5.
//  2. `quotas --json` with all twelve fake providers each answering after 300 ms. Aim: ≤ 1.5 × 300 ms.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, root } from "../e2e/support";
import { allProviders, fakeProvider, homeWithCredentials, runEnv } from "../quotas/fakes";

const DELAY_MS = 300;
const bin = await ensureBuilt("quotas");
const work = mkdtempSync(join(tmpdir(), "quotas-bench-"));
const h = homeWithCredentials();

// The reference: a compiled Bun program with the same build flags that prints one line.
writeFileSync(join(work, "hello.ts"), 'console.log("Claude 58/100 | Codex 12/100");\n');
const hello = join(work, "hello");
const build = Bun.spawnSync([process.execPath, "build", "--compile", "--target", "bun", "--minify-whitespace", "--minify-syntax", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", join(work, "hello.ts"), "--outfile", hello], { cwd: root });
if (build.exitCode !== 0) throw new Error(build.stderr.toString());

// A warm cache with all twelve providers and a fresh update check: the prompt's everyday case.
const fakes = allProviders.map((p) => fakeProvider(p));
const env = runEnv(h, fakes);
const warm = Bun.spawn([bin, "--json"], { env, stdout: "ignore", stderr: "inherit" });
await warm.exited;
h.write(".cache/quotas/update.json", { checked_at: new Date().toISOString(), current: "0.0.0", latest: "0.0.0" });
for (const f of fakes) f.stop();

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], mean: s.reduce((a, b) => a + b, 0) / s.length, min: s[0] };
}
const fmt = (x: number) => `${x.toFixed(1)} ms`;

async function loop(cmd: string[], runs: number, e: Record<string, string>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    const t = performance.now();
    const p = Bun.spawn(cmd, { env: e, stdout: "ignore", stderr: "ignore" });
    await p.exited;
    if (i >= 5) out.push(performance.now() - t); // first five are warm-up
  }
  return out;
}

console.log("1. statusline vs a compiled Bun program printing one line");
const hyperfine = Bun.which("hyperfine");
let ratio: number;
if (hyperfine) {
  const report = join(work, "hyperfine.json");
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const p = Bun.spawnSync(
    [hyperfine, "-N", "--warmup", "10", "--runs", "100", "--export-json", report, hello, `${bin} --statusline`],
    { env: { ...process.env, ...env }, stdout: "ignore", stderr: "inherit" },
  );
  if (p.exitCode !== 0) throw new Error("hyperfine failed");
  void envArgs;
  const r = (await Bun.file(report).json()) as { results: { command: string; mean: number; median: number; min: number; user: number }[] };
  const [ref, ql] = r.results;
  console.log(`   reference   mean ${fmt(ref.mean * 1000)}  median ${fmt(ref.median * 1000)}  min ${fmt(ref.min * 1000)}  user ${fmt(ref.user * 1000)}   (hyperfine, 100 runs)`);
  console.log(`   statusline  mean ${fmt(ql.mean * 1000)}  median ${fmt(ql.median * 1000)}  min ${fmt(ql.min * 1000)}  user ${fmt(ql.user * 1000)}`);
  ratio = ql.median / ref.median;
  console.log(`   ratio (median) ${ratio.toFixed(2)}   ratio (mean) ${(ql.mean / ref.mean).toFixed(2)}   ratio (min) ${(ql.min / ref.min).toFixed(2)}   aim ≤ 1.5`);
} else {
  const ref = stats(await loop([hello], 60, env));
  const ql = stats(await loop([bin, "--statusline"], 60, env));
  console.log(`   reference   median ${fmt(ref.median)}  mean ${fmt(ref.mean)}  min ${fmt(ref.min)}   (own loop, 60 runs)`);
  console.log(`   statusline  median ${fmt(ql.median)}  mean ${fmt(ql.mean)}  min ${fmt(ql.min)}`);
  ratio = ql.median / ref.median;
  console.log(`   ratio (median) ${ratio.toFixed(2)}   ratio (min) ${(ql.min / ref.min).toFixed(2)}   aim ≤ 1.5`);
}

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
