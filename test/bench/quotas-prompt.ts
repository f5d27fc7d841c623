// Benchmark: what a shell prompt pays for the quotas line (run: bun test/bench/quotas-prompt.ts).
// Measured inside the shell itself, as a prompt runs it, all in one run and interleaved (so load from
// other processes falls on all alike), per prompt:
//   - `x=$(<statusline.txt)`            the pre-rendered file via command substitution (read
//                                        in-process by bash 5.2 and zsh: no fork)
//   - `IFS= read -r x < statusline.txt` the bash recipe's form, a builtin (zsh's read goes byte by
//                                        byte, so the zsh recipe uses $(<file))
//   - `x=$(quotas --statusline)`        the compiled executable, warm cache
//   - `x=$(hello)`                      the reference: a compiled Bun program that prints one line
// Aim: the file read ≤ 0.1 × the compiled hello.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt } from "../e2e/support";
import { compileHello, warmHome } from "./quotas-support";

const ROUNDS = 40;
const PER_ROUND = 25;
const bin = await ensureBuilt("quotas");
const work = mkdtempSync(join(tmpdir(), "quotas-prompt-bench-"));
const hello = compileHello(work);
const { h, env } = await warmHome(bin);
const file = join(h.home, ".cache/quotas/statusline.txt");
const line = readFileSync(file, "utf8").trimEnd();
const fromBinary = Bun.spawnSync([bin, "--statusline"], { env }).stdout.toString().trimEnd();
if (line !== fromBinary || !line.includes("Claude")) throw new Error(`file and --statusline differ:\n${line}\n${fromBinary}`);

const variants: [string, string][] = [
  ["$(<statusline.txt)", `x=$(<"${file}")`],
  ["read -r < statusline.txt", `IFS= read -r x < "${file}"`],
  ["$(quotas --statusline)", `x=$("${bin}" --statusline)`],
  ["$(hello)", `x=$("${hello}")`],
];

/** Per-prompt cost of each variant in one shell, in microseconds, ROUNDS interleaved rounds. */
function measure(shell: "bash" | "zsh"): Map<string, number[]> {
  const body = variants
    .map(([label, cmd], i) => `  t0=$EPOCHREALTIME; for ((k=0;k<${PER_ROUND};k++)); do ${cmd}; done; t1=$EPOCHREALTIME; echo "${i} $t0 $t1"`)
    .join("\n");
  const script = `${shell === "zsh" ? "zmodload zsh/datetime\n" : ""}for ((r=0;r<${ROUNDS + 3};r++)); do\n${body}\ndone\n`;
  const p = Bun.spawnSync([shell, ...(shell === "bash" ? ["--norc", "--noprofile"] : ["-f"]), "-c", script], { env, stdout: "pipe", stderr: "inherit" });
  const out = new Map<string, number[]>(variants.map(([l]) => [l, []]));
  const rows = p.stdout.toString().trim().split("\n");
  rows.forEach((row, n) => {
    if (n < 3 * variants.length) return; // three warm-up rounds
    const [i, t0, t1] = row.split(" ");
    out.get(variants[Number(i)][0])!.push(((Number(t1) - Number(t0)) * 1e6) / PER_ROUND);
  });
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const us = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${x.toFixed(1)} µs`);

console.log(`prompt cost per prompt, median of ${ROUNDS} interleaved rounds of ${PER_ROUND} (the statusline: ${line.length} chars, 12 providers)`);
for (const shell of ["bash", "zsh"] as const) {
  if (!Bun.which(shell)) {
    console.log(`  ${shell}: not installed`);
    continue;
  }
  const m = measure(shell);
  const ref = median(m.get("$(hello)")!);
  console.log(`  ${shell}`);
  for (const [label] of variants) {
    const x = median(m.get(label)!);
    console.log(`    ${label.padEnd(26)} ${us(x).padStart(10)}   ${(x / ref).toFixed(3)} × hello`);
  }
  const file = median(m.get("$(<statusline.txt)")!);
  console.log(`    aim: $(<statusline.txt) ≤ 0.1 × hello → ${(file / ref).toFixed(3)} ${file / ref <= 0.1 ? "met" : "NOT met"}`);
}

h.cleanup();
rmSync(work, { recursive: true, force: true });
