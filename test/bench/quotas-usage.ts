// Benchmark: `quotas usage daily --json` against ccusage on the same generated logs
// (run: bun test/bench/quotas-usage.ts; QUOTAS_BENCH_MB=1024 by default).
//   1. generates Claude Code + Codex CLI logs (test/quotas/usage/generate.ts) in a temp HOME;
//   2. installs ccusage@20.0.24 from npm into a temp dir (not a dependency of this project) and runs
//      its native binary directly (its npm launcher only adds a Node start);
//   3. compares the totals: tokens must be equal, cost within 0.1 %; per-day differences are listed;
//   4. times, in one run: ccusage, quotas cold (no index), quotas warm (nothing new), quotas after
//      1,000 appended lines, ccusage after the same append; peak RSS of each (getrusage of the child);
//   5. the prompt: `{cost_today}` in the pre-rendered statusline file vs a format without it.
// Aims: cold ≤ 0.5 × ccusage, after-append ≤ 0.05 × ccusage.
import { appendFileSync, chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt } from "../e2e/support";
import { generate } from "../quotas/usage/generate";

const MB = Number(process.env.QUOTAS_BENCH_MB ?? 1024);
const CCUSAGE = "ccusage@20.0.24";
const work = mkdtempSync(join(tmpdir(), "quotas-usage-bench-"));
const home = join(work, "home");
const env = { HOME: home, XDG_CACHE_HOME: join(home, ".cache"), XDG_CONFIG_HOME: join(home, ".config"), TZ: "UTC", PATH: process.env.PATH ?? "" };

interface Run {
  ms: number;
  /** user + system CPU time of the child: what the work costs, less bent by other load than wall time */
  cpuMs: number;
  rssMB: number;
  out: string;
}

function run(cmd: string[]): Run {
  const t0 = performance.now();
  const p = Bun.spawnSync(cmd, { env, stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t0;
  if (p.exitCode !== 0) throw new Error(`${cmd.join(" ")}: exit ${p.exitCode}\n${p.stderr.toString()}`);
  const ru = p.resourceUsage;
  return { ms, cpuMs: ru ? Number(ru.cpuTime.total) / 1000 : 0, rssMB: (ru?.maxRSS ?? 0) / 1024 / 1024, out: p.stdout.toString() };
}

function du(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const n of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const st = statSync(join(dir, n));
    if (st.isFile()) {
      bytes += st.size;
      files++;
    }
  }
  return { bytes, files };
}

interface Day {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  cost: number;
}

function oursByDay(json: string): Map<string, Day> {
  const j = JSON.parse(json) as { groups: { key: string; input_tokens: number; output_tokens: number; cache_write_tokens: number; cache_read_tokens: number; cost_usd: number }[] };
  return new Map(j.groups.map((g) => [g.key, { input: g.input_tokens, output: g.output_tokens, cacheWrite: g.cache_write_tokens, cacheRead: g.cache_read_tokens, cost: g.cost_usd }]));
}

function ccByDay(json: string): Map<string, Day> {
  const j = JSON.parse(json) as { daily: { period?: string; date?: string; inputTokens: number; outputTokens: number; cacheCreationTokens: number; cacheReadTokens: number; totalCost: number }[] };
  return new Map(j.daily.map((d) => [d.period ?? d.date ?? "", { input: d.inputTokens, output: d.outputTokens, cacheWrite: d.cacheCreationTokens, cacheRead: d.cacheReadTokens, cost: d.totalCost }]));
}

function compare(label: string, ours: Map<string, Day>, cc: Map<string, Day>): boolean {
  const sum = (m: Map<string, Day>) => [...m.values()].reduce((a, d) => ({ input: a.input + d.input, output: a.output + d.output, cacheWrite: a.cacheWrite + d.cacheWrite, cacheRead: a.cacheRead + d.cacheRead, cost: a.cost + d.cost }), { input: 0, output: 0, cacheWrite: 0, cacheRead: 0, cost: 0 });
  const a = sum(ours);
  const b = sum(cc);
  const tokensEqual = a.input === b.input && a.output === b.output && a.cacheWrite === b.cacheWrite && a.cacheRead === b.cacheRead;
  const costDiff = Math.abs(a.cost - b.cost) / Math.max(b.cost, 1e-9);
  console.log(`  ${label}: tokens ${tokensEqual ? "equal" : "DIFFER"} (input ${a.input} / ${b.input}, output ${a.output} / ${b.output}, cache write ${a.cacheWrite} / ${b.cacheWrite}, cache read ${a.cacheRead} / ${b.cacheRead})`);
  console.log(`  ${label}: cost $${a.cost.toFixed(4)} vs ccusage $${b.cost.toFixed(4)}: ${(costDiff * 100).toFixed(5)} % ${costDiff <= 0.001 ? "(within 0.1 %)" : "(NOT within 0.1 %)"}`);
  const days = [...new Set([...ours.keys(), ...cc.keys()])].sort();
  let listed = 0;
  for (const d of days) {
    const x = ours.get(d);
    const y = cc.get(d);
    const same = x && y && x.input === y.input && x.output === y.output && x.cacheWrite === y.cacheWrite && x.cacheRead === y.cacheRead && Math.abs(x.cost - y.cost) <= 1e-6 * Math.max(1, y.cost);
    if (same) continue;
    if (listed++ < 20) console.log(`    differs on ${d}: quotas ${JSON.stringify(x)} ccusage ${JSON.stringify(y)}`);
  }
  console.log(`  ${label}: ${days.length} days, ${listed} with any difference`);
  return tokensEqual && costDiff <= 0.001;
}

try {
  console.log(`machine: ${navigator.hardwareConcurrency} cores, ${process.platform}-${process.arch}, bun ${Bun.version}`);
  let t0 = performance.now();
  const gen = await generate({ home, entries: 10_000_000, maxBytes: MB * 1024 * 1024, seed: 42, days: 365, textBytes: 40, userShare: 0.25 });
  const size = du(home);
  console.log(`logs: ${(size.bytes / 2 ** 30).toFixed(2)} GiB in ${size.files} files, ${gen.entries} distinct entries (generated in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);

  t0 = performance.now();
  const ccDir = join(work, "ccusage");
  const install = Bun.spawnSync(["npm", "install", "--prefix", ccDir, "--no-audit", "--no-fund", "--loglevel=error", CCUSAGE], { stdout: "pipe", stderr: "pipe" });
  if (install.exitCode !== 0) throw new Error(`npm install ${CCUSAGE}: ${install.stderr.toString()}`);
  const native = join(ccDir, `node_modules/@ccusage/ccusage-${process.platform}-${process.arch}/bin/ccusage`);
  chmodSync(native, 0o755); // npm's tarball leaves it 0644; ccusage's launcher does the same chmod
  const cc = [native, "daily", "--json", "--offline", "--timezone", "UTC"];
  console.log(`${CCUSAGE} installed in ${((performance.now() - t0) / 1000).toFixed(1)} s (native binary ${native.split("node_modules/")[1]})`);

  const bin = await ensureBuilt("quotas");
  const ours = [bin, "usage", "daily", "--json", "--timezone", "UTC"];

  // page cache warm for both: one untimed read of every log
  run(["sh", "-c", `cat $(find "${home}" -name '*.jsonl') > /dev/null`]);
  const ccCold = run(cc);
  const cold = run(ours);
  const warm = run(ours);

  console.log("\ntotals, all days:");
  const okCold = compare("cold", oursByDay(cold.out), ccByDay(ccCold.out));
  const expect = gen.input + gen.output + gen.cacheWrite + gen.cacheRead;
  const got = JSON.parse(cold.out).totals.total_tokens as number;
  console.log(`  generator's own count: ${expect} tokens, quotas ${got}: ${expect === got ? "equal" : "DIFFER"}`);

  // 1,000 lines appended: the 10 newest Claude sessions get 100 assistant lines each (new message ids)
  const claudeFiles = readdirSync(join(home, ".claude/projects"), { recursive: true, encoding: "utf8" }).filter((n) => n.endsWith(".jsonl")).map((n) => join(home, ".claude/projects", n)).slice(0, 10);
  const now = Date.now();
  claudeFiles.forEach((f, i) => {
    let text = "";
    for (let k = 0; k < 100; k++) {
      const ts = new Date(now - (i * 100 + k) * 1000).toISOString();
      text += JSON.stringify({ parentUuid: null, isSidechain: false, userType: "external", cwd: "/home/dev/project", sessionId: "appended", version: "2.0.14", gitBranch: "main", message: { id: `msg_append_${i}_${k}`, type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [{ type: "text", text: "appended" }], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 50, service_tier: "standard" } }, requestId: `req_append_${i}_${k}`, type: "assistant", uuid: `u${i}-${k}`, timestamp: ts }) + "\n";
    }
    appendFileSync(f, text);
  });
  const appended = run(ours);
  const ccAfter = run(cc);
  console.log("\ntotals after the append:");
  const okAfter = compare("after append", oursByDay(appended.out), ccByDay(ccAfter.out));

  const ref = ccCold.ms;
  const cpuRef = ccCold.cpuMs;
  const line = (label: string, r: Run, aim?: number) =>
    console.log(
      `  ${label.padEnd(38)} wall ${(r.ms / 1000).toFixed(3).padStart(7)} s = ${(r.ms / ref).toFixed(3)} ×   cpu ${(r.cpuMs / 1000).toFixed(3).padStart(7)} s = ${(r.cpuMs / cpuRef).toFixed(3)} ×   peak RSS ${r.rssMB.toFixed(0).padStart(4)} MB${aim !== undefined ? `   aim ≤ ${aim} × (wall) → ${r.ms / ref <= aim ? "met" : "NOT met"}` : ""}`,
    );
  const load = (await import("node:os")).loadavg().map((x) => x.toFixed(1)).join(" ");
  console.log(`\ntimes, one run each, page cache warm, ratios against ccusage's cold run (load average now ${load}):`);
  line("ccusage daily --json (reference)", ccCold);
  line("quotas usage daily --json, cold", cold, 0.5);
  line("quotas usage daily --json, warm", warm);
  line("quotas, after 1,000 appended lines", appended, 0.05);
  line("ccusage, after 1,000 appended lines", ccAfter);
  console.log(`\ntotals ${okCold && okAfter ? "agree" : "DISAGREE"} with ccusage`);

  // the prompt: {cost_today} comes from a file the refresh writes, so the prompt reads the same one file
  const { mkdirSync, writeFileSync } = await import("node:fs");
  mkdirSync(join(home, ".cache/quotas"), { recursive: true });
  const results = { "claude:default": { provider: "claude", profile: "default", name: "Claude", status: "available", plan: "max", windows: [{ window: "5h", used: 42, limit: 100, remaining: 58, unit: "percent", reset_at: new Date(now + 3_600_000).toISOString(), period_seconds: 18000 }], fetched_at: new Date(now).toISOString(), cached_at: null, auth_source: "~/.claude/.credentials.json" } };
  writeFileSync(join(home, ".cache/quotas/cache.json"), JSON.stringify({ version: 1, refreshed_at: new Date(now).toISOString(), results }));
  writeFileSync(join(home, ".cache/quotas/update.json"), JSON.stringify({ checked_at: new Date(now).toISOString(), current: "0.0.0", latest: "0.0.0" }));
  const sl = (format: string) => run(["bash", "--norc", "--noprofile", "-c", `t0=$EPOCHREALTIME; for ((k=0;k<100;k++)); do x=$("${bin}" --statusline --no-update-check --no-icons --format='${format}'); done; t1=$EPOCHREALTIME; echo "$x"; echo $t0 $t1`]);
  const perCall = (r: Run) => {
    const [t0s, t1s] = r.out.trim().split("\n").pop()!.split(" ");
    return ((Number(t1s) - Number(t0s)) * 1e6) / 100;
  };
  const plain: number[] = [];
  const withCost: number[] = [];
  let shown = "";
  for (let k = 0; k < 3; k++) {
    plain.push(perCall(sl("%provider %percent")));
    const w = sl("%provider %percent {cost_today}");
    withCost.push(perCall(w));
    shown = w.out.trim().split("\n")[0];
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1];
  console.log(`\nprompt: $(quotas --statusline) per call, median of 3 × 100: without {cost_today} ${(med(plain) / 1000).toFixed(2)} ms, with ${(med(withCost) / 1000).toFixed(2)} ms (${(med(withCost) / med(plain)).toFixed(3)} ×), line "${shown}"`);
  // the pre-rendered file: the prompt recipes read it with the shell itself; with {cost_today} it is a
  // few bytes longer, nothing else
  const { readFileSync } = await import("node:fs");
  mkdirSync(join(home, ".config/quotas"), { recursive: true });
  writeFileSync(join(home, ".config/quotas/config.toml"), '[statusline]\nformat = "%provider %percent {cost_today}"\nicons = false\n');
  run([bin, "usage"]); // writes usage-today.json and re-renders statusline.txt
  const withFile = join(home, ".cache/quotas/statusline.txt");
  const plainFile = join(work, "statusline-plain.txt");
  writeFileSync(plainFile, "Claude 42%\n");
  const fileLoop = run(["bash", "--norc", "--noprofile", "-c", `for r in 1 2 3 4 5; do for f in "${plainFile}" "${withFile}"; do t0=$EPOCHREALTIME; for ((k=0;k<2000;k++)); do x=$(<"$f"); done; t1=$EPOCHREALTIME; echo "$f $t0 $t1"; done; done`]);
  const per = new Map<string, number[]>();
  for (const row of fileLoop.out.trim().split("\n")) {
    const [f, a0, a1] = row.split(" ");
    per.set(f, [...(per.get(f) ?? []), ((Number(a1) - Number(a0)) * 1e6) / 2000]);
  }
  const m5 = (xs: number[]) => [...xs].sort((a, b) => a - b)[2];
  const pf = m5(per.get(plainFile)!);
  const wf = m5(per.get(withFile)!);
  console.log(`prompt: x=$(<statusline.txt) per prompt, median of 5 × 2000 in bash: "${readFileSync(plainFile, "utf8").trim()}" ${pf.toFixed(1)} µs, "${readFileSync(withFile, "utf8").trim()}" ${wf.toFixed(1)} µs (${(wf / pf).toFixed(3)} ×); no process either way`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
