// What the npm package's Node launcher costs a prompt (run: bun test/bench/quotas-launcher.ts).
// `npm install -g quotas` with install scripts makes the command the native executable (install.cjs
// links it); with --ignore-scripts the command stays bin/quotas, a Node script that starts it. This lays
// out both as npm would (the main package and the platform package in node_modules) and times
// `quotas --statusline` (warm cache) each way, interleaved so load falls on both alike.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostTarget } from "../../src/kernel/targets";
import { writeNpmPackages } from "../../src/quotas/npm-package";
import { ensureBuilt } from "../e2e/support";
import { warmHome } from "./quotas-support";

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const bin = await ensureBuilt("quotas");
const work = mkdtempSync(join(tmpdir(), "quotas-launcher-bench-"));
const target = hostTarget()!;
writeNpmPackages([{ target, binary: bin }], join(work, "packages"), "0.0.0-bench");
const modules = join(work, "node_modules");
cpSync(join(work, "packages/quotas"), join(modules, "quotas"), { recursive: true });
cpSync(join(work, `packages/quotas-${target.name}`), join(modules, `@quotas/${target.name}`), { recursive: true });
const launcher = join(modules, "quotas/bin/quotas");
const native = join(modules, `@quotas/${target.name}/bin/quotas`);
const { h, env } = await warmHome(bin);

const direct: number[] = [];
const viaNode: number[] = [];
for (let i = 0; i < ROUNDS + 5; i++) {
  for (const [cmd, out] of (i % 2 ? [[launcher, viaNode], [native, direct]] : [[native, direct], [launcher, viaNode]]) as [string, number[]][]) {
    const t = performance.now();
    const r = Bun.spawnSync([cmd, "--statusline", "--no-update-check"], { env, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${cmd}: ${r.stderr}`);
    if (i >= 5) out.push(performance.now() - t);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const [d, n] = [median(direct), median(viaNode)];
console.log(`quotas --statusline, ${ROUNDS} interleaved runs (medians):`);
console.log(`  the executable itself (install scripts ran):  ${d.toFixed(1)} ms`);
console.log(`  through the Node launcher (--ignore-scripts): ${n.toFixed(1)} ms   +${(n - d).toFixed(1)} ms, ratio ${(n / d).toFixed(2)}×`);
h.cleanup();
rmSync(work, { recursive: true, force: true });
